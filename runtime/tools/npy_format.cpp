// numpy's .npy format: a magic string, a version, a Python dict literal
// describing dtype, order and shape, then the raw C-order data.
// https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html
#include "tensor_io.h"
#include "utf8.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace kiln::io {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;
constexpr size_t kHeaderAlignment = 64; // numpy >= 1.14 aligns data to 64

struct NpyHeader {
  std::string descr;
  bool fortranOrder = false;
  std::vector<int64_t> shape;
  bool haveDescr = false, haveOrder = false, haveShape = false;
};

// Parses the header's dict literal, e.g.
// {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// Only the subset numpy writes is accepted.
class HeaderParser {
public:
  HeaderParser(const std::string &text, const std::string &what)
      : text_(text), what_(what) {}

  NpyHeader parse() {
    NpyHeader header;
    expect('{');
    while (!consume('}')) {
      std::string key = parseString();
      expect(':');
      if (key == "descr") {
        skipSpace();
        if (peek() != '\'' && peek() != '"')
          error("structured dtypes are not supported");
        header.descr = parseString();
        header.haveDescr = true;
      } else if (key == "fortran_order") {
        header.fortranOrder = parseBool();
        header.haveOrder = true;
      } else if (key == "shape") {
        header.shape = parseShape();
        header.haveShape = true;
      } else {
        error("unexpected key '" + key + "' in header");
      }
      if (!consume(',')) {
        expect('}');
        break;
      }
    }
    if (!header.haveDescr || !header.haveOrder || !header.haveShape)
      error("header lacks 'descr', 'fortran_order' or 'shape'");
    return header;
  }

private:
  [[noreturn]] void error(const std::string &message) {
    throw Error(what_ + ": invalid .npy header: " + message);
  }
  void skipSpace() {
    while (pos_ < text_.size() &&
           (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n'))
      ++pos_;
  }
  char peek() { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  bool consume(char c) {
    skipSpace();
    if (peek() != c)
      return false;
    ++pos_;
    return true;
  }
  void expect(char c) {
    if (!consume(c))
      error(std::string("expected '") + c + "'");
  }
  std::string parseString() {
    skipSpace();
    char quote = peek();
    if (quote != '\'' && quote != '"')
      error("expected a string");
    size_t end = text_.find(quote, pos_ + 1);
    if (end == std::string::npos)
      error("unterminated string");
    std::string value = text_.substr(pos_ + 1, end - pos_ - 1);
    pos_ = end + 1;
    return value;
  }
  bool parseBool() {
    skipSpace();
    for (const char *word : {"True", "False"}) {
      if (text_.compare(pos_, std::strlen(word), word) == 0) {
        pos_ += std::strlen(word);
        return word[0] == 'T';
      }
    }
    error("expected True or False");
  }
  std::vector<int64_t> parseShape() {
    std::vector<int64_t> shape;
    expect('(');
    while (!consume(')')) {
      skipSpace();
      if (peek() < '0' || peek() > '9')
        error("expected a dimension");
      int64_t dim = 0;
      while (peek() >= '0' && peek() <= '9') {
        if (dim > (INT64_MAX - 9) / 10)
          error("dimension too large");
        dim = dim * 10 + (text_[pos_++] - '0');
      }
      if (peek() == 'L') // Python 2 long literal
        ++pos_;
      shape.push_back(dim);
      if (shape.size() > 64)
        error("too many dimensions");
      if (!consume(',')) {
        expect(')');
        break;
      }
    }
    return shape;
  }

  const std::string &text_;
  const std::string &what_;
  size_t pos_ = 0;
};

uint32_t readLittleEndian(const uint8_t *bytes, int count) {
  uint32_t value = 0;
  for (int i = count - 1; i >= 0; --i)
    value = value << 8 | bytes[i];
  return value;
}

// The width of numpy's fixed-width unicode dtype ('<U<width>': UTF-32 code
// points, zero padded), or 0 for any other dtype.
size_t unicodeWidth(const std::string &descr, const std::string &what) {
  if (descr.size() < 3 || (descr[0] != '<' && descr[0] != '=') ||
      descr[1] != 'U')
    return 0;
  size_t width = 0;
  for (size_t i = 2; i < descr.size(); ++i) {
    if (descr[i] < '0' || descr[i] > '9' || width > (1u << 24))
      throw Error(what + ": unsupported .npy dtype '" + descr + "'");
    width = width * 10 + static_cast<size_t>(descr[i] - '0');
  }
  if (width == 0)
    throw Error(what + ": unsupported .npy dtype '" + descr + "'");
  return width;
}

// `elements` unicode strings of `width` code points at payload, as a string
// tensor of UTF-8 text.
Tensor decodeUnicode(const std::vector<int64_t> &shape, const uint8_t *payload,
                     size_t elements, size_t width, const std::string &what) {
  std::vector<std::string> strings(elements);
  for (size_t i = 0; i < elements; ++i)
    for (size_t j = 0; j < width; ++j) {
      auto cp = static_cast<uint32_t>(
          readLittleEndian(payload + (i * width + j) * 4, 4));
      if (cp == 0)
        break; // numpy pads with zeros
      if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        throw Error(what + ": element " + std::to_string(i) +
                    " holds an invalid code point");
      appendUtf8(strings[i], static_cast<char32_t>(cp));
    }
  return Tensor::strings(shape, strings);
}

kiln_dtype dtypeFromDescr(const std::string &descr, const std::string &what) {
  if (descr.size() >= 3) {
    char order = descr[0], kind = descr[1];
    std::string size = descr.substr(2);
    bool oneByte = size == "1";
    if (order == '>' && !oneByte)
      throw Error(what + ": big-endian .npy data ('" + descr +
                  "') is not supported");
    if (order == '<' || order == '|' || order == '=' || order == '>') {
      if (kind == 'f' && size == "2")
        return KILN_DTYPE_F16;
      if (kind == 'f' && size == "4")
        return KILN_DTYPE_F32;
      if (kind == 'f' && size == "8")
        return KILN_DTYPE_F64;
      if (kind == 'b' && oneByte)
        return KILN_DTYPE_BOOL;
      static const kiln_dtype ints[] = {KILN_DTYPE_I8, KILN_DTYPE_I16,
                                        KILN_DTYPE_I32, KILN_DTYPE_I64};
      static const kiln_dtype uints[] = {KILN_DTYPE_U8, KILN_DTYPE_U16,
                                         KILN_DTYPE_U32, KILN_DTYPE_U64};
      static const char *sizes[] = {"1", "2", "4", "8"};
      for (int i = 0; i < 4; ++i) {
        if (size != sizes[i])
          continue;
        if (kind == 'i')
          return ints[i];
        if (kind == 'u')
          return uints[i];
      }
    }
  }
  throw Error(what + ": unsupported .npy dtype '" + descr + "'");
}

const char *descrFor(kiln_dtype dtype) {
  switch (dtype) {
  case KILN_DTYPE_F16:
    return "<f2";
  case KILN_DTYPE_F32:
    return "<f4";
  case KILN_DTYPE_F64:
    return "<f8";
  case KILN_DTYPE_I8:
    return "|i1";
  case KILN_DTYPE_U8:
    return "|u1";
  case KILN_DTYPE_I16:
    return "<i2";
  case KILN_DTYPE_U16:
  case KILN_DTYPE_BF16: // raw bits; numpy has no bfloat16
    return "<u2";
  case KILN_DTYPE_I32:
    return "<i4";
  case KILN_DTYPE_U32:
    return "<u4";
  case KILN_DTYPE_I64:
    return "<i8";
  case KILN_DTYPE_U64:
    return "<u8";
  case KILN_DTYPE_BOOL:
    return "|b1";
  case KILN_DTYPE_STRING: // encodeNpy writes '<U<width>'
  case KILN_DTYPE_UNDEFINED:
  case KILN_DTYPE_MIN_ENUM_:
  case KILN_DTYPE_MAX_ENUM_:
    break;
  }
  throw Error("cannot write dtype " + std::to_string(dtype) + " to .npy");
}

} // namespace

Tensor parseNpy(const uint8_t *data, size_t size, const std::string &what) {
  if (size < kMagicSize || std::memcmp(data, kMagic, kMagicSize) != 0)
    throw Error(what + " is not a .npy file (bad magic)");
  if (size < 10)
    throw Error(what + ": truncated .npy header");
  uint8_t major = data[6];
  if (major < 1 || major > 3)
    throw Error(what + ": unsupported .npy format version " +
                std::to_string(major));
  size_t lengthBytes = major == 1 ? 2 : 4;
  size_t headerStart = 8 + lengthBytes;
  if (size < headerStart)
    throw Error(what + ": truncated .npy header");
  size_t headerLength =
      readLittleEndian(data + 8, static_cast<int>(lengthBytes));
  if (headerLength > size - headerStart)
    throw Error(what + ": truncated .npy header");
  std::string text(reinterpret_cast<const char *>(data + headerStart),
                   headerLength);
  NpyHeader header = HeaderParser(text, what).parse();
  size_t width = unicodeWidth(header.descr, what);
  kiln_dtype dtype =
      width ? KILN_DTYPE_STRING : dtypeFromDescr(header.descr, what);
  if (header.fortranOrder && header.shape.size() > 1)
    throw Error(what + ": Fortran-order .npy files are not supported");

  size_t elements = 1, elementSize = width ? 4 * width : kiln_dtype_size(dtype);
  for (int64_t dim : header.shape) {
    auto d = static_cast<size_t>(dim);
    if (d != 0 && elements > SIZE_MAX / elementSize / d)
      throw Error(what + ": .npy shape is too large");
    elements *= d;
  }
  size_t payload = size - headerStart - headerLength;
  size_t expected = elements * elementSize;
  if (payload != expected)
    throw Error(what + ": " + (payload < expected ? "truncated" : "oversized") +
                " .npy data: the shape needs " + std::to_string(expected) +
                " bytes, the file has " + std::to_string(payload));
  if (width)
    return decodeUnicode(header.shape, data + headerStart + headerLength,
                         elements, width, what);
  Tensor tensor = Tensor::create(dtype, header.shape);
  if (expected)
    std::memcpy(tensor.data(), data + headerStart + headerLength, expected);
  if (dtype == KILN_DTYPE_BOOL) // generated code assumes bools are 0 or 1
    for (size_t i = 0; i < elements; ++i)
      tensor.data<uint8_t>()[i] = tensor.data<uint8_t>()[i] != 0;
  return tensor;
}

Tensor readNpy(const std::string &path) {
  std::vector<uint8_t> bytes = readFileBytes(path);
  return parseNpy(bytes.data(), bytes.size(), "'" + path + "'");
}

// A string tensor as numpy's fixed-width '<U' array: each element is its
// UTF-8 text decoded to code points (a byte that is not valid UTF-8 becomes
// U+FFFD), padded with zeros to the longest.
std::vector<uint32_t> utf32Elements(const Tensor &tensor, size_t &width) {
  std::vector<std::vector<uint32_t>> decoded;
  width = 1;
  for (size_t i = 0; i < tensor.numElements(); ++i) {
    std::string s = tensor.string(i);
    std::vector<uint32_t> cps;
    for (size_t k = 0; k < s.size();) {
      char32_t cp = 0;
      size_t len = decodeUtf8(s, k, cp);
      cps.push_back(len ? static_cast<uint32_t>(cp) : 0xfffd);
      k += len ? len : 1;
    }
    width = std::max(width, cps.size());
    decoded.push_back(std::move(cps));
  }
  std::vector<uint32_t> out(decoded.size() * width, 0);
  for (size_t i = 0; i < decoded.size(); ++i)
    std::copy(decoded[i].begin(), decoded[i].end(), out.begin() + i * width);
  return out;
}

std::vector<uint8_t> encodeNpy(const Tensor &tensor) {
  bool strings = tensor.dtype() == KILN_DTYPE_STRING;
  size_t width = 0;
  std::vector<uint32_t> text;
  if (strings)
    text = utf32Elements(tensor, width);
  std::string descr =
      strings ? "<U" + std::to_string(width) : descrFor(tensor.dtype());
  std::string dict = std::string("{'descr': '") + descr +
                     "', 'fortran_order': False, 'shape': (";
  std::vector<int64_t> shape = tensor.shape();
  for (size_t i = 0; i < shape.size(); ++i)
    dict += (i ? ", " : "") + std::to_string(shape[i]);
  dict += shape.size() == 1 ? ",), }" : "), }"; // numpy writes (3,)

  // Pad with spaces and a final newline so the data starts aligned; version
  // 2 only when the header outgrows version 1's 16-bit length.
  auto paddedLength = [&](size_t prefix) {
    size_t total = (prefix + dict.size() + 1 + kHeaderAlignment - 1) /
                   kHeaderAlignment * kHeaderAlignment;
    return total - prefix;
  };
  size_t lengthBytes = paddedLength(kMagicSize + 4) <= 0xffff ? 2 : 4;
  size_t headerLength = paddedLength(kMagicSize + 2 + lengthBytes);
  dict.append(headerLength - dict.size() - 1, ' ');
  dict += '\n';

  std::vector<uint8_t> bytes(kMagic, kMagic + kMagicSize);
  bytes.push_back(lengthBytes == 2 ? 1 : 2);
  bytes.push_back(0);
  for (size_t i = 0; i < lengthBytes; ++i)
    bytes.push_back(static_cast<uint8_t>(headerLength >> (8 * i)));
  bytes.insert(bytes.end(), dict.begin(), dict.end());
  if (strings) {
    auto *payload = reinterpret_cast<const uint8_t *>(text.data());
    bytes.insert(bytes.end(), payload, payload + text.size() * 4);
    return bytes;
  }
  auto *payload = static_cast<const uint8_t *>(tensor.data());
  bytes.insert(bytes.end(), payload, payload + tensor.sizeBytes());
  return bytes;
}

void writeNpy(const std::string &path, const Tensor &tensor) {
  std::vector<uint8_t> bytes = encodeNpy(tensor);
  std::FILE *file = std::fopen(path.c_str(), "wb");
  if (!file)
    throw Error("cannot create '" + path + "': " + std::strerror(errno),
                KILN_ERROR_IO);
  bool ok = std::fwrite(bytes.data(), 1, bytes.size(), file) == bytes.size();
  ok = std::fclose(file) == 0 && ok;
  if (!ok)
    throw Error("cannot write '" + path + "'", KILN_ERROR_IO);
}

} // namespace kiln::io
