#include "report/svg.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace hetsched::report {
namespace {

// Rough width of a 12 px sans-serif label; enough to lay out legends and margins.
double TextWidth(std::string_view text, double px = 12) {
  return 0.58 * px * static_cast<double>(text.size());
}

std::string Num(double v) {
  std::string s = fmt::format("{:.1f}", v);
  if (s.ends_with(".0")) s.resize(s.size() - 2);
  return s == "-0" ? "0" : s;
}

std::string SvgOpen(const std::string& id, const std::string& title, int width, double height) {
  return SvgChartStart(id, title, width, height);
}

struct LegendItem {
  std::string name;
  std::string color;
  bool dashed = false;
  bool empty = false;
  bool line = false;  // a line sample (line charts) instead of a filled swatch
};

// Legend entries laid out left to right from (x0, y0), wrapping at `width`. Returns the markup
// and sets `rows` to the number of lines used.
std::string Legend(const std::vector<LegendItem>& items, double x0, double y0, double width,
                   int& rows) {
  std::string out = "<g class=\"legend\">\n";
  double x = x0, y = y0;
  rows = items.empty() ? 0 : 1;
  for (const LegendItem& it : items) {
    const std::string label = it.empty ? it.name + " (no data)" : it.name;
    const double w = 22 + TextWidth(label) + 18;
    if (x + w > x0 + width && x > x0) {
      x = x0;
      y += 18;
      ++rows;
    }
    if (it.line) {
      out += fmt::format(
          "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"2.5\"{}/>",
          Num(x), Num(y - 4), Num(x + 16), Num(y - 4), EscapeXml(it.color),
          it.dashed ? " stroke-dasharray=\"5 3\"" : "");
    } else {
      out +=
          fmt::format("<rect x=\"{}\" y=\"{}\" width=\"16\" height=\"10\" rx=\"2\" fill=\"{}\"/>",
                      Num(x), Num(y - 9), EscapeXml(it.color));
    }
    out += fmt::format("<text x=\"{}\" y=\"{}\" fill=\"{}\">{}</text>\n", Num(x + 22), Num(y),
                       it.empty ? "#8a949e" : "#1d2733", EscapeXml(label));
    x += w;
  }
  out += "</g>\n";
  return out;
}

std::string NoData(double cx, double cy) {
  return fmt::format(
      "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#8a949e\" font-size=\"14\">no "
      "data</text>\n",
      Num(cx), Num(cy));
}

double TickStep(const std::vector<double>& ticks) {
  return ticks.size() >= 2 ? ticks[1] - ticks[0] : 1;
}

}  // namespace

std::string EscapeXml(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string SvgChartStart(const std::string& id, const std::string& title, int width,
                          double height) {
  return fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" data-chart=\"{0}\" "
      "viewBox=\"0 0 {1} {2}\" width=\"{1}\" height=\"{2}\" role=\"img\" aria-label=\"{3}\" "
      "font-family=\"system-ui, -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif\" "
      "font-size=\"12\">\n<title>{3}</title>\n"
      "<text x=\"8\" y=\"20\" font-size=\"15\" font-weight=\"600\" fill=\"#1d2733\">{3}</text>\n",
      EscapeXml(id), width, Num(height), EscapeXml(title));
}

std::vector<double> NiceTicks(double lo, double hi, int target) {
  if (!std::isfinite(lo) || !std::isfinite(hi)) return {};
  if (hi < lo) std::swap(lo, hi);
  if (hi == lo) {
    const double pad = lo == 0 ? 1 : std::abs(lo) * 0.5;
    lo -= lo == 0 ? 0 : pad;
    hi += pad;
  }
  target = std::max(target, 2);
  const double raw = (hi - lo) / target;
  const double mag = std::pow(10, std::floor(std::log10(raw)));
  const double norm = raw / mag;
  const double step = (norm <= 1     ? 1
                       : norm <= 2   ? 2
                       : norm <= 2.5 ? 2.5
                       : norm <= 5   ? 5
                                     : 10) *
                      mag;
  const double first = std::floor(lo / step + 1e-9) * step;
  const double last = std::ceil(hi / step - 1e-9) * step;
  std::vector<double> ticks;
  for (int i = 0;; ++i) {
    const double t = first + i * step;
    if (t > last + step * 1e-6 || i > 1000) break;
    ticks.push_back(std::abs(t) < step * 1e-9 ? 0.0 : t);
  }
  return ticks;
}

