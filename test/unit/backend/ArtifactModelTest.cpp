//===- ArtifactModelTest.cpp - Matmul, convolution, reduction end to end --===//
#include "BackendTestSupport.h"

#include <catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>

using namespace kiln_test;
using mlir::kiln::ArtifactSpec;

static void checkClose(const std::vector<float> &got,
                       const std::vector<float> &want,
                       float tolerance = 1e-4f) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i);
    CHECK(std::fabs(got[i] - want[i]) <= tolerance * (1 + std::fabs(want[i])));
  }
}

// Two dense layers: relu(x W1 + b1) W2, with W1 and b1 as dense_resource
// weights and W2 as a plain dense constant.
TEST_CASE("matmul + bias + relu with resource weights", "[model]") {
  const int M = 5, K = 33, N = 17, P = 6;
  std::vector<float> x = randomFloats(M * K, 1), w1 = randomFloats(K * N, 2),
                     b1 = randomFloats(N, 3), w2 = randomFloats(N * P, 4);
  std::string w2Text;
  for (int i = 0; i < N * P; ++i)
    w2Text += (i ? ", " : "") + std::to_string(w2[i]);
  // std::to_string rounds to 6 decimals; use the rounded values as reference.
  for (float &v : w2)
    v = std::stof(std::to_string(v));

  std::string source = R"(
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (j)>
func.func @main(%x: tensor<5x33xf32>) -> tensor<5x6xf32> {
  %w1 = arith.constant dense_resource<w1> : tensor<33x17xf32>
  %b1 = arith.constant dense_resource<b1> : tensor<17xf32>
  %w2 = arith.constant dense<[)" +
                       w2Text + R"(]> : tensor<102xf32>
  %w2m = tensor.expand_shape %w2 [[0, 1]] output_shape [17, 6] : tensor<102xf32> into tensor<17x6xf32>
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<5x17xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<5x17xf32>) -> tensor<5x17xf32>
  %mm = linalg.matmul ins(%x, %w1 : tensor<5x33xf32>, tensor<33x17xf32>) outs(%f1 : tensor<5x17xf32>) -> tensor<5x17xf32>
  %h = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%mm, %b1 : tensor<5x17xf32>, tensor<17xf32>) outs(%e1 : tensor<5x17xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<5x17xf32>
  %e2 = tensor.empty() : tensor<5x6xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<5x6xf32>) -> tensor<5x6xf32>
  %y = linalg.matmul ins(%h, %w2m : tensor<5x17xf32>, tensor<17x6xf32>) outs(%f2 : tensor<5x6xf32>) -> tensor<5x6xf32>
  return %y : tensor<5x6xf32>
}
)" + resourceSection({{"w1", bytesOf(w1)}, {"b1", bytesOf(b1)}});

  ArtifactSpec spec{
      "mlp", {{"x", KILN_DTYPE_F32, {M, K}}}, {{"y", KILN_DTYPE_F32, {M, P}}}};
  auto artifact = compileAndLoad(source, spec);
  CHECK(artifact->descriptor->arena_size >= M * N * sizeof(float));
  CHECK(artifact->descriptor->weights_size >= (K * N + N + N * P) * 4);

  std::vector<float> want(M * P, 0.f), hidden(M * N);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      float acc = 0;
      for (int k = 0; k < K; ++k)
        acc += x[i * K + k] * w1[k * N + j];
      hidden[i * N + j] = std::max(acc + b1[j], 0.f);
    }
  for (int i = 0; i < M; ++i)
    for (int p = 0; p < P; ++p)
      for (int j = 0; j < N; ++j)
        want[i * P + p] += hidden[i * N + j] * w2[j * P + p];

  std::vector<float> y(M * P, -1.f);
  REQUIRE(artifact->run({x.data()}, {y.data()}) == 0);
  checkClose(y, want);
  // The arena is the runtime's: a second run on a dirty arena agrees.
  std::vector<float> again(M * P, -7.f);
  REQUIRE(artifact->run({x.data()}, {again.data()}) == 0);
  CHECK(again == y);
}

