// SVG charts: escaping, tick choice, where points land, empty series and data-series markers.
#include "report/svg.h"

#include <gtest/gtest.h>

#include <cmath>
#include <regex>
#include <string>
#include <vector>

#include "report/count.h"

namespace hetsched::report {
namespace {

using testing::Count;

TEST(EscapeXml, EscapesTheFiveSpecialCharacters) {
  EXPECT_EQ(EscapeXml("a<b>&\"c\"'d'"), "a&lt;b&gt;&amp;&quot;c&quot;&#39;d&#39;");
  EXPECT_EQ(EscapeXml("plain text 1.5"), "plain text 1.5");
  EXPECT_EQ(EscapeXml(""), "");
}

TEST(NiceTicks, RoundStepsCoveringTheRange) {
  EXPECT_EQ(NiceTicks(0, 100, 5), (std::vector<double>{0, 20, 40, 60, 80, 100}));
  // 7.3 / 5 = 1.46 -> step 2, last tick at or above the top.
  EXPECT_EQ(NiceTicks(0, 7.3, 5), (std::vector<double>{0, 2, 4, 6, 8}));
  EXPECT_EQ(NiceTicks(0, 24, 8), (std::vector<double>{0, 5, 10, 15, 20, 25}));
  // 10 / 4 = 2.5 -> step 2.5.
  EXPECT_EQ(NiceTicks(0, 10, 4), (std::vector<double>{0, 2.5, 5, 7.5, 10}));
}

TEST(NiceTicks, DegenerateRanges) {
  const std::vector<double> one = NiceTicks(3, 3, 5);
  ASSERT_GE(one.size(), 2u);
  EXPECT_LE(one.front(), 3);
  EXPECT_GE(one.back(), 3);
  const std::vector<double> zero = NiceTicks(0, 0, 5);
  ASSERT_GE(zero.size(), 2u);
  EXPECT_EQ(zero.front(), 0);
  EXPECT_TRUE(NiceTicks(0, NAN, 5).empty());
  EXPECT_TRUE(NiceTicks(-INFINITY, 1, 5).empty());
  // Reversed bounds are swapped.
  EXPECT_EQ(NiceTicks(100, 0, 5), NiceTicks(0, 100, 5));
}

TEST(TickLabel, DecimalsFollowTheStep) {
  EXPECT_EQ(TickLabel(20, 20), "20");
  EXPECT_EQ(TickLabel(7.5, 2.5), "7.5");
  EXPECT_EQ(TickLabel(0.3, 0.1), "0.3");
  EXPECT_EQ(TickLabel(-0.0, 1), "0");
}

LineChartSpec TwoPointChart() {
  LineChartSpec spec;
  spec.id = "c1";
  spec.title = "Title";
  spec.x_label = "time (h)";
  spec.y_label = "busy (%)";
  spec.y_max = 100;
  spec.width = 900;
  spec.height = 300;
  spec.series.push_back({"a", "#76b900", {0, 10}, {0, 100}, false, false});
  return spec;
}

TEST(LineChart, PointsLandOnThePlotArea) {
  // Plot area: left 64, right 20 -> 816 px wide; top 34, bottom 42 -> 224 px high.
  // (0, 0) is the bottom-left corner (64, 258); (10, 100) the top-right (880, 34).
  const std::string svg = LineChart(TwoPointChart());
  EXPECT_NE(svg.find("points=\"64,258 880,34\""), std::string::npos) << svg;
}

TEST(LineChart, AxesCarryTicksAndUnits) {
  const std::string svg = LineChart(TwoPointChart());
  for (const char* tick : {">0<", ">20<", ">40<", ">60<", ">80<", ">100<"}) {
    EXPECT_NE(svg.find(tick), std::string::npos) << tick;
  }
  EXPECT_NE(svg.find(">time (h)<"), std::string::npos);
  EXPECT_NE(svg.find(">busy (%)<"), std::string::npos);
  EXPECT_NE(svg.find("data-chart=\"c1\""), std::string::npos);
  EXPECT_EQ(Count(svg, "data-series="), 1);
  EXPECT_EQ(svg.rfind("</svg>\n"), svg.size() - 7);
}

TEST(LineChart, StepSeriesHoldsTheValueUntilTheNextSample) {
  LineChartSpec spec = TwoPointChart();
  spec.series[0].step = true;
  const std::string svg = LineChart(spec);
  // Horizontal to x = 10 at the old value, then up.
  EXPECT_NE(svg.find("points=\"64,258 880,258 880,34\""), std::string::npos) << svg;
}

TEST(LineChart, NamesAreEscaped) {
  LineChartSpec spec = TwoPointChart();
  spec.title = "a <b> & c";
  spec.series[0].name = "<script>alert(1)</script>";
  const std::string svg = LineChart(spec);
  EXPECT_EQ(svg.find("<script>"), std::string::npos);
  EXPECT_NE(svg.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  EXPECT_NE(svg.find("a &lt;b&gt; &amp; c"), std::string::npos);
}

TEST(LineChart, EmptySeriesIsMarkedAndNamedInTheLegend) {
  LineChartSpec spec = TwoPointChart();
  spec.series.push_back({"idle", "#d62728", {}, {}, false, false});
  const std::string svg = LineChart(spec);
  EXPECT_NE(svg.find("data-series=\"idle\" data-empty=\"true\""), std::string::npos);
  EXPECT_NE(svg.find("idle (no data)"), std::string::npos);
  EXPECT_EQ(svg.find(">no data<"), std::string::npos);  // the other series has data
}

TEST(LineChart, NoSeriesAtAllSaysNoData) {
  LineChartSpec spec = TwoPointChart();
  spec.series.clear();
  const std::string svg = LineChart(spec);
  EXPECT_NE(svg.find(">no data<"), std::string::npos);
  EXPECT_EQ(Count(svg, "data-series="), 0);
}

TEST(LineChart, ALoneSampleIsDrawnAsADot) {
  LineChartSpec spec = TwoPointChart();
  spec.series[0].x = {5};
  spec.series[0].y = {50};
  const std::string svg = LineChart(spec);
  EXPECT_NE(svg.find("<circle"), std::string::npos);
}

TEST(LineChart, ValuesAboveTheFixedMaximumAreClamped) {
  LineChartSpec spec = TwoPointChart();
  spec.series[0].y = {0, 250};  // y_max is 100
  const std::string svg = LineChart(spec);
  EXPECT_NE(svg.find("points=\"64,258 880,34\""), std::string::npos);
}

GanttSpec SmallGantt() {
  GanttSpec spec;
  spec.id = "g";
  spec.title = "Jobs";
  spec.x_label = "time (h)";
  spec.rows = {"node-a", "node-<b>"};
  spec.series = {{"a100-80g", "#76b900"}, {"mi250x", "#d62728"}, {"failed", "#1d2733"}};
  spec.bars = {{0, 0, 10, 0, "job 1", false}, {1, 5, 5.001, 1, "job 2", false}};
  spec.x_max = 10;
  spec.width = 900;
  return spec;
}

TEST(GanttChart, BarsScaleToTheTimeAxis) {
  const std::string svg = GanttChart(SmallGantt());
  // The longest row name, "node-<b>" (8 characters at 11 px, 0.58 em each), is 51.04 px: left
  // margin 65.04, plot 900 - 65.04 - 20 = 814.96 px; the bar over [0, 10] fills it.
  EXPECT_NE(svg.find("<rect x=\"65\" y=\"36\" width=\"815\" height=\"10\""), std::string::npos)
      << svg;
  // A run of 3.6 seconds on a 10 h axis is still a pixel wide.
  EXPECT_NE(svg.find("width=\"1\" height=\"10\""), std::string::npos);
}

TEST(GanttChart, SeriesGroupsAndEscapedRows) {
  const std::string svg = GanttChart(SmallGantt());
  EXPECT_NE(svg.find("<g data-series=\"a100-80g\""), std::string::npos);
  EXPECT_NE(svg.find("<g data-series=\"mi250x\""), std::string::npos);
  EXPECT_NE(svg.find("data-series=\"failed\" data-empty=\"true\""), std::string::npos);
  EXPECT_NE(svg.find("node-&lt;b&gt;"), std::string::npos);
  EXPECT_EQ(svg.find("node-<b>"), std::string::npos);
  EXPECT_NE(svg.find("<title>job 1</title>"), std::string::npos);
}

TEST(GanttChart, BarsOnUnknownRowsAreDropped) {
  GanttSpec spec = SmallGantt();
  spec.bars.push_back({7, 0, 1, 0, "ghost", false});
  EXPECT_EQ(GanttChart(spec).find("ghost"), std::string::npos);
}

TEST(GanttChart, NoBarsSaysNoData) {
  GanttSpec spec = SmallGantt();
  spec.bars.clear();
  EXPECT_NE(GanttChart(spec).find(">no data<"), std::string::npos);
}

TEST(BarChart, LabelsCarryValuesAndUnits) {
  BarChartSpec spec;
  spec.id = "b";
  spec.title = "Energy";
  spec.unit = " kWh";
  spec.decimals = 0;
  spec.categories = {""};
  spec.series = {{"baseline", "#888", {1200}}, {"hetsched", "#1f77b4", {600}}};
  const std::string svg = BarChart(spec);
  EXPECT_NE(svg.find(">1200 kWh<"), std::string::npos);
  EXPECT_NE(svg.find(">600 kWh<"), std::string::npos);
  // The larger value spans the plot; the other is half as long.
  std::smatch m;
  const std::regex widths("<rect x=\"[0-9.]+\" y=\"[0-9.]+\" width=\"([0-9.]+)\" height=\"14\"");
  std::vector<double> w;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), widths); it != std::sregex_iterator();
       ++it) {
    w.push_back(std::stod((*it)[1]));
  }
  ASSERT_EQ(w.size(), 2u);
  EXPECT_NEAR(w[1] / w[0], 0.5, 0.01);
  EXPECT_EQ(Count(svg, "data-series="), 2);
}

TEST(BarChart, NotANumberIsShownAsNA) {
  BarChartSpec spec;
  spec.id = "b";
  spec.categories = {"cpu"};
  spec.series = {{"x", "#888", {NAN}}};
  EXPECT_NE(BarChart(spec).find(">n/a<"), std::string::npos);
}

}  // namespace
}  // namespace hetsched::report
