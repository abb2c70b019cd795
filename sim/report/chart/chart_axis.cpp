#include "sim/report/chart/chart_axis.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace placesim {
namespace {

constexpr int kTargetTicks = 5;
constexpr int kMostLogTicks = 8;  // beyond this, every other power of 2 is labelled
constexpr double kEpsilon = 1e-9;  // relative: a value within it of a tick counts as on the tick

}  // namespace

double nice_step(double range, int target_ticks) {
  if (!(range > 0) || !std::isfinite(range)) return 1;
  const double raw = range / target_ticks;
  const double magnitude = std::pow(10, std::floor(std::log10(raw)));
  const double mantissa = raw / magnitude;
  for (double nice : {1.0, 2.0, 5.0}) {
    if (mantissa <= nice * (1 + kEpsilon)) return nice * magnitude;
  }
  return 10 * magnitude;
}

ChartAxis::ChartAxis(double min_value, double max_value, AxisScale scale, bool from_zero) : scale_(scale) {
  if (scale == AxisScale::kLinear) linear(min_value, max_value, from_zero);
  else if (scale == AxisScale::kLog2) log2(min_value, max_value);
  else log10(min_value, max_value);
}

void ChartAxis::linear(double min_value, double max_value, bool from_zero) {
  if (!std::isfinite(min_value) || !std::isfinite(max_value)) min_value = 0, max_value = 1;
  if (from_zero) min_value = std::min(min_value, 0.0), max_value = std::max(max_value, 0.0);
  if (max_value - min_value <= kEpsilon * std::max(1.0, std::fabs(max_value))) {
    const double pad = max_value == 0 ? 1 : std::fabs(max_value) / 2;
    max_value += pad;
    if (!from_zero || min_value < 0) min_value -= pad;
  }
  step_ = nice_step(max_value - min_value, kTargetTicks);
  const long first = static_cast<long>(std::floor(min_value / step_ + kEpsilon));
  const long last = static_cast<long>(std::ceil(max_value / step_ - kEpsilon));
  for (long k = first; k <= last; ++k) ticks_.push_back(static_cast<double>(k) * step_);
  low_ = ticks_.front(), high_ = ticks_.back();
}

void ChartAxis::log2(double min_value, double max_value) {
  min_value = std::max(min_value, 1e-300), max_value = std::max(max_value, min_value);
  int first = static_cast<int>(std::floor(std::log2(min_value) + kEpsilon));
  int last = static_cast<int>(std::ceil(std::log2(max_value) - kEpsilon));
  if (last == first) ++last;
  const int stride = (last - first) / kMostLogTicks + 1;
  last = first + (last - first + stride - 1) / stride * stride;
  for (int k = first; k <= last; k += stride) ticks_.push_back(std::ldexp(1.0, k));
  low_ = ticks_.front(), high_ = ticks_.back();
}

void ChartAxis::log10(double min_value, double max_value) {
  min_value = std::max(min_value, 1e-300), max_value = std::max(max_value, min_value);
  const int first = static_cast<int>(std::floor(std::log10(min_value) + kEpsilon));
  const int last = static_cast<int>(std::ceil(std::log10(max_value) - kEpsilon));
  // Over three decades, only powers of ten; otherwise 1, 2 and 5 of each decade.
  const bool dense = last - first <= 3;
  std::vector<double> candidates;
  for (int k = first; k <= std::max(last, first + 1); ++k) {
    for (double m : {1.0, 2.0, 5.0}) {
      if (dense || m == 1.0) candidates.push_back(m * std::pow(10, k));
    }
  }
  // The largest candidate at or below the data, to the smallest at or above it.
  size_t lo = 0, hi = candidates.size() - 1;
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (candidates[i] <= min_value * (1 + kEpsilon)) lo = i;
  }
  for (size_t i = candidates.size(); i-- > 0;) {
    if (candidates[i] >= max_value * (1 - kEpsilon)) hi = i;
  }
  if (hi <= lo) hi = std::min(lo + 1, candidates.size() - 1);
  ticks_.assign(candidates.begin() + static_cast<long>(lo), candidates.begin() + static_cast<long>(hi) + 1);
  // Data within a factor of about 2 get linear ticks on the log scale (50, 60, ... 100).
  if (ticks_.size() < 4 && min_value > 0) {
    step_ = nice_step(max_value - min_value, kTargetTicks);
    const double first_tick = std::floor(min_value / step_ + kEpsilon) * step_;
    if (first_tick > 0 && max_value > min_value) {
      ticks_.clear();
      const long last_k = static_cast<long>(std::ceil(max_value / step_ - kEpsilon));
      for (long k = static_cast<long>(std::llround(first_tick / step_)); k <= last_k; ++k) {
        ticks_.push_back(static_cast<double>(k) * step_);
      }
      linear_steps_ = true;
    }
  }
  low_ = ticks_.front(), high_ = ticks_.back();
}

double ChartAxis::fraction(double value) const {
  double f;
  if (scale_ == AxisScale::kLinear) {
    f = (value - low_) / (high_ - low_);
  } else {
    f = (std::log(std::max(value, low_)) - std::log(low_)) / (std::log(high_) - std::log(low_));
  }
  return std::clamp(f, 0.0, 1.0);
}

std::string ChartAxis::label(double tick) const {
  if (std::fabs(tick) < 1e-12 * std::max(1.0, std::fabs(high_))) return "0";
  // A linear axis prints every tick in the unit of its largest (0, 5k, 10k); a log axis each in
  // its own (100, 1000, 10k).
  const double magnitude = scale_ == AxisScale::kLinear || linear_steps_ ? std::max(std::fabs(low_), std::fabs(high_)) : std::fabs(tick);
  double scaled = tick, step = scale_ == AxisScale::kLinear || linear_steps_ ? step_ : tick;
  const char* suffix = "";
  if (magnitude >= 1e9) scaled /= 1e9, step /= 1e9, suffix = "G";
  else if (magnitude >= 1e6) scaled /= 1e6, step /= 1e6, suffix = "M";
  else if (magnitude >= 1e4) scaled /= 1e3, step /= 1e3, suffix = "k";
  // Decimals: enough for the step (0.25 -> 2); a log tick needs its own (0.002 -> 3).
  int decimals = static_cast<int>(std::clamp(-std::floor(std::log10(std::fabs(step)) + kEpsilon), 0.0, 12.0));
  while (decimals < 12 && std::fabs(step * std::pow(10, decimals) - std::round(step * std::pow(10, decimals))) > 1e-6) {
    ++decimals;
  }
  char buffer[48];
  std::snprintf(buffer, sizeof buffer, "%.*f%s", decimals, scaled, suffix);
  return buffer;
}

}  // namespace placesim
