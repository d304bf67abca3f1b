#include "report/table.h"

#include <algorithm>
#include <cassert>
#include <cctype>
#include <cstdlib>

namespace hetsched::report {
namespace {

bool LooksNumeric(const std::string& cell) {
  if (cell.empty()) return false;
  char* end = nullptr;
  std::strtod(cell.c_str(), &end);
  // Allow a unit or percent sign after the number ("12.5 %", "80 GiB").
  return end != cell.c_str() && (*end == '\0' || *end == ' ' || *end == '%' || *end == 'x');
}

}  // namespace

void Table::AddRow(std::vector<std::string> cells) {
  assert(cells.size() <= headers_.size());
  cells.resize(headers_.size());
  rows_.push_back(std::move(cells));
}

std::string Table::Render() const {
  std::vector<size_t> width(headers_.size());
  for (size_t c = 0; c < headers_.size(); ++c) width[c] = headers_[c].size();
  for (const auto& row : rows_) {
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  auto render_row = [&](const std::vector<std::string>& row, bool header) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      if (c > 0) line += "  ";
      size_t pad = width[c] - row[c].size();
      bool right = !header && LooksNumeric(row[c]);
      if (right) line.append(pad, ' ');
      line += row[c];
      if (!right && c + 1 < row.size()) line.append(pad, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    return line + "\n";
  };
  std::string out = render_row(headers_, true);
  size_t total = 0;
  for (size_t c = 0; c < width.size(); ++c) total += width[c] + (c > 0 ? 2 : 0);
  out += std::string(total, '-') + "\n";
  for (const auto& row : rows_) out += render_row(row, false);
  return out;
}

}  // namespace hetsched::report
