// Counting occurrences in rendered text (SVG, HTML) for the report tests.
#pragma once

#include <string>

namespace hetsched::testing {

// Occurrences of `what` in `text`, overlapping ones included.
inline int Count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) {
    ++n;
  }
  return n;
}

}  // namespace hetsched::testing
