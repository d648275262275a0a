//===- ArtifactTypesTest.cpp - Integers, booleans, aliasing results -------===//
#include "BackendTestSupport.h"

#include <catch.hpp>

#include <cstring>

using namespace kiln_test;
using mlir::kiln::ArtifactSpec;

// i64 arithmetic with a constant, a comparison producing i1 and an i1 input
// (one byte per element in memory on both sides).
TEST_CASE("i64 arithmetic and i1 inputs and outputs", "[types]") {
  const int N = 10;
  std::string source = R"(
#id = affine_map<(i) -> (i)>
func.func @main(%x: tensor<10xi64>, %mask: tensor<10xi1>) -> (tensor<10xi64>, tensor<10xi1>) {
  %c = arith.constant dense<[1, -2, 3, -4, 5, -6, 7, -8, 9, 5000000000]> : tensor<10xi64>
  %three = arith.constant 3 : i64
  %zero = arith.constant 0 : i64
  %ei = tensor.empty() : tensor<10xi64>
  %eb = tensor.empty() : tensor<10xi1>
  %y, %b = linalg.generic {indexing_maps = [#id, #id, #id, #id, #id], iterator_types = ["parallel"]}
      ins(%x, %mask, %c : tensor<10xi64>, tensor<10xi1>, tensor<10xi64>)
      outs(%ei, %eb : tensor<10xi64>, tensor<10xi1>) {
  ^bb0(%v: i64, %m: i1, %k: i64, %o: i64, %ob: i1):
    %mul = arith.muli %v, %three : i64
    %add = arith.addi %mul, %k : i64
    %neg = arith.subi %zero, %add : i64
    %sel = arith.select %m, %add, %neg : i64
    %pos = arith.cmpi sgt, %v, %zero : i64
    %flip = arith.xori %pos, %m : i1
    linalg.yield %sel, %flip : i64, i1
  } -> (tensor<10xi64>, tensor<10xi1>)
  return %y, %b : tensor<10xi64>, tensor<10xi1>
}
)";
  ArtifactSpec spec{
      "ints",
      {{"x", KILN_DTYPE_I64, {N}}, {"mask", KILN_DTYPE_BOOL, {N}}},
      {{"y", KILN_DTYPE_I64, {N}}, {"b", KILN_DTYPE_BOOL, {N}}}};
  auto artifact = compileAndLoad(source, spec);
  std::vector<int64_t> x = {0, 1, -1, 1LL << 40, -(1LL << 40), 7, -7, 2, -2, 3};
  std::vector<uint8_t> mask = {1, 0, 1, 1, 0, 0, 1, 0, 1, 1};
  const int64_t c[] = {1, -2, 3, -4, 5, -6, 7, -8, 9, 5000000000LL};
  std::vector<int64_t> y(N, 99);
  std::vector<uint8_t> b(N, 0xEE);
  REQUIRE(artifact->run({x.data(), mask.data()}, {y.data(), b.data()}) == 0);
  for (int i = 0; i < N; ++i) {
    INFO("i = " << i);
    int64_t add = x[i] * 3 + c[i];
    CHECK(y[i] == (mask[i] ? add : -add));
    CHECK(b[i] == uint8_t((x[i] > 0) != (mask[i] != 0)));
  }
}

// Results that are an input or a constant must still land in the caller's
// output buffers; a splat constant and a dense one take different paths.
TEST_CASE("results aliasing inputs and constants", "[types]") {
  std::string source = R"(
func.func @main(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<4xi32>, tensor<2x3xf32>) {
  %c = arith.constant dense<[[1.5, 2.5, 3.5], [4.5, 5.5, 6.5]]> : tensor<2x3xf32>
  %s = arith.constant dense<7> : tensor<4xi32>
  return %x, %c, %s, %x : tensor<2x3xf32>, tensor<2x3xf32>, tensor<4xi32>, tensor<2x3xf32>
}
)";
  ArtifactSpec spec{"alias",
                    {{"x", KILN_DTYPE_F32, {2, 3}}},
                    {{"same", KILN_DTYPE_F32, {2, 3}},
                     {"constant", KILN_DTYPE_F32, {2, 3}},
                     {"splat", KILN_DTYPE_I32, {4}},
                     {"again", KILN_DTYPE_F32, {2, 3}}}};
  auto artifact = compileAndLoad(source, spec);
  CHECK(artifact->descriptor->arena_size == 0);
  std::vector<float> x = {-1, -2, -3, -4, -5, -6};
  std::vector<float> same(6), constant(6), again(6);
  std::vector<int32_t> splat(4);
  REQUIRE(artifact->run({x.data()}, {same.data(), constant.data(), splat.data(),
                                     again.data()}) == 0);
  CHECK(same == x);
  CHECK(again == x);
  CHECK(constant == std::vector<float>{1.5, 2.5, 3.5, 4.5, 5.5, 6.5});
  CHECK(splat == std::vector<int32_t>{7, 7, 7, 7});
  // The input is untouched.
  CHECK(x == std::vector<float>{-1, -2, -3, -4, -5, -6});
}

// An op that could update its input in place must not write the caller's
// input buffer.
TEST_CASE("inputs are never written", "[types]") {
  std::string source = R"(
#id = affine_map<(i) -> (i)>
func.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {
  %y = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel"]} outs(%x : tensor<8xf32>) {
  ^bb0(%o: f32):
    %d = arith.addf %o, %o : f32
    linalg.yield %d : f32
  } -> tensor<8xf32>
  return %y : tensor<8xf32>
}
)";
  ArtifactSpec spec{
      "inplace", {{"x", KILN_DTYPE_F32, {8}}}, {{"y", KILN_DTYPE_F32, {8}}}};
  auto artifact = compileAndLoad(source, spec);
  std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8}, y(8);
  REQUIRE(artifact->run({x.data()}, {y.data()}) == 0);
  CHECK(x == std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8});
  CHECK(y == std::vector<float>{2, 4, 6, 8, 10, 12, 14, 16});
}

// One computed tensor as several outputs, directly and reshaped.
TEST_CASE("a computed result returned twice and reshaped", "[types]") {
  std::string source = R"(
#id = affine_map<(i, j) -> (i, j)>
func.func @main(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<6xf32>) {
  %e = tensor.empty() : tensor<2x3xf32>
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<2x3xf32>) outs(%e : tensor<2x3xf32>) {
  ^bb0(%a: f32, %o: f32):
    %d = arith.addf %a, %a : f32
    linalg.yield %d : f32
  } -> tensor<2x3xf32>
  %c = tensor.collapse_shape %y [[0, 1]] : tensor<2x3xf32> into tensor<6xf32>
  return %y, %y, %c : tensor<2x3xf32>, tensor<2x3xf32>, tensor<6xf32>
}
)";
  ArtifactSpec spec{"twice",
                    {{"x", KILN_DTYPE_F32, {2, 3}}},
                    {{"a", KILN_DTYPE_F32, {2, 3}},
                     {"b", KILN_DTYPE_F32, {2, 3}},
                     {"flat", KILN_DTYPE_F32, {6}}}};
  auto artifact = compileAndLoad(source, spec);
  std::vector<float> x = {1, 2, 3, 4, 5, 6}, a(6), b(6), flat(6);
  REQUIRE(artifact->run({x.data()}, {a.data(), b.data(), flat.data()}) == 0);
  std::vector<float> want = {2, 4, 6, 8, 10, 12};
  CHECK(a == want);
  CHECK(b == want);
  CHECK(flat == want);
}
