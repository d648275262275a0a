// .npy reading and writing: round trips, numpy's own header spellings, and
// malformed files that must give errors, never crashes.
#include <catch.hpp>

#include "test_support.h"

#include "tensor_io.h"

#include <cstring>

using kiln::Tensor;
using kiln::test::scratchPath;

namespace {

Tensor patterned(kiln_dtype dtype, const std::vector<int64_t> &shape) {
  Tensor tensor = Tensor::create(dtype, shape);
  auto *bytes = tensor.data<uint8_t>();
  for (size_t i = 0; i < tensor.sizeBytes(); ++i)
    bytes[i] = static_cast<uint8_t>(i * 37 + 11);
  if (dtype == KILN_DTYPE_BOOL)
    for (size_t i = 0; i < tensor.sizeBytes(); ++i)
      bytes[i] &= 1;
  return tensor;
}

// A file as numpy 1.x/2.x writes it, header text given literally.
std::vector<uint8_t> npyFile(const std::string &header,
                             const std::vector<uint8_t> &payload,
                             int version = 1) {
  std::vector<uint8_t> bytes = {0x93, 'N', 'U', 'M', 'P', 'Y'};
  bytes.push_back(static_cast<uint8_t>(version));
  bytes.push_back(0);
  size_t lengthBytes = version == 1 ? 2 : 4;
  for (size_t i = 0; i < lengthBytes; ++i)
    bytes.push_back(static_cast<uint8_t>(header.size() >> (8 * i)));
  bytes.insert(bytes.end(), header.begin(), header.end());
  bytes.insert(bytes.end(), payload.begin(), payload.end());
  return bytes;
}

std::string parseError(const std::vector<uint8_t> &bytes) {
  try {
    kiln::io::parseNpy(bytes.data(), bytes.size(), "'t.npy'");
  } catch (const kiln::Error &error) {
    return error.what();
  }
  return "(no error)";
}

} // namespace

TEST_CASE("npy round trips every dtype", "[npy]") {
  const kiln_dtype dtypes[] = {KILN_DTYPE_F32, KILN_DTYPE_F16, KILN_DTYPE_F64,
                               KILN_DTYPE_I8,  KILN_DTYPE_U8,  KILN_DTYPE_I16,
                               KILN_DTYPE_U16, KILN_DTYPE_I32, KILN_DTYPE_U32,
                               KILN_DTYPE_I64, KILN_DTYPE_U64, KILN_DTYPE_BOOL};
  const std::vector<std::vector<int64_t>> shapes = {
      {}, {5}, {2, 3}, {2, 0, 4}, {1, 3, 4, 5}};
  for (kiln_dtype dtype : dtypes)
    for (const std::vector<int64_t> &shape : shapes) {
      Tensor original = patterned(dtype, shape);
      std::string path = scratchPath("round_trip.npy");
      kiln::io::writeNpy(path, original);
      std::vector<uint8_t> bytes = kiln::test::readBytes(path);
      // numpy aligns the data to 64 bytes.
      CHECK((bytes.size() - original.sizeBytes()) % 64 == 0);
      Tensor copy = kiln::io::readNpy(path);
      CHECK(copy.dtype() == dtype);
      CHECK(copy.shape() == shape);
      REQUIRE(copy.sizeBytes() == original.sizeBytes());
      CHECK(std::memcmp(copy.data(), original.data(), copy.sizeBytes()) == 0);
    }
}

TEST_CASE("npy headers are written like numpy's", "[npy]") {
  Tensor tensor = Tensor::create(KILN_DTYPE_F32, {3});
  std::vector<uint8_t> bytes = kiln::io::encodeNpy(tensor);
  std::string text(bytes.begin() + 10, bytes.end() - 12);
  CHECK(text.rfind("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }",
                   0) == 0);
  CHECK(text.back() == '\n');
  Tensor scalar = Tensor::create(KILN_DTYPE_BOOL, {});
  bytes = kiln::io::encodeNpy(scalar);
  text.assign(bytes.begin() + 10, bytes.end() - 1);
  CHECK(text.rfind("{'descr': '|b1', 'fortran_order': False, 'shape': (), }",
                   0) == 0);
}

TEST_CASE("bfloat16 is written as raw uint16 bits", "[npy]") {
  Tensor tensor = Tensor::create(KILN_DTYPE_BF16, {2});
  tensor.data<uint16_t>()[0] = 0x3f80; // 1.0
  tensor.data<uint16_t>()[1] = 0xc000; // -2.0
  std::string path = scratchPath("bf16.npy");
  kiln::io::writeNpy(path, tensor);
  Tensor copy = kiln::io::readNpy(path);
  CHECK(copy.dtype() == KILN_DTYPE_U16);
  CHECK(copy.data<uint16_t>()[0] == 0x3f80);
  CHECK(copy.data<uint16_t>()[1] == 0xc000);
}

TEST_CASE("npy reads numpy's header variants", "[npy]") {
  std::vector<uint8_t> payload(8 * 4);
  for (size_t i = 0; i < payload.size(); ++i)
    payload[i] = static_cast<uint8_t>(i);
  // Double quotes, keys in another order, version 2, Python 2 long dims.
  for (const std::string &header :
       {std::string("{'descr': '<i4', 'fortran_order': False, 'shape': (2, "
                    "4), }\n"),
        std::string("{\"shape\": (2,4), \"fortran_order\": False, \"descr\": "
                    "\"<i4\"}"),
        std::string("{'descr': '<i4', 'fortran_order': False, 'shape': (2L, "
                    "4L), }          \n")})
    for (int version : {1, 2}) {
      std::vector<uint8_t> bytes = npyFile(header, payload, version);
      Tensor tensor = kiln::io::parseNpy(bytes.data(), bytes.size(), "'t'");
      CHECK(tensor.dtype() == KILN_DTYPE_I32);
      CHECK(tensor.shape() == std::vector<int64_t>{2, 4});
      CHECK(std::memcmp(tensor.data(), payload.data(), payload.size()) == 0);
    }
  // Fortran order is the same as C order for rank <= 1.
  std::vector<uint8_t> bytes = npyFile(
      "{'descr': '<f8', 'fortran_order': True, 'shape': (4,), }", payload);
  CHECK(kiln::io::parseNpy(bytes.data(), bytes.size(), "'t'").numElements() ==
        4);
}