std::string TickLabel(double value, double step) {
  int decimals = 0;
  if (step > 0 && std::isfinite(step)) {
    while (decimals < 6 &&
           std::abs(step * std::pow(10, decimals) - std::round(step * std::pow(10, decimals))) >
               1e-6 * std::pow(10, decimals)) {
      ++decimals;
    }
  }
  std::string s = fmt::format("{:.{}f}", value, decimals);
  if (s == "-0" || (s.starts_with("-0.") && s.find_first_not_of("-0.") == std::string::npos)) {
    s.erase(0, 1);
  }
  return s;
}

namespace {

// A line chart's plot area and the data ranges its axes span.
struct LinePlot {
  double left = 64, right = 20, top = 34, axis_h = 42;
  double plot_w = 0, plot_h = 0;
  double x_lo = 0, x_hi = 1, y0 = 0, y1 = 1;
  std::vector<double> xt, yt;  // ticks

  double Px(double x) const { return left + (x - x_lo) / (x_hi - x_lo) * plot_w; }
  double Py(double y) const { return top + plot_h - (y - y0) / (y1 - y0) * plot_h; }
};

// The plot's frame, the horizontal grid with the y labels, and the x ticks with their labels.
std::string LineAxes(const LineChartSpec& spec, const LinePlot& p) {
  std::string out = fmt::format(
      "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#fbfcfd\" stroke=\"#d5dbe1\"/>\n",
      Num(p.left), Num(p.top), Num(p.plot_w), Num(p.plot_h));
  out += "<g class=\"axis y-axis\" fill=\"#4a5561\">\n";
  for (double t : p.yt) {
    const double y = p.Py(t);
    out += fmt::format(
        "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#e3e7eb\"/>"
        "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n",
        Num(p.left), Num(y), Num(p.left + p.plot_w), Num(y), Num(p.left - 6), Num(y + 4),
        TickLabel(t, TickStep(p.yt)));
  }
  out += fmt::format(
      "<text transform=\"translate(14 {}) rotate(-90)\" text-anchor=\"middle\">{}</text>\n",
      Num(p.top + p.plot_h / 2), EscapeXml(spec.y_label));
  out += "</g>\n<g class=\"axis x-axis\" fill=\"#4a5561\">\n";
  for (double t : p.xt) {
    if (t < p.x_lo - 1e-9 || t > p.x_hi + 1e-9) continue;
    const double x = p.Px(t);
    out += fmt::format(
        "<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#8a949e\"/>"
        "<text x=\"{0}\" y=\"{3}\" text-anchor=\"middle\">{4}</text>\n",
        Num(x), Num(p.top + p.plot_h), Num(p.top + p.plot_h + 5), Num(p.top + p.plot_h + 18),
        TickLabel(t, TickStep(p.xt)));
  }
  out +=
      fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n</g>\n",
                  Num(p.left + p.plot_w / 2), Num(p.top + p.plot_h + 36), EscapeXml(spec.x_label));
  return out;
}

// One series as a polyline (steps when s.step), clipped to the plot; a dot for a lone sample.
std::string LineSeriesMarks(const LineSeries& s, const LinePlot& p) {
  const size_t n = std::min(s.x.size(), s.y.size());
  if (n == 0)
    return fmt::format("<g data-series=\"{}\" data-empty=\"true\"></g>\n", EscapeXml(s.name));
  std::string points;
  double prev_y = 0;
  bool have_prev = false;
  for (size_t i = 0; i < n; ++i) {
    if (!std::isfinite(s.x[i]) || !std::isfinite(s.y[i])) continue;
    const double x = p.Px(std::min(s.x[i], p.x_hi));
    const double y = p.Py(std::clamp(s.y[i], p.y0, p.y1));
    if (s.step && have_prev) points += fmt::format("{},{} ", Num(x), Num(prev_y));
    points += fmt::format("{},{} ", Num(x), Num(y));
    prev_y = y;
    have_prev = true;
  }
  if (!points.empty()) points.pop_back();
  std::string out = fmt::format("<g data-series=\"{}\">", EscapeXml(s.name));
  out += fmt::format(
      "<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\" "
      "stroke-linejoin=\"round\"{}/>",
      points, EscapeXml(s.color), s.dashed ? " stroke-dasharray=\"6 4\"" : "");
  if (n == 1) {  // a lone sample: a dot, since a one-point line draws nothing
    out += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"3\" fill=\"{}\"/>", Num(p.Px(s.x[0])),
                       Num(p.Py(std::clamp(s.y[0], p.y0, p.y1))), EscapeXml(s.color));
  }
  return out + "</g>\n";
}

}  // namespace

