// The shared chart helpers of sim/report/chart/: nice axis ticks (linear, powers of 2, 1-2-5 per
// decade) and their labels, distinct series styles, legend layout and escaped text.
#include <gtest/gtest.h>

#include <set>
#include <utility>

#include "sim/report/chart/chart_axis.h"
#include "sim/report/chart/chart_legend.h"
#include "sim/report/chart/series_style.h"
#include "sim/report/chart/svg_text.h"

namespace placesim {
namespace {

std::vector<std::string> labels(const ChartAxis& axis) {
  std::vector<std::string> out;
  for (double t : axis.ticks()) out.push_back(axis.label(t));
  return out;
}

TEST(ChartAxis, LinearAxisEndsAtTheNiceTickAboveTheData) {
  // 16 / 5 intervals = 3.2, rounded up to a 1-2-5 step: 5; the axis ends at ceil(16 / 5) x 5 = 20.
  const ChartAxis devices(0, 16, AxisScale::kLinear);
  EXPECT_EQ(labels(devices), (std::vector<std::string>{"0", "5", "10", "15", "20"}));
  // 0.47 / 5 = 0.094 -> step 0.1; ceil(0.47 / 0.1) = 5 -> 0 to 0.5, one decimal.
  const ChartAxis fraction(0, 0.47, AxisScale::kLinear);
  EXPECT_EQ(labels(fraction), (std::vector<std::string>{"0", "0.1", "0.2", "0.3", "0.4", "0.5"}));
  EXPECT_DOUBLE_EQ(fraction.high(), 0.5);
  EXPECT_DOUBLE_EQ(fraction.fraction(0.25), 0.5);
}

TEST(ChartAxis, AxisNotFromZeroStartsAtTheNiceTickBelowTheData) {
  // Losses 0.2537 to 0.69: (0.69 - 0.2537) / 5 = 0.087 -> step 0.1; floor(2.537) = 2 -> 0.2,
  // ceil(6.9) = 7 -> 0.7. No tick at an odd value such as 0.256 or 0.475.
  const ChartAxis loss(0.2537, 0.69, AxisScale::kLinear, false);
  EXPECT_EQ(labels(loss), (std::vector<std::string>{"0.2", "0.3", "0.4", "0.5", "0.6", "0.7"}));
}

TEST(ChartAxis, LargeValuesUseThousandsSuffixesAndStepDecimals) {
  // 23,000 / 5 = 4,600 -> step 5,000 -> 0 to 25,000, printed in thousands.
  const ChartAxis throughput(0, 23000, AxisScale::kLinear);
  EXPECT_EQ(labels(throughput), (std::vector<std::string>{"0", "5k", "10k", "15k", "20k", "25k"}));
  // 0.9 / 5 = 0.18 -> step 0.2; 0 to 1.0.
  EXPECT_EQ(labels(ChartAxis(0, 0.9, AxisScale::kLinear)), (std::vector<std::string>{"0", "0.2", "0.4", "0.6", "0.8", "1.0"}));
}

TEST(ChartAxis, DeviceCountsOnPowersOfTwoEndAtTheLargestCount) {
  // 1 to 16 devices: 2^0 .. 2^4, not a decade axis to 100.
  const ChartAxis devices(1, 16, AxisScale::kLog2);
  EXPECT_EQ(labels(devices), (std::vector<std::string>{"1", "2", "4", "8", "16"}));
  EXPECT_DOUBLE_EQ(devices.high(), 16);
  EXPECT_DOUBLE_EQ(devices.fraction(4), 0.5);  // log2(4) / log2(16)
  // 12 devices: the axis ends at the next power of two, 16.
  EXPECT_DOUBLE_EQ(ChartAxis(1, 12, AxisScale::kLog2).high(), 16);
  // 1 to 1024 = 2^10: 11 powers, more than 8, so every other one: 1, 4, 16, 64, 256, 1024.
  EXPECT_EQ(labels(ChartAxis(1, 1024, AxisScale::kLog2)),
            (std::vector<std::string>{"1", "4", "16", "64", "256", "1024"}));
}

TEST(ChartAxis, DecadeAxisUsesOneTwoFiveWithinThreeDecades) {
  // 0.3 to 40 hours: the largest of 1-2-5 x 10^k at or below 0.3 is 0.2; the smallest at or
  // above 40 is 50.
  EXPECT_EQ(labels(ChartAxis(0.3, 40, AxisScale::kLog10)),
            (std::vector<std::string>{"0.2", "0.5", "1", "2", "5", "10", "20", "50"}));
  // 3 to 30,000 spans four decades: powers of ten only, 1 to 100,000.
  EXPECT_EQ(labels(ChartAxis(3, 30000, AxisScale::kLog10)), (std::vector<std::string>{"1", "10", "100", "1000", "10k", "100k"}));
}

TEST(ChartAxis, NarrowDecadeAxisGetsLinearSteps) {
  // $55 to $95: 1-2-5 ticks would be 50 and 100 only; (95 - 55) / 5 = 8 -> step 10, from
  // floor(5.5) x 10 = 50 to ceil(9.5) x 10 = 100.
  EXPECT_EQ(labels(ChartAxis(55, 95, AxisScale::kLog10)),
            (std::vector<std::string>{"50", "60", "70", "80", "90", "100"}));
}

TEST(ChartAxis, ASingleValueStillGetsTwoTicks) {
  EXPECT_GE(ChartAxis(5, 5, AxisScale::kLinear).ticks().size(), 2u);
  EXPECT_GE(ChartAxis(8, 8, AxisScale::kLog2).ticks().size(), 2u);
  EXPECT_GE(ChartAxis(0, 0, AxisScale::kLinear).ticks().size(), 2u);
}

TEST(SeriesStyle, TheFirstSixtySeriesHaveDistinctColourAndMarkerPairs) {
  // Colour i mod 10, marker (i + floor(i / 10)) mod 6: series i and i + 10k (k = 1..5) share a
  // colour but their markers differ by 11k mod 6 = 5k mod 6, never 0 for k < 6.
  std::set<std::pair<std::string, MarkerShape>> seen;
  for (size_t i = 0; i < kSeriesColors * kMarkerShapes; ++i) {
    const SeriesStyle style = series_style(i);
    EXPECT_TRUE(seen.insert({style.color, style.marker}).second) << "series " << i;
  }
  // Consecutive series differ in both colour and marker.
  for (size_t i = 0; i + 1 < 60; ++i) {
    EXPECT_NE(series_style(i).color, series_style(i + 1).color);
    EXPECT_NE(series_style(i).marker, series_style(i + 1).marker);
  }
}

TEST(SvgText, EscapesTheTextAndEstimatesWidthPerCharacter) {
  EXPECT_EQ(svg_text(1, 2, "<b>&"), "<text x=\"1.00\" y=\"2.00\" font-size=\"12\">&lt;b&gt;&amp;</text>");
  // "ab" at 10 px: two lowercase letters of 0.64 em each.
  EXPECT_DOUBLE_EQ(text_width("ab", 10), 12.8);
  EXPECT_GT(text_width("exposed communication", 12), text_width("bubble", 12));
}

TEST(ChartLegend, WrapsEntriesAtTheGivenWidthAndNamesEachSeries) {
  // Each entry: a 24-unit symbol plus its label ("aaaa" at 10 px = 4 x 6.4 = 25.6): 49.6 wide,
  // 16 apart; two fit in 120 (49.6 + 16 + 49.6 = 115.2), the third wraps: 2 rows of 15.
  std::vector<LegendEntry> entries;
  for (const char* name : {"aaaa", "bbbb", "cccc"}) entries.push_back({name, series_style(entries.size()), LegendSymbol::kMarker, name});
  const ChartLegend legend(entries, 120, 10);
  EXPECT_NEAR(legend.width(), 115.2, 1e-9);
  EXPECT_NEAR(legend.height(), 30, 1e-9);
  const std::string svg = legend.render(0, 0);
  EXPECT_NE(svg.find("data-series=\"cccc\""), std::string::npos);
  EXPECT_NE(svg.find("data-marker=\"triangle\""), std::string::npos);  // series 2
}

}  // namespace
}  // namespace placesim