TEST_CASE("npy rejects what it cannot read, with a reason", "[npy]") {
  std::vector<uint8_t> four(4);
  CHECK(parseError({'h', 'e', 'l', 'l', 'o', '!', 0, 0, 0, 0}) ==
        "'t.npy' is not a .npy file (bad magic)");
  CHECK(parseError(npyFile("{'descr': '>i4', 'fortran_order': False, "
                           "'shape': (1,), }",
                           four)) ==
        "'t.npy': big-endian .npy data ('>i4') is not supported");
  CHECK(parseError(npyFile("{'descr': '<c8', 'fortran_order': False, "
                           "'shape': (1,), }",
                           std::vector<uint8_t>(8))) ==
        "'t.npy': unsupported .npy dtype '<c8'");
  CHECK(parseError(npyFile("{'descr': [('a', '<i4')], 'fortran_order': "
                           "False, 'shape': (1,), }",
                           four)) ==
        "'t.npy': invalid .npy header: structured dtypes are not supported");
  CHECK(parseError(npyFile("{'descr': '<i2', 'fortran_order': True, "
                           "'shape': (2, 1), }",
                           four)) ==
        "'t.npy': Fortran-order .npy files are not supported");
  CHECK(parseError(npyFile("{'descr': '<i4', 'fortran_order': False, "
                           "'shape': (2,), }",
                           four)) ==
        "'t.npy': truncated .npy data: the shape needs 8 bytes, the file has "
        "4");
  CHECK(parseError(npyFile("{'descr': '<i4', 'fortran_order': False, "
                           "'shape': (9999999999, 9999999999, 9999999999), }",
                           four)) == "'t.npy': .npy shape is too large");
  CHECK(parseError(npyFile("{'descr': '<i4', 'shape': (1,), }", four)) ==
        "'t.npy': invalid .npy header: header lacks 'descr', 'fortran_order' "
        "or 'shape'");
  std::vector<uint8_t> badVersion = npyFile("{}", {}, 1);
  badVersion[6] = 9;
  CHECK(parseError(badVersion) == "'t.npy': unsupported .npy format version 9");
  CHECK_THROWS_WITH(kiln::io::readNpy(scratchPath("missing.npy")),
                    "cannot open '" + scratchPath("missing.npy") +
                        "': No such file or directory");
}

TEST_CASE("every truncation of an npy file is an error", "[npy]") {
  Tensor tensor = patterned(KILN_DTYPE_F32, {3, 4});
  std::vector<uint8_t> bytes = kiln::io::encodeNpy(tensor);
  for (size_t length = 0; length < bytes.size(); ++length) {
    std::vector<uint8_t> prefix(bytes.begin(), bytes.begin() + length);
    CHECK_THROWS_AS(kiln::io::parseNpy(prefix.data(), prefix.size(), "'t'"),
                    kiln::Error);
  }
}

TEST_CASE("corrupted npy headers never crash", "[npy]") {
  Tensor tensor = patterned(KILN_DTYPE_I16, {2, 3});
  std::vector<uint8_t> original = kiln::io::encodeNpy(tensor);
  uint32_t state = 12345;
  for (int trial = 0; trial < 3000; ++trial) {
    std::vector<uint8_t> bytes = original;
    for (int flips = 0; flips < 3; ++flips) {
      state = state * 1664525u + 1013904223u;
      size_t at = (state >> 8) % 80; // the header
      bytes[at] = static_cast<uint8_t>(state >> 24);
    }
    try {
      kiln::io::parseNpy(bytes.data(), bytes.size(), "'t'");
    } catch (const kiln::Error &) {
    }
  }
  SUCCEED();
}

TEST_CASE("string tensors round trip as numpy's '<U' arrays", "[npy]") {
  Tensor strings = Tensor::strings(
      {2, 2}, {"monday", "", "tu\xc3\xa9sday", "\xf0\x9f\x94\xa5"});
  std::vector<uint8_t> bytes = kiln::io::encodeNpy(strings);
  std::string header(bytes.begin() + 10, bytes.begin() + 60);
  // The longest element, "tuésday", is 7 code points (8 bytes of UTF-8).
  CHECK(header.find("'descr': '<U7'") != std::string::npos);
  Tensor back = kiln::io::parseNpy(bytes.data(), bytes.size(), "'t.npy'");
  CHECK(back.dtype() == KILN_DTYPE_STRING);
  CHECK(back.shape() == std::vector<int64_t>{2, 2});
  for (size_t i = 0; i < 4; ++i)
    CHECK(back.string(i) == strings.string(i));

  std::vector<uint8_t> surrogate = {0x00, 0xd8, 0, 0};
  CHECK(parseError(npyFile("{'descr': '<U1', 'fortran_order': False, "
                           "'shape': (1,), }",
                           surrogate)) ==
        "'t.npy': element 0 holds an invalid code point");
  CHECK(parseError(npyFile("{'descr': '<U2', 'fortran_order': False, "
                           "'shape': (1,), }",
                           surrogate)) ==
        "'t.npy': truncated .npy data: the shape needs 8 bytes, the file has "
        "4");
}
