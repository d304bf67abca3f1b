// LineReader: splits text into numbered lines for the line-oriented readers (Gavel traces,
// JSON lines, STG task graphs, fault files), so each reports file:line the same way.
#pragma once

#include <string_view>

namespace hetsched::util {

class LineReader {
 public:
  // Keeps a view: `text` must outlive the reader.
  explicit LineReader(std::string_view text) : text_(text) {}

  // Sets `line` to the next line without its '\n' and a trailing '\r'; false at the end.
  bool Next(std::string_view& line) {
    if (pos_ >= text_.size()) return false;
    size_t end = text_.find('\n', pos_);
    if (end == std::string_view::npos) end = text_.size();
    line = text_.substr(pos_, end - pos_);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    pos_ = end + 1;
    ++line_number_;
    return true;
  }

  // 1-based number of the line last returned by Next.
  int line_number() const { return line_number_; }

 private:
  std::string_view text_;
  size_t pos_ = 0;
  int line_number_ = 0;
};

}  // namespace hetsched::util
