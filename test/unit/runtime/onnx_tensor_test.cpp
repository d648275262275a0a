// ONNX TensorProto (.pb) reading: real files from ONNX's test data, every
// data field encoding, and malformed files.
#include <catch.hpp>

#include "test_support.h"

#include "float16.h"
#include "tensor_io.h"

#include <cmath>
#include <cstring>
#include <dirent.h>
#include <sys/stat.h>

using kiln::Tensor;

namespace {

// A minimal protobuf writer, enough to build TensorProtos by hand.
class ProtoWriter {
public:
  ProtoWriter &varint(uint64_t value) {
    do {
      uint8_t byte = value & 0x7f;
      value >>= 7;
      bytes.push_back(byte | (value ? 0x80 : 0));
    } while (value);
    return *this;
  }
  ProtoWriter &key(int field, int wireType) {
    return varint(static_cast<uint64_t>(field) << 3 | wireType);
  }
  ProtoWriter &varintField(int field, uint64_t value) {
    return key(field, 0).varint(value);
  }
  ProtoWriter &bytesField(int field, const std::vector<uint8_t> &data) {
    key(field, 2).varint(data.size());
    bytes.insert(bytes.end(), data.begin(), data.end());
    return *this;
  }
  ProtoWriter &stringField(int field, const std::string &text) {
    return bytesField(field, std::vector<uint8_t>(text.begin(), text.end()));
  }
  template <typename T> ProtoWriter &fixedField(int field, T value) {
    key(field, sizeof(T) == 4 ? 5 : 1);
    const auto *raw = reinterpret_cast<const uint8_t *>(&value);
    bytes.insert(bytes.end(), raw, raw + sizeof value);
    return *this;
  }
  ProtoWriter &packedVarints(int field, const std::vector<int64_t> &values) {
    ProtoWriter inner;
    for (int64_t value : values)
      inner.varint(static_cast<uint64_t>(value));
    return bytesField(field, inner.bytes);
  }
  std::vector<uint8_t> bytes;
};

kiln::io::NamedTensor parse(const std::vector<uint8_t> &bytes) {
  return kiln::io::parseOnnxTensor(bytes.data(), bytes.size(), "'t.pb'");
}

std::string parseError(const std::vector<uint8_t> &bytes) {
  try {
    parse(bytes);
  } catch (const kiln::Error &error) {
    return error.what();
  }
  return "(no error)";
}

bool haveTestData() {
  struct stat info;
  return ::stat(KILN_ONNX_TESTDATA_DIR, &info) == 0;
}

std::string testFile(const std::string &test, const std::string &file) {
  return std::string(KILN_ONNX_TESTDATA_DIR) + "/" + test +
         "/test_data_set_0/" + file;
}

} // namespace

