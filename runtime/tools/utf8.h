// UTF-8 decoding and encoding of single code points, for the runtime's
// string kernels (case mapping) and the tools' numpy unicode arrays.
#ifndef KILN_TOOLS_UTF8_H
#define KILN_TOOLS_UTF8_H

#include <cstddef>
#include <string>
#include <string_view>

namespace kiln::io {

// The code point starting at s[i] and its length in bytes, or 0 when the
// bytes there are not well-formed UTF-8: a stray continuation byte, a
// truncated sequence, an overlong form (C0 80 for U+0000), a surrogate
// (ED A0 80) or a value past U+10FFFF.
inline size_t decodeUtf8(std::string_view s, size_t i, char32_t &cp) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = byte(i);
  size_t len = c < 0x80         ? 1
               : (c >> 5) == 6  ? 2
               : (c >> 4) == 14 ? 3
               : (c >> 3) == 30 ? 4
                                : 0;
  if (len == 0 || i + len > s.size())
    return 0;
  char32_t value = len == 1 ? c : c & (0x7f >> len);
  for (size_t k = 1; k < len; ++k) {
    if ((byte(i + k) & 0xc0) != 0x80)
      return 0;
    value = value << 6 | (byte(i + k) & 0x3f);
  }
  // The smallest value each length may encode.
  static constexpr char32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (value < kMin[len] || value > 0x10ffff ||
      (value >= 0xd800 && value <= 0xdfff))
    return 0;
  cp = value;
  return len;
}

inline void appendUtf8(std::string &out, char32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xc0 | cp >> 6);
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xe0 | cp >> 12);
    out += static_cast<char>(0x80 | (cp >> 6 & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else {
    out += static_cast<char>(0xf0 | cp >> 18);
    out += static_cast<char>(0x80 | (cp >> 12 & 0x3f));
    out += static_cast<char>(0x80 | (cp >> 6 & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  }
}

} // namespace kiln::io

#endif // KILN_TOOLS_UTF8_H
