// String kernels behind kiln_runtime_callbacks (abi.h): Cast between string
// and number tensors, and ONNX StringNormalizer. Generated code moves only
// `const char *` elements; the text is made here, in the run's scratch
// memory, so it stays valid until the next run like every run-time buffer.
#include "string_kernels.h"

#include "../tools/float16.h"
#include "../tools/utf8.h"
#include "kiln/runtime.h"
#include "status.h"
#include "tensor.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <cwctype>
#include <limits>
#include <locale.h>
#include <string>
#include <string_view>
#include <vector>

using namespace kiln::rt;

namespace {

std::string_view view(const char *s) {
  return s ? std::string_view(s) : std::string_view();
}

// Copies `texts` (joined in `pool`, each ending at `ends[i]`) into one block
// of run memory and points dst[i] at the copies.
void publish(void *context, const std::string &pool,
             const std::vector<size_t> &ends, const char **dst) {
  char *block = static_cast<char *>(scratchAlloc(context, pool.size() + 1));
  std::memcpy(block, pool.data(), pool.size());
  block[pool.size()] = '\0';
  size_t begin = 0;
  for (size_t i = 0; i < ends.size(); ++i) {
    dst[i] = block + begin;
    begin = ends[i];
  }
}

template <typename T> void appendShortest(std::string &out, T value) {
  if (std::isnan(value)) {
    out += "nan";
    return;
  }
  char buf[64];
  auto result = std::to_chars(buf, buf + sizeof buf, value);
  out.append(buf, result.ptr);
}

// The fewest significant digits that convert back to the same 16-bit value.
template <typename Narrow>
void appendShortest16(std::string &out, uint16_t bits, float value,
                      Narrow narrow) {
  if (std::isnan(value) || std::isinf(value)) {
    appendShortest(out, value);
    return;
  }
  char buf[64];
  for (int digits = 1; digits <= 9; ++digits) {
    auto result = std::to_chars(buf, buf + sizeof buf, value,
                                std::chars_format::general, digits);
    float back = 0;
    std::from_chars(buf, result.ptr, back);
    if (narrow(back) == bits || digits == 9) {
      out.append(buf, result.ptr);
      return;
    }
  }
}

// An element of type T at p (tensor data carries no alignment promise for
// the byte pointer arithmetic here).
template <typename T> T load(const char *p) {
  T value;
  std::memcpy(&value, p, sizeof value);
  return value;
}

template <typename T> void appendInteger(std::string &out, const char *p) {
  char buf[32];
  auto result = std::to_chars(buf, buf + sizeof buf, load<T>(p));
  out.append(buf, result.ptr);
}

void appendNumber(std::string &out, int32_t dtype, const char *p) {
  switch (dtype) {
  case KILN_DTYPE_F32:
    return appendShortest(out, load<float>(p));
  case KILN_DTYPE_F64:
    return appendShortest(out, load<double>(p));
  case KILN_DTYPE_F16: {
    auto bits = load<uint16_t>(p);
    return appendShortest16(out, bits, kiln::io::halfToFloat(bits),
                            kiln::io::floatToHalf);
  }
  case KILN_DTYPE_BF16: {
    auto bits = load<uint16_t>(p);
    return appendShortest16(out, bits, kiln::io::bfloat16ToFloat(bits),
                            kiln::io::floatToBfloat16);
  }
  case KILN_DTYPE_BOOL:
    out += *p ? "1" : "0";
    return;
  case KILN_DTYPE_I8:
    return appendInteger<int8_t>(out, p);
  case KILN_DTYPE_U8:
    return appendInteger<uint8_t>(out, p);
  case KILN_DTYPE_I16:
    return appendInteger<int16_t>(out, p);
  case KILN_DTYPE_U16:
    return appendInteger<uint16_t>(out, p);
  case KILN_DTYPE_I32:
    return appendInteger<int32_t>(out, p);
  case KILN_DTYPE_U32:
    return appendInteger<uint32_t>(out, p);
  case KILN_DTYPE_I64:
    return appendInteger<int64_t>(out, p);
  case KILN_DTYPE_U64:
    return appendInteger<uint64_t>(out, p);
  default:
    out += "?";
  }
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
    s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
    s.remove_suffix(1);
  return s;
}

// strtod in the "C" locale, whatever locale the embedding program set.
locale_t cLocale() {
  static locale_t locale = newlocale(LC_NUMERIC_MASK, "C", nullptr);
  return locale;
}
float strtoC(const char *text, float) {
  return strtof_l(text, nullptr, cLocale());
}
double strtoC(const char *text, double) {
  return strtod_l(text, nullptr, cLocale());
}

// Parses a whole floating-point string, correctly rounded to T; values out
// of T's range saturate as strtod does (to +-inf, or to the nearest
// subnormal or signed zero).
template <typename T> bool parseFloat(std::string_view s, T &value) {
  if (s.size() > 1 && s[0] == '+' && s[1] != '-')
    s.remove_prefix(1);
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ptr != s.data() + s.size())
    return false;
  if (ec == std::errc::result_out_of_range) {
    // from_chars leaves `value` alone then; strtod knows the direction.
    value = strtoC(std::string(s).c_str(), T());
    return true;
  }
  return ec == std::errc();
}