TEST_CASE("reads ONNX's own test data", "[onnx_pb]") {
  if (!haveTestData()) {
    WARN("libonnx-testdata is not installed; skipped");
    return;
  }
  kiln::io::NamedTensor x =
      kiln::io::readOnnxTensor(testFile("test_abs", "input_0.pb"));
  kiln::io::NamedTensor y =
      kiln::io::readOnnxTensor(testFile("test_abs", "output_0.pb"));
  CHECK(x.name == "x");
  CHECK(y.name == "y");
  CHECK(x.tensor.dtype() == KILN_DTYPE_F32);
  CHECK(x.tensor.shape() == std::vector<int64_t>{3, 4, 5});
  CHECK(x.tensor.data<float>()[0] == 1.7640524f);
  bool sawNegative = false;
  for (size_t i = 0; i < 60; ++i) {
    sawNegative |= x.tensor.data<float>()[i] < 0;
    CHECK(y.tensor.data<float>()[i] == std::fabs(x.tensor.data<float>()[i]));
  }
  CHECK(sawNegative);

  Tensor mask =
      kiln::io::readTensorFile(testFile("test_and2d", "input_0.pb")).tensor;
  CHECK(mask.dtype() == KILN_DTYPE_BOOL);
  CHECK(mask.shape() == std::vector<int64_t>{3, 4});
  Tensor half = kiln::io::readTensorFile(
                    testFile("test_cast_FLOAT_to_FLOAT16", "output_0.pb"))
                    .tensor;
  CHECK(half.dtype() == KILN_DTYPE_F16);
  CHECK(std::fabs(kiln::io::halfToFloat(half.data<uint16_t>()[0]) - 0.549f) <
        1e-3);
  Tensor indices =
      kiln::io::readTensorFile(
          testFile("test_argmax_default_axis_random", "output_0.pb"))
          .tensor;
  CHECK(indices.dtype() == KILN_DTYPE_I64);
  CHECK(indices.shape() == std::vector<int64_t>{1, 3, 4});
  Tensor bytes =
      kiln::io::readTensorFile(testFile("test_add_uint8", "input_0.pb")).tensor;
  CHECK(bytes.dtype() == KILN_DTYPE_U8);

  Tensor strings = kiln::io::readOnnxTensor(
                       testFile("test_cast_FLOAT_to_STRING", "output_0.pb"))
                       .tensor;
  CHECK(strings.dtype() == KILN_DTYPE_STRING);
  CHECK(strings.shape() == std::vector<int64_t>{3, 4});
  CHECK(strings.string(0) == "0.9767611");
  CHECK(strings.string(3) == "0.039187793");
}

TEST_CASE("sequence and optional .pb files are named as such", "[onnx_pb]") {
  if (!haveTestData()) {
    WARN("libonnx-testdata is not installed; skipped");
    return;
  }
  for (const char *test : {"test_identity_sequence", "test_identity_opt",
                           "test_optional_get_element"}) {
    std::string path = testFile(test, "input_0.pb");
    CHECK_THROWS_WITH(kiln::io::readOnnxTensor(path),
                      "'" + path +
                          "' holds an ONNX sequence or optional value, not a "
                          "tensor; only tensors are supported");
  }
}

TEST_CASE("every .pb file of ONNX's node tests reads or is rejected",
          "[onnx_pb]") {
  if (!haveTestData()) {
    WARN("libonnx-testdata is not installed; skipped");
    return;
  }
  size_t read = 0, rejected = 0;
  DIR *nodes = ::opendir(KILN_ONNX_TESTDATA_DIR);
  REQUIRE(nodes);
  while (dirent *test = ::readdir(nodes)) {
    if (test->d_name[0] == '.')
      continue;
    for (int file = 0; file < 8; ++file)
      for (const char *kind : {"input_", "output_"}) {
        std::string path =
            testFile(test->d_name, kind + std::to_string(file) + ".pb");
        struct stat info;
        if (::stat(path.c_str(), &info) != 0)
          continue;
        try {
          kiln::io::readOnnxTensor(path);
          ++read;
        } catch (const kiln::Error &) {
          ++rejected;
        }
      }
  }
  ::closedir(nodes);
  INFO(read << " read, " << rejected << " rejected");
  CHECK(read > 2000);
  CHECK(rejected < read / 10); // strings, sequences and optionals only
}

