#include "util/utf8.h"

namespace hetsched::util {

Utf8Step NextUtf8(std::string_view s, size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) return {1, 1};
  // Sequence length and the allowed range of its second byte.
  size_t len = 0;
  unsigned char lo = 0x80, hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return {0, 1};  // a continuation byte out of place, C0, C1 or F5..FF
  }
  size_t k = 1;
  while (k < len && i + k < s.size()) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if (b < (k == 1 ? lo : 0x80) || b > (k == 1 ? hi : 0xBF)) break;
    ++k;
  }
  return {k == len ? len : 0, k};
}

bool IsValidUtf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const Utf8Step step = NextUtf8(s, i);
    if (step.length == 0) return false;
    i += step.length;
  }
  return true;
}

}  // namespace hetsched::util
