// Reads an ONNX TensorProto (onnx.proto) straight from protobuf wire format,
// so the runtime tools need no libprotobuf. Only TensorProto's own fields are
// interpreted; unknown fields are skipped as protobuf requires.
#include "tensor_io.h"

#include <cstring>

namespace kiln::io {
namespace {

enum WireType { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

// TensorProto field numbers.
enum Field {
  kDims = 1,
  kDataType = 2,
  kFloatData = 4,
  kInt32Data = 5,
  kStringData = 6,
  kInt64Data = 7,
  kName = 8,
  kRawData = 9,
  kDoubleData = 10,
  kUint64Data = 11,
  kDataLocation = 14,
};

constexpr uint64_t kDataLocationExternal = 1;
constexpr int kOnnxString = 8;

// Bounds-checked cursor over protobuf bytes; every read that would run past
// the end throws, so malformed input cannot read out of bounds.
class WireReader {
public:
  WireReader(const uint8_t *begin, const uint8_t *end, const std::string &what)
      : pos_(begin), end_(end), what_(what) {}

  bool atEnd() const { return pos_ == end_; }

  uint64_t varint() {
    uint64_t value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ == end_)
        truncated();
      uint8_t byte = *pos_++;
      value |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if (!(byte & 0x80))
        return value;
    }
    malformed("varint longer than 10 bytes");
  }
  template <typename T> T fixed() {
    if (static_cast<size_t>(end_ - pos_) < sizeof(T))
      truncated();
    T value;
    std::memcpy(&value, pos_, sizeof value); // little-endian hosts only
    pos_ += sizeof value;
    return value;
  }
  WireReader lengthDelimited() {
    uint64_t length = varint();
    if (length > static_cast<uint64_t>(end_ - pos_))
      truncated();
    WireReader inner(pos_, pos_ + length, what_);
    pos_ += length;
    return inner;
  }
  void skip(int wireType) {
    switch (wireType) {
    case kVarint:
      varint();
      return;
    case kFixed64:
      fixed<uint64_t>();
      return;
    case kLengthDelimited:
      lengthDelimited();
      return;
    case kFixed32:
      fixed<uint32_t>();
      return;
    }
    malformed("unsupported wire type " + std::to_string(wireType));
  }
  const uint8_t *data() const { return pos_; }
  size_t size() const { return static_cast<size_t>(end_ - pos_); }