TEST_CASE("typed data fields, packed or not", "[onnx_pb]") {
  SECTION("float_data, unpacked, with unpacked dims") {
    ProtoWriter w;
    w.varintField(1, 2).varintField(1, 2).varintField(2, 1);
    for (float value : {1.5f, -2.0f, 0.25f, 8.0f})
      w.fixedField(4, value);
    w.stringField(8, "weights");
    kiln::io::NamedTensor t = parse(w.bytes);
    CHECK(t.name == "weights");
    CHECK(t.tensor.shape() == std::vector<int64_t>{2, 2});
    CHECK(t.tensor.data<float>()[1] == -2.0f);
    CHECK(t.tensor.data<float>()[3] == 8.0f);
  }
  SECTION("int32_data holds float16 bits, packed") {
    ProtoWriter w;
    w.packedVarints(1, {3}).varintField(2, 10).packedVarints(
        5, {0x3c00, 0xc000, 0x7bff});
    Tensor t = parse(w.bytes).tensor;
    CHECK(t.dtype() == KILN_DTYPE_F16);
    CHECK(kiln::io::halfToFloat(t.data<uint16_t>()[0]) == 1.0f);
    CHECK(kiln::io::halfToFloat(t.data<uint16_t>()[1]) == -2.0f);
    CHECK(kiln::io::halfToFloat(t.data<uint16_t>()[2]) == 65504.0f);
  }
  SECTION("int32_data for int8 keeps negative values") {
    ProtoWriter w;
    w.packedVarints(1, {4}).varintField(2, 3).packedVarints(5,
                                                            {-128, -1, 0, 127});
    Tensor t = parse(w.bytes).tensor;
    CHECK(t.dtype() == KILN_DTYPE_I8);
    CHECK(t.data<int8_t>()[0] == -128);
    CHECK(t.data<int8_t>()[1] == -1);
    CHECK(t.data<int8_t>()[3] == 127);
  }
  SECTION("int32_data for bool") {
    ProtoWriter w;
    w.packedVarints(1, {3}).varintField(2, 9).packedVarints(5, {1, 0, 1});
    Tensor t = parse(w.bytes).tensor;
    CHECK(t.dtype() == KILN_DTYPE_BOOL);
    CHECK(t.data<uint8_t>()[0] == 1);
    CHECK(t.data<uint8_t>()[1] == 0);
  }
  SECTION("int64_data, unpacked, and a scalar") {
    ProtoWriter w;
    w.varintField(2, 7).varintField(7, static_cast<uint64_t>(-5));
    Tensor t = parse(w.bytes).tensor;
    CHECK(t.rank() == 0);
    CHECK(t.data<int64_t>()[0] == -5);
  }
  SECTION("double_data packed and uint64_data") {
    ProtoWriter doubles;
    double values[] = {0.5, -1e300};
    std::vector<uint8_t> packed(sizeof values);
    std::memcpy(packed.data(), values, sizeof values);
    doubles.packedVarints(1, {2}).varintField(2, 11).bytesField(10, packed);
    Tensor t = parse(doubles.bytes).tensor;
    CHECK(t.data<double>()[1] == -1e300);

    ProtoWriter uints;
    uints.packedVarints(1, {2})
        .varintField(2, 13)
        .varintField(11, UINT64_MAX)
        .varintField(11, 7);
    t = parse(uints.bytes).tensor;
    CHECK(t.data<uint64_t>()[0] == UINT64_MAX);
    CHECK(t.data<uint64_t>()[1] == 7);
  }
  SECTION("unknown fields are skipped") {
    ProtoWriter w;
    w.packedVarints(1, {1}).varintField(2, 6);
    w.stringField(12, "doc string").fixedField(99, 1.0).fixedField(98, 2.0f);
    w.varintField(200, 5).packedVarints(5, {42});
    CHECK(parse(w.bytes).tensor.data<int32_t>()[0] == 42);
  }
}

