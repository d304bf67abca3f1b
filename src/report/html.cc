#include "report/html.h"

#include <cstdlib>

#include "report/svg.h"

namespace hetsched::report {
namespace {

constexpr const char* kStyle = R"css(
:root { color-scheme: light; }
* { box-sizing: border-box; }
body { margin: 0; background: #eef1f4; color: #1d2733;
  font: 14px/1.5 system-ui, -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; }
header { background: #1d2733; color: #fff; padding: 22px 32px 18px; }
header h1 { margin: 0 0 4px; font-size: 24px; font-weight: 600; }
header p { margin: 0; color: #b8c2cc; }
main { max-width: 1880px; margin: 0 auto; padding: 8px 24px 32px; }
section { background: #fff; border-radius: 8px; margin: 18px 0; padding: 16px 20px 18px;
  box-shadow: 0 1px 3px rgba(29, 39, 51, .12); }
section h2 { margin: 0 0 6px; font-size: 18px; font-weight: 600; }
section p { margin: 4px 0 10px; color: #4a5561; max-width: 110ch; }
.charts { display: flex; flex-wrap: wrap; gap: 16px 24px; align-items: flex-start; }
.charts svg { max-width: 100%; height: auto; }
table { border-collapse: collapse; margin: 6px 0 4px; font-variant-numeric: tabular-nums; }
th, td { padding: 5px 14px; border-bottom: 1px solid #e3e7eb; text-align: left;
  white-space: nowrap; }
th { background: #f3f5f7; font-weight: 600; }
td.num { text-align: right; }
tr:hover td { background: #f8fafb; }
footer { color: #8a949e; font-size: 12px; padding: 0 32px 24px; }
#render-check { white-space: pre-wrap; margin: 4px 0 0; font-size: 11px; }
)css";

// Measures every series of every chart once the page has laid out (see html.h).
constexpr const char* kCheckScript = R"js(
window.addEventListener('load', function () {
  var lines = [], failed = false;
  document.querySelectorAll('svg[data-chart]').forEach(function (svg) {
    var total = 0, rendered = 0, empty = 0, missing = [];
    svg.querySelectorAll('[data-series]').forEach(function (g) {
      total++;
      if (g.getAttribute('data-empty') === 'true') { empty++; return; }
      var box = g.getBBox();
      var length = 0;
      g.querySelectorAll('polyline, path, line').forEach(function (e) {
        length += e.getTotalLength();
      });
      // getBBox measures geometry even when hidden; the client rect is empty unless drawn.
      var shown = g.getBoundingClientRect();
      var style = getComputedStyle(g);
      var drawn = (shown.width > 0 || shown.height > 0) && style.visibility !== 'hidden' &&
                  style.opacity !== '0';
      if (drawn && (box.width > 0 || box.height > 0 || length > 0)) rendered++;
      else missing.push(g.getAttribute('data-series'));
    });
    var verdict = missing.length ? 'FAIL missing ' + missing.join(', ')
                                 : (rendered ? 'ok' : 'no data');
    if (missing.length) failed = true;
    lines.push('chart ' + svg.getAttribute('data-chart') + ': ' + total + ' series, ' +
               rendered + ' rendered, ' + empty + ' empty: ' + verdict);
  });
  var out = document.getElementById('render-check');
  out.textContent = lines.join('\n');
  out.setAttribute('data-status', failed ? 'fail' : 'ok');
});
)js";

bool LooksNumeric(const std::string& cell) {
  if (cell.empty()) return false;
  char* end = nullptr;
  std::strtod(cell.c_str(), &end);
  return end != cell.c_str() && (*end == '\0' || *end == ' ' || *end == '%');
}

}  // namespace

HtmlPage::HtmlPage(std::string title, std::string subtitle)
    : title_(std::move(title)), subtitle_(std::move(subtitle)) {}

void HtmlPage::AddSection(const std::string& heading, const std::string& intro) {
  if (!body_.empty()) body_ += "</section>\n";
  body_ += "<section>\n<h2>" + EscapeXml(heading) + "</h2>\n";
  if (!intro.empty()) body_ += "<p>" + EscapeXml(intro) + "</p>\n";
}

void HtmlPage::AddText(const std::string& text) {
  if (body_.empty()) AddSection("", "");
  body_ += "<p>" + EscapeXml(text) + "</p>\n";
}

void HtmlPage::AddTable(const std::vector<std::string>& headers,
                        const std::vector<std::vector<std::string>>& rows) {
  if (body_.empty()) AddSection("", "");
  body_ += "<table>\n<thead><tr>";
  for (const std::string& h : headers) body_ += "<th>" + EscapeXml(h) + "</th>";
  body_ += "</tr></thead>\n<tbody>\n";
  for (const auto& row : rows) {
    body_ += "<tr>";
    for (size_t i = 0; i < row.size(); ++i) {
      const bool num = i > 0 && LooksNumeric(row[i]);
      body_ += (num ? "<td class=\"num\">" : "<td>") + EscapeXml(row[i]) + "</td>";
    }
    body_ += "</tr>\n";
  }
  body_ += "</tbody>\n</table>\n";
}

void HtmlPage::AddCharts(const std::vector<std::string>& svgs) {
  if (body_.empty()) AddSection("", "");
  body_ += "<div class=\"charts\">\n";
  for (const std::string& s : svgs) body_ += s;
  body_ += "</div>\n";
}

std::string HtmlPage::Render() const {
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<title>" +
      EscapeXml(title_) + "</title>\n<style>" + kStyle +
      "</style>\n</head>\n<body>\n<header>\n<h1>" + EscapeXml(title_) + "</h1>\n";
  if (!subtitle_.empty()) out += "<p>" + EscapeXml(subtitle_) + "</p>\n";
  out += "</header>\n<main>\n" + body_;
  if (!body_.empty()) out += "</section>\n";
  out +=
      "</main>\n<footer>Written by hetsched. One self-contained file: nothing is fetched from "
      "the network.\n<pre id=\"render-check\" data-status=\"pending\">render check: "
      "pending (needs JavaScript)</pre>\n</footer>\n<script>";
  out += kCheckScript;
  out += "</script>\n</body>\n</html>\n";
  return out;
}

}  // namespace hetsched::report