std::string LineChart(const LineChartSpec& spec) {
  LinePlot p;
  p.plot_w = spec.width - p.left - p.right;
  p.plot_h = spec.height - p.top - p.axis_h;

  std::vector<LegendItem> items;
  double x_lo = std::numeric_limits<double>::infinity(), x_hi = -x_lo;
  double y_hi = spec.y_min + 1;
  bool any = false;
  for (const LineSeries& s : spec.series) {
    const size_t n = std::min(s.x.size(), s.y.size());
    items.push_back({s.name, s.color, s.dashed, n == 0, true});
    for (size_t i = 0; i < n; ++i) {
      if (!std::isfinite(s.x[i]) || !std::isfinite(s.y[i])) continue;
      any = true;
      x_lo = std::min(x_lo, s.x[i]);
      x_hi = std::max(x_hi, s.x[i]);
      y_hi = std::max(y_hi, s.y[i]);
    }
  }
  if (!any) x_lo = 0, x_hi = 1;
  if (spec.x_max > x_lo) x_hi = spec.x_max;
  if (x_hi <= x_lo) x_hi = x_lo + 1;
  if (spec.y_max > spec.y_min) y_hi = spec.y_max;
  p.x_lo = x_lo;
  p.x_hi = x_hi;
  p.yt = NiceTicks(spec.y_min, y_hi, 5);
  p.y0 = p.yt.front();
  p.y1 = p.yt.back();
  p.xt = NiceTicks(x_lo, x_hi, 8);

  int legend_rows = 0;
  const std::string legend =
      Legend(items, p.left, p.top + p.plot_h + p.axis_h + 6, p.plot_w, legend_rows);
  const double height = spec.height + legend_rows * 18 + 4;

  std::string out = SvgOpen(spec.id, spec.title, spec.width, height);
  out += LineAxes(spec, p);
  for (const LineSeries& s : spec.series) out += LineSeriesMarks(s, p);
  if (!any) out += NoData(p.left + p.plot_w / 2, p.top + p.plot_h / 2);
  out += legend;
  out += "</svg>\n";
  return out;
}

std::string GanttChart(const GanttSpec& spec) {
  double name_w = 40;
  for (const std::string& r : spec.rows) name_w = std::max(name_w, TextWidth(r, 11));
  const double left = std::min(name_w, 180.0) + 14, right = 20, top = 34, lane = 14;
  const double plot_w = spec.width - left - right;
  const double plot_h = std::max<double>(1, spec.rows.size()) * lane;
  double x_hi = spec.x_max;
  for (const GanttBar& b : spec.bars) x_hi = std::max(x_hi, b.end);
  if (x_hi <= 0) x_hi = 1;
  std::vector<double> xt = NiceTicks(0, x_hi, 8);
  auto px = [&](double x) { return left + std::clamp(x, 0.0, x_hi) / x_hi * plot_w; };

  std::vector<LegendItem> items;
  std::vector<int> count(spec.series.size(), 0);
  for (const GanttBar& b : spec.bars) {
    if (b.series >= 0 && b.series < static_cast<int>(count.size())) ++count[b.series];
  }
  for (size_t i = 0; i < spec.series.size(); ++i) {
    items.push_back({spec.series[i].name, spec.series[i].color, false, count[i] == 0});
  }
  int legend_rows = 0;
  const double axis_h = 40;
  const std::string legend = Legend(items, left, top + plot_h + axis_h + 6, plot_w, legend_rows);
  const double height = top + plot_h + axis_h + legend_rows * 18 + 10;

  std::string out = SvgOpen(spec.id, spec.title, spec.width, height);
  out += "<g class=\"axis lanes\" fill=\"#4a5561\" font-size=\"11\">\n";
  for (size_t r = 0; r < spec.rows.size(); ++r) {
    const double y = top + r * lane;
    if (r % 2 == 0) {
      out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#f3f5f7\"/>",
                         Num(left), Num(y), Num(plot_w), Num(lane));
    }
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n", Num(left - 6),
                       Num(y + lane - 3), EscapeXml(spec.rows[r]));
  }
  out += "</g>\n<g class=\"axis x-axis\" fill=\"#4a5561\">\n";
  for (double t : xt) {
    if (t > x_hi + 1e-9) continue;
    const double x = px(t);
    out += fmt::format(
        "<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#e3e7eb\"/>"
        "<text x=\"{0}\" y=\"{3}\" text-anchor=\"middle\">{4}</text>\n",
        Num(x), Num(top), Num(top + plot_h + 5), Num(top + plot_h + 18),
        TickLabel(t, TickStep(xt)));
  }
  out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n</g>\n",
                     Num(left + plot_w / 2), Num(top + plot_h + 34), EscapeXml(spec.x_label));
  for (size_t si = 0; si < spec.series.size(); ++si) {
    const GanttSeries& s = spec.series[si];
    if (count[si] == 0) {
      out += fmt::format("<g data-series=\"{}\" data-empty=\"true\"></g>\n", EscapeXml(s.name));
      continue;
    }
    out +=
        fmt::format("<g data-series=\"{}\" fill=\"{}\">\n", EscapeXml(s.name), EscapeXml(s.color));
    for (const GanttBar& b : spec.bars) {
      if (b.series != static_cast<int>(si) || b.row < 0 ||
          b.row >= static_cast<int>(spec.rows.size())) {
        continue;
      }
      const double x = px(b.start);
      // At least a pixel wide so that short runs stay visible.
      const double w = std::max(1.0, px(b.end) - x);
      out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"{}>", Num(x),
                         Num(top + b.row * lane + 2), Num(w), Num(lane - 4),
                         b.outlined ? " stroke=\"#1d2733\" stroke-width=\"1.2\""
                                    : " stroke=\"#fff\" stroke-width=\"0.6\"");
      if (!b.tooltip.empty()) out += "<title>" + EscapeXml(b.tooltip) + "</title>";
      out += "</rect>\n";
    }
    out += "</g>\n";
  }
  if (spec.bars.empty()) out += NoData(left + plot_w / 2, top + plot_h / 2 + 5);
  out += legend;
  out += "</svg>\n";
  return out;
}