  [[noreturn]] void truncated() {
    throw Error(what_ + ": truncated TensorProto (.pb) file");
  }
  [[noreturn]] void malformed(const std::string &detail) {
    throw Error(what_ + ": malformed TensorProto (.pb) file: " + detail);
  }

private:
  const uint8_t *pos_, *end_;
  const std::string &what_;
};

// The fields as read; repeated fields may arrive packed or one by one.
struct RawTensor {
  std::vector<int64_t> dims;
  int64_t dataType = 0;
  std::vector<float> floats;
  std::vector<int64_t> int32s, int64s;
  std::vector<double> doubles;
  std::vector<uint64_t> uint64s;
  std::string name;
  std::vector<std::string> strings;
  const uint8_t *raw = nullptr;
  size_t rawSize = 0;
  bool hasRaw = false, external = false;
};

// Appends one value, or a packed run of them, of a repeated scalar field.
template <typename T, typename ReadOne>
void readRepeated(WireReader &reader, int wireType, int expectedWireType,
                  std::vector<T> &values, ReadOne readOne) {
  if (wireType == expectedWireType) {
    values.push_back(readOne(reader));
    return;
  }
  if (wireType != kLengthDelimited)
    reader.malformed("wrong wire type for a repeated field");
  WireReader packed = reader.lengthDelimited();
  while (!packed.atEnd())
    values.push_back(readOne(packed));
}

RawTensor readFields(WireReader &reader) {
  RawTensor tensor;
  auto varint64 = [](WireReader &r) {
    return static_cast<int64_t>(r.varint());
  };
  while (!reader.atEnd()) {
    uint64_t key = reader.varint();
    int wireType = static_cast<int>(key & 7);
    uint64_t field = key >> 3;
    auto requireWireType = [&](int expected) {
      if (wireType != expected)
        reader.malformed("field " + std::to_string(field) + " has wire type " +
                         std::to_string(wireType));
    };
    switch (field) {
    case kDims:
      readRepeated(reader, wireType, kVarint, tensor.dims, varint64);
      break;
    case kDataType:
      requireWireType(kVarint);
      tensor.dataType = static_cast<int64_t>(reader.varint());
      break;
    case kFloatData:
      readRepeated(reader, wireType, kFixed32, tensor.floats,
                   [](WireReader &r) { return r.fixed<float>(); });
      break;
    case kInt32Data:
      readRepeated(reader, wireType, kVarint, tensor.int32s, varint64);
      break;
    case kInt64Data:
      readRepeated(reader, wireType, kVarint, tensor.int64s, varint64);
      break;
    case kDoubleData:
      readRepeated(reader, wireType, kFixed64, tensor.doubles,
                   [](WireReader &r) { return r.fixed<double>(); });
      break;
    case kUint64Data:
      readRepeated(reader, wireType, kVarint, tensor.uint64s,
                   [](WireReader &r) { return r.varint(); });
      break;
    case kStringData: {
      requireWireType(kLengthDelimited);
      WireReader text = reader.lengthDelimited();
      tensor.strings.emplace_back(reinterpret_cast<const char *>(text.data()),
                                  text.size());
      break;
    }
    case kName: {
      requireWireType(kLengthDelimited);
      WireReader text = reader.lengthDelimited();
      tensor.name.assign(reinterpret_cast<const char *>(text.data()),
                         text.size());
      break;
    }
    case kRawData: {
      requireWireType(kLengthDelimited);
      WireReader bytes = reader.lengthDelimited();
      tensor.raw = bytes.data();
      tensor.rawSize = bytes.size();
      tensor.hasRaw = true;
      break;
    }
    case kDataLocation:
      requireWireType(kVarint);
      tensor.external = reader.varint() == kDataLocationExternal;
      break;
    default:
      reader.skip(wireType);
    }
  }
  return tensor;
}

const char *onnxTypeName(int64_t type) {
  switch (type) {
  case 8:
    return "string";
  case 14:
    return "complex64";
  case 15:
    return "complex128";
  case 17:
  case 18:
  case 19:
  case 20:
    return "float8";
  case 21:
    return "uint4";
  case 22:
    return "int4";
  case 23:
    return "float4";
  }
  return "unknown";
}

// Whether ONNX data type `type` has a kiln_dtype of the same number (checked
// before any cast: kiln_dtype cannot hold arbitrary values).
bool isKilnDtype(int64_t type) {
  return (type >= KILN_DTYPE_F32 && type <= KILN_DTYPE_U64) ||
         type == KILN_DTYPE_BF16;
}

kiln_dtype checkedDtype(int64_t type, const std::string &what) {
  if (!isKilnDtype(type))
    throw Error(what + ": unsupported ONNX data type " + std::to_string(type) +
                " (" + onnxTypeName(type) + ")");
  return static_cast<kiln_dtype>(type);
}

// Copies `values` into the tensor, converting each to the element type.
template <typename Element, typename Source>
void store(Tensor &tensor, const std::vector<Source> &values) {
  auto *out = tensor.data<Element>();
  for (size_t i = 0; i < values.size(); ++i)
    out[i] = static_cast<Element>(values[i]);
}

void fillTyped(Tensor &tensor, const RawTensor &raw) {
  switch (tensor.dtype()) {
  case KILN_DTYPE_F32:
    return store<float>(tensor, raw.floats);
  case KILN_DTYPE_F64:
    return store<double>(tensor, raw.doubles);
  case KILN_DTYPE_I64:
    return store<int64_t>(tensor, raw.int64s);
  case KILN_DTYPE_U32:
    return store<uint32_t>(tensor, raw.uint64s);
  case KILN_DTYPE_U64:
    return store<uint64_t>(tensor, raw.uint64s);
  case KILN_DTYPE_I32:
    return store<int32_t>(tensor, raw.int32s);
  case KILN_DTYPE_I16:
    return store<int16_t>(tensor, raw.int32s);
  case KILN_DTYPE_I8:
    return store<int8_t>(tensor, raw.int32s);
  case KILN_DTYPE_U8:
    return store<uint8_t>(tensor, raw.int32s);
  case KILN_DTYPE_U16:
  case KILN_DTYPE_F16: // int32_data holds the 16 bits of each value
  case KILN_DTYPE_BF16:
    return store<uint16_t>(tensor, raw.int32s);
  case KILN_DTYPE_BOOL: {
    auto *out = tensor.data<uint8_t>();
    for (size_t i = 0; i < raw.int32s.size(); ++i)
      out[i] = raw.int32s[i] != 0;
    return;
  }
  case KILN_DTYPE_STRING: // built from string_data in buildTensor
  case KILN_DTYPE_UNDEFINED:
  case KILN_DTYPE_MIN_ENUM_:
  case KILN_DTYPE_MAX_ENUM_:
    break;
  }
}

// How many values the typed field for `dtype` holds, and its name.
size_t typedCount(kiln_dtype dtype, const RawTensor &raw, const char **field) {
  switch (dtype) {
  case KILN_DTYPE_F32:
    *field = "float_data";
    return raw.floats.size();
  case KILN_DTYPE_F64:
    *field = "double_data";
    return raw.doubles.size();
  case KILN_DTYPE_I64:
    *field = "int64_data";
    return raw.int64s.size();
  case KILN_DTYPE_U32:
  case KILN_DTYPE_U64:
    *field = "uint64_data";
    return raw.uint64s.size();
  default:
    *field = "int32_data";
    return raw.int32s.size();
  }
}

// Whether the bytes parse as an ONNX SequenceProto or OptionalProto: name
// (1, text), elem_type (2, small enum) and element messages (3-7). ONNX test
// data stores sequence and optional values in .pb files of their own.
bool looksLikeSequenceOrOptional(const uint8_t *data, size_t size,
                                 const std::string &what) {
  try {
    WireReader reader(data, data + size, what);
    bool sawName = false;
    while (!reader.atEnd()) {
      uint64_t key = reader.varint();
      uint64_t field = key >> 3;
      int wireType = static_cast<int>(key & 7);
      if (field == 1 && wireType == kLengthDelimited) {
        WireReader text = reader.lengthDelimited();
        for (size_t i = 0; i < text.size(); ++i)
          if (text.data()[i] < 0x20)
            return false;
        sawName = true;
      } else if (field == 2 && wireType == kVarint) {
        if (reader.varint() > 5)
          return false;
      } else if (field >= 3 && field <= 7 && wireType == kLengthDelimited) {
        reader.lengthDelimited();
      } else {
        return false;
      }
    }
    return sawName;
  } catch (const Error &) {
    return false;
  }
}

NamedTensor buildTensor(const RawTensor &raw, const std::string &what) {
  std::string where =
      raw.name.empty() ? what : what + " (tensor '" + raw.name + "')";
  if (!raw.strings.empty() && raw.dataType != kOnnxString)
    throw Error(where + ": string_data in a tensor of data type " +
                (isKilnDtype(raw.dataType)
                     ? kiln_dtype_name(static_cast<kiln_dtype>(raw.dataType))
                     : onnxTypeName(raw.dataType)));
  if (raw.external)
    throw Error(where + ": tensors with external data are not supported");
  if (raw.dataType == 0)
    throw Error(where + ": TensorProto has no data_type (is this a .pb "
                        "tensor file?)");
  kiln_dtype dtype = checkedDtype(raw.dataType, where);
  if (raw.dims.size() > 64)
    throw Error(where + ": too many dimensions");
  size_t elements = 1, elementSize = kiln_dtype_size(dtype);
  for (int64_t dim : raw.dims) {
    if (dim < 0)
      throw Error(where + ": negative dimension " + std::to_string(dim));
    auto d = static_cast<size_t>(dim);
    if (d != 0 && elements > SIZE_MAX / elementSize / d)
      throw Error(where + ": shape is too large");
    elements *= d;
  }
  std::string description = std::string(kiln_dtype_name(dtype)) + " " +
                            std::to_string(elements) + "-element tensor";
  // Sizes are checked before allocating, so a corrupt shape cannot request
  // gigabytes.
  if (dtype == KILN_DTYPE_STRING) {
    if (raw.hasRaw)
      throw Error(where + ": a string tensor with raw_data (strings are "
                          "read from string_data)");
    if (raw.strings.size() != elements)
      throw Error(where + ": string_data has " +
                  std::to_string(raw.strings.size()) + " values, a " +
                  description + " needs " + std::to_string(elements));
    for (const std::string &s : raw.strings)
      if (s.find('\0') != std::string::npos)
        throw Error(where + ": a string holds a NUL byte (Kiln's strings "
                            "are NUL-terminated)");
    return {raw.name, Tensor::strings(raw.dims, raw.strings)};
  }
  if (raw.hasRaw) {
    if (raw.rawSize != elements * elementSize)
      throw Error(where + ": raw_data has " + std::to_string(raw.rawSize) +
                  " bytes, a " + description + " needs " +
                  std::to_string(elements * elementSize));
  } else {
    const char *field;
    size_t count = typedCount(dtype, raw, &field);
    if (count != elements)
      throw Error(where + ": " + field + " has " + std::to_string(count) +
                  " values, a " + description + " needs " +
                  std::to_string(elements));
  }
  Tensor tensor = Tensor::create(dtype, raw.dims);
  if (raw.hasRaw) {
    if (raw.rawSize)
      std::memcpy(tensor.data(), raw.raw, raw.rawSize);
    if (dtype == KILN_DTYPE_BOOL) // generated code assumes bools are 0 or 1
      for (size_t i = 0; i < elements; ++i)
        tensor.data<uint8_t>()[i] = tensor.data<uint8_t>()[i] != 0;
  } else {
    fillTyped(tensor, raw);
  }
  return {raw.name, std::move(tensor)};
}

} // namespace

NamedTensor parseOnnxTensor(const uint8_t *data, size_t size,
                            const std::string &what) {
  try {
    WireReader reader(data, data + size, what);
    return buildTensor(readFields(reader), what);
  } catch (const Error &) {
    // Read as a TensorProto, a sequence gives nonsense (its name decodes as
    // dims); say what the file is instead.
    if (looksLikeSequenceOrOptional(data, size, what))
      throw Error(what + " holds an ONNX sequence or optional value, not a "
                         "tensor; only tensors are supported");
    throw;
  }
}

NamedTensor readOnnxTensor(const std::string &path) {
  std::vector<uint8_t> bytes = readFileBytes(path);
  return parseOnnxTensor(bytes.data(), bytes.size(), "'" + path + "'");
}

} // namespace kiln::io
