// Tensors, dtypes and the C++ wrapper's ownership.
#include <catch.hpp>

#include "kiln/runtime.hpp"

#include <cstring>
#include <thread>

TEST_CASE("dtype names and sizes", "[tensor]") {
  struct Row {
    kiln_dtype dtype;
    const char *name;
    size_t size;
  };
  const Row rows[] = {
      {KILN_DTYPE_F32, "float32", 4},
      {KILN_DTYPE_F16, "float16", 2},
      {KILN_DTYPE_BF16, "bfloat16", 2},
      {KILN_DTYPE_F64, "float64", 8},
      {KILN_DTYPE_I8, "int8", 1},
      {KILN_DTYPE_U8, "uint8", 1},
      {KILN_DTYPE_I16, "int16", 2},
      {KILN_DTYPE_U16, "uint16", 2},
      {KILN_DTYPE_I32, "int32", 4},
      {KILN_DTYPE_U32, "uint32", 4},
      {KILN_DTYPE_I64, "int64", 8},
      {KILN_DTYPE_U64, "uint64", 8},
      {KILN_DTYPE_BOOL, "bool", 1},
      {KILN_DTYPE_STRING, "string", sizeof(const char *)},
  };
  for (const Row &row : rows) {
    CHECK(std::string(kiln_dtype_name(row.dtype)) == row.name);
    CHECK(kiln_dtype_size(row.dtype) == row.size);
  }
  CHECK(kiln_dtype_size(KILN_DTYPE_UNDEFINED) == 0);
  CHECK(kiln_dtype_size(static_cast<kiln_dtype>(14)) == 0); // complex64
  CHECK(kiln_runtime_abi_version() == KILN_ABI_VERSION);
}

TEST_CASE("created tensors are zeroed and aligned", "[tensor]") {
  kiln::Tensor tensor = kiln::Tensor::create(KILN_DTYPE_I16, {3, 5});
  CHECK(tensor.dtype() == KILN_DTYPE_I16);
  CHECK(tensor.shape() == std::vector<int64_t>{3, 5});
  CHECK(tensor.numElements() == 15);
  CHECK(tensor.sizeBytes() == 30);
  CHECK(reinterpret_cast<uintptr_t>(tensor.data()) % KILN_ALIGNMENT == 0);
  for (size_t i = 0; i < 15; ++i)
    CHECK(tensor.data<int16_t>()[i] == 0);

  kiln::Tensor scalar = kiln::Tensor::create(KILN_DTYPE_F64, {});
  CHECK(scalar.rank() == 0);
  CHECK(scalar.numElements() == 1);
  kiln::Tensor empty = kiln::Tensor::create(KILN_DTYPE_F32, {4, 0});
  CHECK(empty.numElements() == 0);
  CHECK(empty.data() != nullptr); // generated code may still take its address
}

TEST_CASE("large tensors are zeroed again when their memory is reused",
          "[tensor]") {
  // Blocks of 1 MB and more are mapped, and a freed one is kept for the next
  // request of its size: that request must still see zeros.
  const std::vector<int64_t> shape = {1024, 1024}; // 4 MB of float32
  void *first = nullptr;
  {
    kiln::Tensor tensor = kiln::Tensor::create(KILN_DTYPE_F32, shape);
    first = tensor.data();
    std::memset(tensor.data(), 0x5a, tensor.sizeBytes());
  }
  for (int round = 0; round < 6; ++round) {
    // Interleave other sizes so the keep-list evicts and reuses.
    kiln::Tensor other =
        kiln::Tensor::create(KILN_DTYPE_F32, {512 + 256 * round, 1024});
    kiln::Tensor tensor = kiln::Tensor::create(KILN_DTYPE_F32, shape);
    CHECK(reinterpret_cast<uintptr_t>(tensor.data()) % KILN_ALIGNMENT == 0);
    const float *data = tensor.data<float>();
    size_t nonzero = 0;
    for (int64_t i = 0; i < tensor.numElements(); ++i)
      nonzero += data[i] != 0.0f;
    CHECK(nonzero == 0);
    for (const float *p = other.data<float>(), *end = p + other.numElements();
         p < end; ++p)
      nonzero += *p != 0.0f;
    CHECK(nonzero == 0);
    if (round == 0)
      CHECK(tensor.data() == first); // the kept block, not a fresh mapping
    std::memset(tensor.data(), 0x5a, tensor.sizeBytes());
    std::memset(other.data(), 0x5a, other.sizeBytes());
  }
}

TEST_CASE("tensor creation rejects bad arguments", "[tensor]") {
  kiln_tensor *tensor = nullptr;
  int64_t negative[] = {2, -1};
  CHECK(kiln_tensor_create(KILN_DTYPE_F32, 2, negative, &tensor) ==
        KILN_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(kiln_last_error()) == "negative dimension in shape [2,-1]");
  CHECK(tensor == nullptr);
  int64_t huge[] = {INT64_MAX, INT64_MAX};
  CHECK(kiln_tensor_create(KILN_DTYPE_F32, 2, huge, &tensor) ==
        KILN_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(kiln_last_error()).find("too large") != std::string::npos);
  int64_t shape[] = {2};
  CHECK(kiln_tensor_create(static_cast<kiln_dtype>(99), 1, shape, &tensor) ==
        KILN_ERROR_INVALID_ARGUMENT);
  CHECK(kiln_tensor_create(KILN_DTYPE_F32, 1, shape, nullptr) ==
        KILN_ERROR_INVALID_ARGUMENT);
}

TEST_CASE("wrapped tensors use caller memory", "[tensor]") {
  alignas(8) float data[6] = {1, 2, 3, 4, 5, 6};
  kiln::Tensor tensor =
      kiln::Tensor::wrap(KILN_DTYPE_F32, {2, 3}, data, sizeof data);
  CHECK(tensor.data() == data);
  CHECK(tensor.data<float>()[5] == 6);
  tensor.reset(); // must not free caller memory
  CHECK(data[0] == 1);

  try {
    kiln::Tensor::wrap(KILN_DTYPE_F32, {2, 4}, data, sizeof data);
    FAIL("expected kiln::Error");
  } catch (const kiln::Error &error) {
    CHECK(std::string(error.what()) ==
          "kiln_tensor_wrap: buffer has 24 bytes, shape [2,4] needs 32");
    CHECK(error.status() == KILN_ERROR_INVALID_ARGUMENT);
  }
  char *misaligned = reinterpret_cast<char *>(data) + 1;
  CHECK_THROWS_WITH(
      kiln::Tensor::wrap(KILN_DTYPE_F32, {2}, misaligned, 8),
      "kiln_tensor_wrap: data is not aligned to its element size");
}

TEST_CASE("last error is per thread", "[tensor]") {
  kiln_tensor *tensor = nullptr;
  int64_t negative[] = {-3};
  REQUIRE(kiln_tensor_create(KILN_DTYPE_F32, 1, negative, &tensor) != KILN_OK);
  std::string seen = "unset";
  std::thread other([&] { seen = kiln_last_error(); });
  other.join();
  CHECK(seen.empty());
  CHECK(std::string(kiln_last_error()) == "negative dimension in shape [-3]");
}

TEST_CASE("C++ tensors move ownership", "[tensor]") {
  kiln::Tensor a = kiln::Tensor::create(KILN_DTYPE_U8, {4});
  void *data = a.data();
  kiln::Tensor b = std::move(a);
  CHECK(!a);
  CHECK(b.data() == data);
  kiln::Tensor c;
  c = std::move(b);
  CHECK(c.data() == data);
}
