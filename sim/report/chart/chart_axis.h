// ChartAxis: the range and tick values of one chart axis, chosen so that the axis ends at "nice"
// tick values just around the data (linear: steps of 1, 2 or 5 x 10^k; logarithmic: powers of 2
// for counts, 1-2-5 per decade otherwise, linear steps when the data span less than about a
// factor of 2), and the tick labels printed with the step's decimals.
#pragma once

#include <string>
#include <vector>

namespace placesim {

/// How values map to positions: linearly, or by their logarithm with base-2 or decade ticks.
enum class AxisScale { kLinear, kLog2, kLog10 };

/// One axis: its range, ticks and tick labels.
class ChartAxis {
 public:
  /// An axis covering [min_value, max_value]. Linear axes start at 0 when `from_zero` (and the
  /// data are not negative); log axes ignore values <= 0. An empty or single-value range is
  /// widened so that the axis still has two ticks.
  ChartAxis(double min_value, double max_value, AxisScale scale, bool from_zero = true);

  double low() const { return low_; }
  double high() const { return high_; }
  /// Tick values, low() first and high() last.
  const std::vector<double>& ticks() const { return ticks_; }
  /// Where `value` falls between low() (0) and high() (1), clamped.
  double fraction(double value) const;
  /// The tick's label: as many decimals as the step needs, thousands as k, millions as M.
  std::string label(double tick) const;

 private:
  void linear(double min_value, double max_value, bool from_zero);
  void log2(double min_value, double max_value);
  void log10(double min_value, double max_value);

  AxisScale scale_;
  double low_ = 0, high_ = 1;
  double step_ = 1;  ///< linear step (for the labels' decimals)
  bool linear_steps_ = false;  ///< a log axis over a narrow range, ticked in linear steps
  std::vector<double> ticks_;
};

/// The nice step for about `target_ticks` intervals over `range`: range / target_ticks rounded
/// up to 1, 2 or 5 x 10^k.
double nice_step(double range, int target_ticks);

}  // namespace placesim
