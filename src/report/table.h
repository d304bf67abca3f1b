// Table: plain-text tables for the console, with columns sized to their contents.
// Numbers (cells that parse as numbers) are right-aligned, text left-aligned.
#pragma once

#include <string>
#include <vector>

namespace hetsched::report {

class Table {
 public:
  explicit Table(std::vector<std::string> headers) : headers_(std::move(headers)) {}
  // A row with fewer cells than headers is padded with empty cells; extra cells are an error
  // of the caller (asserted).
  void AddRow(std::vector<std::string> cells);
  // Header, a rule of dashes, then the rows; each line ends with '\n'.
  std::string Render() const;

 private:
  std::vector<std::string> headers_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace hetsched::report
