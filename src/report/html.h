// HtmlPage: one self-contained HTML report (inline CSS and SVG, no network access) made of
// sections with text, tables and charts, plus a small script that checks, in the browser,
// that every chart's series actually rendered (see docs/report.md and tests/browser/).
#pragma once

#include <string>
#include <vector>

namespace hetsched::report {

class HtmlPage {
 public:
  // `title` goes into <title> and the page heading; `subtitle` (plain text) under it.
  HtmlPage(std::string title, std::string subtitle);

  // Starts a new section; `intro` is plain text (escaped), may be empty.
  void AddSection(const std::string& heading, const std::string& intro);
  // A paragraph of plain text (escaped).
  void AddText(const std::string& text);
  // A table of plain-text cells (escaped); cells that look numeric are right-aligned.
  void AddTable(const std::vector<std::string>& headers,
                const std::vector<std::vector<std::string>>& rows);
  // Charts (markup from report/svg.h) shown side by side when they fit, else stacked.
  void AddCharts(const std::vector<std::string>& svgs);
  void AddChart(const std::string& svg) { AddCharts({svg}); }

  // The whole document. On load, the embedded script writes into <pre id="render-check"> one
  // line per chart, "chart <id>: <n> series, <r> rendered, <e> empty: ok|FAIL [missing ...]",
  // and sets its data-status attribute to "ok" (every non-empty series is displayed and has a
  // non-empty box on screen) or "fail".
  std::string Render() const;

 private:
  std::string title_;
  std::string subtitle_;
  std::string body_;
};

}  // namespace hetsched::report