TEST_CASE("malformed TensorProtos are errors", "[onnx_pb]") {
  CHECK(parseError({}) ==
        "'t.pb': TensorProto has no data_type (is this a .pb tensor file?)");
  ProtoWriter strings;
  strings.packedVarints(1, {2}).varintField(2, 8).stringField(6, "hi");
  CHECK(parseError(strings.bytes) ==
        "'t.pb': string_data has 1 values, a string 2-element tensor needs 2");
  ProtoWriter rawStrings;
  rawStrings.packedVarints(1, {1}).varintField(2, 8).stringField(9, "hi");
  CHECK(parseError(rawStrings.bytes) ==
        "'t.pb': a string tensor with raw_data (strings are read from "
        "string_data)");
  ProtoWriter nul;
  nul.packedVarints(1, {1}).varintField(2, 8).bytesField(6, {'a', 0, 'b'});
  CHECK(parseError(nul.bytes) == "'t.pb': a string holds a NUL byte (Kiln's "
                                 "strings are NUL-terminated)");
  ProtoWriter mixed;
  mixed.packedVarints(1, {1}).varintField(2, 1).stringField(6, "hi");
  CHECK(parseError(mixed.bytes) ==
        "'t.pb': string_data in a tensor of data type float32");
  ProtoWriter complex;
  complex.packedVarints(1, {1}).varintField(2, 14);
  CHECK(parseError(complex.bytes) ==
        "'t.pb': unsupported ONNX data type 14 (complex64)");
  ProtoWriter external;
  external.varintField(2, 1).stringField(8, "w").varintField(14, 1);
  CHECK(parseError(external.bytes) ==
        "'t.pb' (tensor 'w'): tensors with external data are not supported");
  ProtoWriter shortRaw;
  shortRaw.packedVarints(1, {2, 3}).varintField(2, 1).bytesField(
      9, std::vector<uint8_t>(20));
  CHECK(parseError(shortRaw.bytes) ==
        "'t.pb': raw_data has 20 bytes, a float32 6-element tensor needs 24");
  ProtoWriter fewValues;
  fewValues.packedVarints(1, {3}).varintField(2, 7).packedVarints(7, {1, 2});
  CHECK(parseError(fewValues.bytes) ==
        "'t.pb': int64_data has 2 values, a int64 3-element tensor needs 3");
  ProtoWriter negative;
  negative.packedVarints(1, {-1}).varintField(2, 1);
  CHECK(parseError(negative.bytes) == "'t.pb': negative dimension -1");
  ProtoWriter huge;
  huge.packedVarints(1, {1ll << 40, 1ll << 40})
      .varintField(2, 1)
      .bytesField(9, {0});
  CHECK(parseError(huge.bytes) == "'t.pb': shape is too large");
  ProtoWriter group; // wire type 3 (start group) is not used by ONNX
  group.key(50, 3);
  CHECK(parseError(group.bytes) ==
        "'t.pb': malformed TensorProto (.pb) file: unsupported wire type 3");
  ProtoWriter wrongType;
  wrongType.key(8, 0).varint(1);
  CHECK(parseError(wrongType.bytes) ==
        "'t.pb': malformed TensorProto (.pb) file: field 8 has wire type 0");
  CHECK(
      parseError(std::vector<uint8_t>(11, 0xff)) ==
      "'t.pb': malformed TensorProto (.pb) file: varint longer than 10 bytes");
}

TEST_CASE("every truncation of a .pb file is an error", "[onnx_pb]") {
  std::vector<std::vector<uint8_t>> files;
  ProtoWriter typed;
  typed.packedVarints(1, {2, 2}).varintField(2, 1).stringField(8, "x");
  for (float value : {1.0f, 2.0f, 3.0f, 4.0f})
    typed.fixedField(4, value);
  files.push_back(typed.bytes);
  if (haveTestData())
    files.push_back(kiln::test::readBytes(testFile("test_abs", "input_0.pb")));
  for (const std::vector<uint8_t> &bytes : files) {
    REQUIRE_NOTHROW(parse(bytes));
    for (size_t length = 0; length < bytes.size(); ++length) {
      std::vector<uint8_t> prefix(bytes.begin(), bytes.begin() + length);
      CHECK_THROWS_AS(parse(prefix), kiln::Error);
    }
  }
}

TEST_CASE("corrupted .pb files never crash", "[onnx_pb]") {
  ProtoWriter w;
  w.packedVarints(1, {2, 3}).varintField(2, 1).stringField(8, "name");
  w.bytesField(9, std::vector<uint8_t>(24, 1));
  uint32_t state = 777;
  for (int trial = 0; trial < 5000; ++trial) {
    std::vector<uint8_t> bytes = w.bytes;
    for (int flips = 0; flips < 2; ++flips) {
      state = state * 1664525u + 1013904223u;
      bytes[(state >> 8) % bytes.size()] = static_cast<uint8_t>(state >> 24);
    }
    try {
      parse(bytes);
    } catch (const kiln::Error &) {
    }
  }
  SUCCEED();
}