std::string BarChart(const BarChartSpec& spec) {
  double name_w = 0;
  for (const std::string& c : spec.categories) name_w = std::max(name_w, TextWidth(c));
  const double left = std::min(name_w, 200.0) + 14, right = 16, top = 34, bar = 16, gap = 12;
  const double value_w = 70;  // room for the value label after the longest bar
  const double plot_w = std::max(60.0, spec.width - left - right - value_w);
  double hi = 0;
  std::vector<LegendItem> items;
  for (const BarSeries& s : spec.series) {
    items.push_back({s.name, s.color, false, s.values.empty()});
    for (double v : s.values) {
      if (std::isfinite(v)) hi = std::max(hi, v);
    }
  }
  if (hi <= 0) hi = 1;
  const double group_h = spec.series.size() * bar + gap;
  const double plot_h = std::max<double>(1, spec.categories.size()) * group_h;
  int legend_rows = 0;
  const std::string legend =
      Legend(items, left, top + plot_h + 16, spec.width - left - right, legend_rows);
  const double height = top + plot_h + legend_rows * 18 + 14;
  std::string out = SvgOpen(spec.id, spec.title, spec.width, height);
  out += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#8a949e\"/>\n",
                     Num(left), Num(top), Num(top + plot_h));
  out += "<g class=\"axis categories\" fill=\"#4a5561\">\n";
  for (size_t c = 0; c < spec.categories.size(); ++c) {
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n", Num(left - 6),
                       Num(top + c * group_h + spec.series.size() * bar / 2 + 4),
                       EscapeXml(spec.categories[c]));
  }
  out += "</g>\n";
  for (size_t si = 0; si < spec.series.size(); ++si) {
    const BarSeries& s = spec.series[si];
    if (s.values.empty()) {
      out += fmt::format("<g data-series=\"{}\" data-empty=\"true\"></g>\n", EscapeXml(s.name));
      continue;
    }
    out += fmt::format("<g data-series=\"{}\">\n", EscapeXml(s.name));
    for (size_t c = 0; c < spec.categories.size() && c < s.values.size(); ++c) {
      const double v = std::isfinite(s.values[c]) ? std::max(0.0, s.values[c]) : 0;
      const double y = top + c * group_h + si * bar;
      // A zero still gets a hairline so the series visibly exists.
      const double w = std::max(1.0, v / hi * plot_w);
      out += fmt::format(
          "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" rx=\"2\" fill=\"{}\"/>"
          "<text x=\"{}\" y=\"{}\" fill=\"#1d2733\" font-size=\"11\">{}</text>\n",
          Num(left), Num(y + 1), Num(w), Num(bar - 2), EscapeXml(s.color), Num(left + w + 5),
          Num(y + bar - 4),
          std::isfinite(s.values[c])
              ? EscapeXml(fmt::format("{:.{}f}{}", s.values[c], spec.decimals, spec.unit))
              : "n/a");
    }
    out += "</g>\n";
  }
  if (spec.categories.empty()) out += NoData(left + plot_w / 2, top + 20);
  out += legend;
  out += "</svg>\n";
  return out;
}

}  // namespace hetsched::report