template <typename T> bool parseInteger(std::string_view s, T &value) {
  if (s.size() > 1 && s[0] == '+' && s[1] != '-')
    s.remove_prefix(1);
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  return ec == std::errc() && ptr == s.data() + s.size();
}

// Parses `s` as a T with `parse` and stores it at dst.
template <typename T, typename Parse>
bool parseInto(std::string_view s, char *dst, Parse parse) {
  T value;
  if (!parse(s, value))
    return false;
  std::memcpy(dst, &value, sizeof value);
  return true;
}

bool parseNumber(std::string_view s, int32_t dtype, char *dst) {
  s = trim(s);
  switch (dtype) {
  case KILN_DTYPE_F32:
    return parseInto<float>(s, dst, parseFloat<float>);
  case KILN_DTYPE_F64:
    return parseInto<double>(s, dst, parseFloat<double>);
  case KILN_DTYPE_F16:
  case KILN_DTYPE_BF16: {
    float v;
    if (!parseFloat(s, v))
      return false;
    uint16_t bits = dtype == KILN_DTYPE_F16 ? kiln::io::floatToHalf(v)
                                            : kiln::io::floatToBfloat16(v);
    std::memcpy(dst, &bits, 2);
    return true;
  }
  case KILN_DTYPE_BOOL: {
    std::string lower(s);
    for (char &c : lower)
      c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    double v;
    if (lower == "true" || lower == "false")
      *dst = lower == "true";
    else if (parseFloat(s, v))
      *dst = v != 0;
    else
      return false;
    return true;
  }
  case KILN_DTYPE_I8:
    return parseInto<int8_t>(s, dst, parseInteger<int8_t>);
  case KILN_DTYPE_U8:
    return parseInto<uint8_t>(s, dst, parseInteger<uint8_t>);
  case KILN_DTYPE_I16:
    return parseInto<int16_t>(s, dst, parseInteger<int16_t>);
  case KILN_DTYPE_U16:
    return parseInto<uint16_t>(s, dst, parseInteger<uint16_t>);
  case KILN_DTYPE_I32:
    return parseInto<int32_t>(s, dst, parseInteger<int32_t>);
  case KILN_DTYPE_U32:
    return parseInto<uint32_t>(s, dst, parseInteger<uint32_t>);
  case KILN_DTYPE_I64:
    return parseInto<int64_t>(s, dst, parseInteger<int64_t>);
  case KILN_DTYPE_U64:
    return parseInto<uint64_t>(s, dst, parseInteger<uint64_t>);
  default:
    return false;
  }
}

// Unicode case mapping of UTF-8 text through glibc's built-in C.UTF-8
// locale; ASCII only where that locale does not exist. Bytes that are not
// valid UTF-8 are copied unchanged.
locale_t utf8Locale() {
  static locale_t locale = newlocale(LC_CTYPE_MASK, "C.UTF-8", nullptr);
  return locale;
}

// action: 1 lower, 2 upper.
void appendCased(std::string &out, std::string_view s, int action) {
  locale_t locale = utf8Locale();
  for (size_t i = 0; i < s.size();) {
    char32_t cp;
    size_t len = kiln::io::decodeUtf8(s, i, cp);
    if (len == 0) {
      out += s[i++];
      continue;
    }
    if (locale)
      cp = action == 1 ? towlower_l(cp, locale) : towupper_l(cp, locale);
    else if (cp < 0x80)
      cp = action == 1 ? std::tolower(cp) : std::toupper(cp);
    kiln::io::appendUtf8(out, cp);
    i += len;
  }
}

} // namespace

