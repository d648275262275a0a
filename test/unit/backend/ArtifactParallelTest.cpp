//===- ArtifactParallelTest.cpp - Loops on the runtime's thread pool ------===//
#include "BackendTestSupport.h"

#include <catch.hpp>

#include <algorithm>
#include <cmath>

using namespace kiln_test;
using mlir::kiln::ArtifactSpec;

// Big enough for kiln-outline-parallel-loops: a 96x160x128 matmul, bias and
// tanh, then a row sum. Every way of running it (threads, a pool of one, no
// callbacks at all) must give the same, correct result.
TEST_CASE("parallel loops run on the runtime's pool", "[parallel]") {
  const int M = 96, K = 160, N = 128;
  std::vector<float> x = randomFloats(M * K, 21), w = randomFloats(K * N, 22),
                     b = randomFloats(N, 23);
  std::string source = R"(
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (j)>
#sum = affine_map<(i, j) -> (i)>
func.func @main(%x: tensor<96x160xf32>) -> (tensor<96x128xf32>, tensor<96xf32>) {
  %w = arith.constant dense_resource<w> : tensor<160x128xf32>
  %b = arith.constant dense_resource<b> : tensor<128xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<96x128xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<96x128xf32>) -> tensor<96x128xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<96x160xf32>, tensor<160x128xf32>) outs(%f : tensor<96x128xf32>) -> tensor<96x128xf32>
  %y = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%mm, %b : tensor<96x128xf32>, tensor<128xf32>) outs(%e : tensor<96x128xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    %t = math.tanh %s : f32
    linalg.yield %t : f32
  } -> tensor<96x128xf32>
  %es = tensor.empty() : tensor<96xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<96xf32>) -> tensor<96xf32>
  %r = linalg.generic {indexing_maps = [#id, #sum], iterator_types = ["parallel", "reduction"]}
      ins(%y : tensor<96x128xf32>) outs(%fs : tensor<96xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<96xf32>
  return %y, %r : tensor<96x128xf32>, tensor<96xf32>
}
)" + resourceSection({{"w", bytesOf(w)}, {"b", bytesOf(b)}});
  ArtifactSpec spec{
      "parallel",
      {{"x", KILN_DTYPE_F32, {M, K}}},
      {{"y", KILN_DTYPE_F32, {M, N}}, {"rowsum", KILN_DTYPE_F32, {M}}}};
  auto artifact = compileAndLoad(source, spec);

  std::vector<float> want(M * N), wantSum(M, 0.f);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      float acc = 0;
      for (int k = 0; k < K; ++k)
        acc += x[i * K + k] * w[k * N + j];
      want[i * N + j] = std::tanh(acc + b[j]);
      wantSum[i] += want[i * N + j];
    }

  std::vector<float> reference;
  for (int threads : {3, 2, 1, 0}) {
    INFO("threads = " << threads);
    std::vector<float> y(M * N, -5.f), rowsum(M, -5.f);
    REQUIRE(artifact->run({x.data()}, {y.data(), rowsum.data()}, threads) == 0);
    // The matmul with its bias + tanh epilogue is one pool dispatch (its
    // zero fill starts the register tiles instead of being a loop).
    if (threads > 1)
      CHECK(artifact->lastParallelCalls >= 1);
    for (int i = 0; i < M * N; ++i)
      REQUIRE(std::fabs(y[i] - want[i]) <= 1e-5f);
    for (int i = 0; i < M; ++i)
      REQUIRE(std::fabs(rowsum[i] - wantSum[i]) <=
              1e-4f * (1 + std::fabs(wantSum[i])));
    // Chunking must not change the arithmetic: every run is bit-identical.
    y.insert(y.end(), rowsum.begin(), rowsum.end());
    if (reference.empty())
      reference = y;
    CHECK(y == reference);
  }
}
