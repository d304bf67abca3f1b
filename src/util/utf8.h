// UTF-8 well-formedness (Unicode table 3-7: no overlong forms, surrogates or code points above
// U+10FFFF), for the writers whose output must be valid text: JSON logs, Prometheus labels.
#pragma once

#include <cstddef>
#include <string_view>

namespace hetsched::util {

struct Utf8Step {
  size_t length = 0;    // bytes of the well-formed character at the position; 0: ill-formed
  size_t consumed = 1;  // bytes to skip: the character, or its maximal ill-formed subpart
};

// The character starting at s[i] (i < s.size()). An ill-formed one consumes its maximal subpart,
// which Unicode recommends replacing by one U+FFFD.
Utf8Step NextUtf8(std::string_view s, size_t i);

bool IsValidUtf8(std::string_view s);

}  // namespace hetsched::util