void kiln::rt::stringsFromNumbers(void *context, int32_t dtype, const void *src,
                                  const char **dst, int64_t n) {
  size_t size = kiln_dtype_size(static_cast<kiln_dtype>(dtype));
  const char *p = static_cast<const char *>(src);
  std::string pool;
  std::vector<size_t> ends;
  ends.reserve(n);
  for (int64_t i = 0; i < n; ++i) {
    appendNumber(pool, dtype, p + i * size);
    pool += '\0';
    ends.push_back(pool.size());
  }
  publish(context, pool, ends, dst);
}

int32_t kiln::rt::stringsToNumbers(void *context, int32_t dtype,
                                   const char *const *src, void *dst, int64_t n,
                                   const char *what) {
  size_t size = kiln_dtype_size(static_cast<kiln_dtype>(dtype));
  char *out = static_cast<char *>(dst);
  for (int64_t i = 0; i < n; ++i) {
    if (parseNumber(view(src[i]), dtype, out + i * size))
      continue;
    std::string message =
        std::string(what ? what : "Cast") + ": element " + std::to_string(i) +
        " \"" + std::string(view(src[i]).substr(0, 64)) + "\" is not a " +
        kiln_dtype_name(static_cast<kiln_dtype>(dtype)) + " number";
    checkFailed(context, message.c_str());
    return 1;
  }
  return 0;
}

int64_t kiln::rt::normalizeStrings(void *context, const char *const *src,
                                   int64_t n, const char **dst,
                                   int32_t caseAction, int32_t caseSensitive,
                                   const char *stopwords,
                                   int64_t numStopwords) {
  auto fold = [&](std::string_view s) {
    std::string folded;
    if (caseSensitive)
      folded = s;
    else
      appendCased(folded, s, 1);
    return folded;
  };
  std::vector<std::string> stops;
  for (int64_t i = 0; i < numStopwords; ++i) {
    std::string_view word(stopwords);
    stops.push_back(fold(word));
    stopwords += word.size() + 1;
  }
  std::string pool;
  std::vector<size_t> ends;
  for (int64_t i = 0; i < n; ++i) {
    std::string_view s = view(src[i]);
    if (!stops.empty() &&
        std::find(stops.begin(), stops.end(), fold(s)) != stops.end())
      continue;
    if (caseAction == 1 || caseAction == 2)
      appendCased(pool, s, caseAction);
    else
      pool += s;
    pool += '\0';
    ends.push_back(pool.size());
  }
  if (ends.empty()) {
    pool += '\0';
    ends.push_back(pool.size());
  }
  publish(context, pool, ends, dst);
  return static_cast<int64_t>(ends.size());
}

extern "C" kiln_status kiln_tensor_set_strings(kiln_tensor *tensor,
                                               const char *const *strings,
                                               size_t count) {
  if (!tensor || (count > 0 && !strings))
    return fail(KILN_ERROR_INVALID_ARGUMENT,
                "kiln_tensor_set_strings: NULL argument");
  if (tensor->dtype != KILN_DTYPE_STRING)
    return fail(KILN_ERROR_INVALID_ARGUMENT,
                std::string("kiln_tensor_set_strings: the tensor is ") +
                    kiln_dtype_name(tensor->dtype) + ", not string");
  size_t elements = kiln_tensor_num_elements(tensor);
  if (count != elements)
    return fail(KILN_ERROR_INVALID_ARGUMENT,
                "kiln_tensor_set_strings: " + std::to_string(count) +
                    " strings for a tensor of " + std::to_string(elements) +
                    " elements");
  size_t total = 0;
  for (size_t i = 0; i < count; ++i)
    total += view(strings[i]).size() + 1;
  std::unique_ptr<char[]> text(new (std::nothrow) char[total ? total : 1]);
  if (!text)
    return fail(KILN_ERROR_OUT_OF_MEMORY, "out of memory copying strings");
  // `strings` may be the tensor's own elements (session.cpp passes them):
  // element i is read before it is overwritten, and the old text is freed
  // only after the loop.
  auto **slots = static_cast<const char **>(tensor->data);
  size_t at = 0;
  for (size_t i = 0; i < count; ++i) {
    std::string_view s = view(strings[i]);
    if (!s.empty()) // an empty view's data() may be null: no memcpy of it
      std::memcpy(text.get() + at, s.data(), s.size());
    text[at + s.size()] = '\0';
    slots[i] = text.get() + at;
    at += s.size() + 1;
  }
  tensor->strings = std::move(text);
  return KILN_OK;
}
