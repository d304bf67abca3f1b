// SVG charts for the HTML reports: line charts over time, Gantt charts and bar charts, written as
// inline <svg> text with axes, units and a legend. Pure functions from data to markup.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace hetsched::report {

// Escapes &, <, >, " and ' so that `text` is safe inside XML/HTML text and attribute values.
std::string EscapeXml(std::string_view text);

// Up to about `target` round tick values (steps of 1, 2, 2.5 or 5 times a power of ten)
// covering [lo, hi]. lo == hi widens the range; NaN or infinite bounds give {}.
std::vector<double> NiceTicks(double lo, double hi, int target);

// A tick label: integers without decimals, others with the fewest decimals the step needs.
std::string TickLabel(double value, double step);

// The opening <svg> tag of a chart (data-chart="<id>", fonts, size) with its title drawn at the
// top left; for charts drawn outside this file. Close it with "</svg>\n".
std::string SvgChartStart(const std::string& id, const std::string& title, int width,
                          double height);

// Every chart carries data-chart="<id>" and each series a <g data-series="<name>"> around its
// marks, so the report's self-check script (report/html.h) can measure that each drew.
// A series without points is drawn as data-empty="true" and shown as "(no data)" in the legend.

struct LineSeries {
  std::string name;
  std::string color;      // CSS colour, e.g. "#76b900"
  std::vector<double> x;  // same length as y
  std::vector<double> y;
  bool dashed = false;
  bool step = false;  // draw as a step function (value holds until the next sample)
};

struct LineChartSpec {
  std::string id;  // unique on the page; letters, digits and '-'
  std::string title;
  std::string x_label;  // with its unit, e.g. "time (h)"
  std::string y_label;  // e.g. "busy devices (%)"
  std::vector<LineSeries> series;
  double y_min = 0;
  double y_max = 0;  // 0: from the data (at least y_min + 1)
  double x_max = 0;  // 0: from the data; set it to share one time axis between charts
  int width = 900;
  int height = 300;
};

std::string LineChart(const LineChartSpec& spec);

struct GanttBar {
  int row = 0;  // index into GanttSpec::rows
  double start = 0;
  double end = 0;
  int series = 0;         // index into GanttSpec::series (its colour and legend entry)
  std::string tooltip;    // shown on hover (<title>)
  bool outlined = false;  // drawn with a dark outline (e.g. a failed run)
};

struct GanttSeries {
  std::string name;
  std::string color;
};

struct GanttSpec {
  std::string id;
  std::string title;
  std::string x_label;
  std::vector<std::string> rows;  // one lane per row, top to bottom
  std::vector<GanttSeries> series;
  std::vector<GanttBar> bars;
  double x_max = 0;  // 0: from the data
  int width = 900;
};

// Height follows the number of rows.
std::string GanttChart(const GanttSpec& spec);

struct BarSeries {
  std::string name;
  std::string color;
  std::vector<double> values;  // one per category
};

struct BarChartSpec {
  std::string id;
  std::string title;
  std::string unit;                     // shown after each value label, e.g. "%" or " kWh"
  std::vector<std::string> categories;  // groups along the vertical axis
  std::vector<BarSeries> series;        // bars within each group
  int decimals = 1;
  int width = 430;
};

// Horizontal grouped bars starting at zero, each labelled with its value.
std::string BarChart(const BarChartSpec& spec);

}  // namespace hetsched::report