// 3x3 convolution, padding 1, stride 2, then a per-channel bias.
TEST_CASE("conv_2d_nchw_fchw with tensor.pad", "[model]") {
  const int C = 3, H = 9, W = 9, F = 4, KH = 3, KW = 3, OH = 5, OW = 5;
  std::vector<float> x = randomFloats(C * H * W, 5),
                     w = randomFloats(F * C * KH * KW, 6),
                     bias = randomFloats(F, 7);
  std::string source = R"(
func.func @main(%x: tensor<1x3x9x9xf32>) -> tensor<1x4x5x5xf32> {
  %w = arith.constant dense_resource<w> : tensor<4x3x3x3xf32>
  %bias = arith.constant dense_resource<bias> : tensor<4xf32>
  %zero = arith.constant 0.0 : f32
  %padded = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x3x9x9xf32> to tensor<1x3x11x11xf32>
  %e = tensor.empty() : tensor<1x4x5x5xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4x5x5xf32>) -> tensor<1x4x5x5xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%padded, %w : tensor<1x3x11x11xf32>, tensor<4x3x3x3xf32>) outs(%f : tensor<1x4x5x5xf32>) -> tensor<1x4x5x5xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(n, f, h, w) -> (n, f, h, w)>, affine_map<(n, f, h, w) -> (f)>, affine_map<(n, f, h, w) -> (n, f, h, w)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c, %bias : tensor<1x4x5x5xf32>, tensor<4xf32>) outs(%e : tensor<1x4x5x5xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<1x4x5x5xf32>
  return %y : tensor<1x4x5x5xf32>
}
)" + resourceSection({{"w", bytesOf(w)}, {"bias", bytesOf(bias)}});

  ArtifactSpec spec{"conv",
                    {{"x", KILN_DTYPE_F32, {1, C, H, W}}},
                    {{"y", KILN_DTYPE_F32, {1, F, OH, OW}}}};
  auto artifact = compileAndLoad(source, spec);

  std::vector<float> want(F * OH * OW);
  for (int f = 0; f < F; ++f)
    for (int oh = 0; oh < OH; ++oh)
      for (int ow = 0; ow < OW; ++ow) {
        float acc = bias[f];
        for (int c = 0; c < C; ++c)
          for (int kh = 0; kh < KH; ++kh)
            for (int kw = 0; kw < KW; ++kw) {
              int ih = oh * 2 + kh - 1, iw = ow * 2 + kw - 1;
              if (ih < 0 || ih >= H || iw < 0 || iw >= W)
                continue;
              acc += x[(c * H + ih) * W + iw] *
                     w[((f * C + c) * KH + kh) * KW + kw];
            }
        want[(f * OH + oh) * OW + ow] = acc;
      }
  std::vector<float> y(F * OH * OW);
  REQUIRE(artifact->run({x.data()}, {y.data()}) == 0);
  checkClose(y, want);
}

TEST_CASE("sum over the last axis", "[model]") {
  std::vector<float> x = randomFloats(3 * 5 * 7, 8);
  std::string source = R"(
func.func @main(%x: tensor<3x5x7xf32>) -> tensor<3x5xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x5xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<3x5xf32>) -> tensor<3x5xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, j, k)>, affine_map<(i, j, k) -> (i, j)>],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<3x5x7xf32>) outs(%f : tensor<3x5xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %a, %acc : f32
    linalg.yield %r : f32
  } -> tensor<3x5xf32>
  return %s : tensor<3x5xf32>
}
)";
  ArtifactSpec spec{"reduce",
                    {{"x", KILN_DTYPE_F32, {3, 5, 7}}},
                    {{"sum", KILN_DTYPE_F32, {3, 5}}}};
  auto artifact = compileAndLoad(source, spec);
  std::vector<float> want(15, 0.f), y(15, 123.f);
  for (int i = 0; i < 15; ++i)
    for (int k = 0; k < 7; ++k)
      want[i] += x[i * 7 + k];
  REQUIRE(artifact->run({x.data()}, {y.data()}) == 0);
  checkClose(y, want);
}
