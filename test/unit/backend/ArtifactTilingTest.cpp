//===- ArtifactTilingTest.cpp - Tiled contractions against C++ loops ------===//
//
// kiln-tile-contractions end to end on shapes chosen to hit every path:
// register-tile remainders in M and N, several K blocks with a partial last
// one, several thread-pool tiles, 1-element dimensions, constant B (packed
// panels) and variable B, batched matmuls and convolutions (strides,
// dilations, 1x1, batch > 1) through the panel im2col. References are plain
// loops in double precision.
//
//===----------------------------------------------------------------------===//
#include "BackendTestSupport.h"

#include <catch.hpp>

#include <cmath>
#include <string>

using namespace kiln_test;
using mlir::kiln::ArtifactSpec;

namespace {

/// [B] x [M, K] * [K, N] (B = 0: plain matmul); the rhs is a weight when
/// `constantRhs`, else a second input.
void checkMatmul(int64_t batch, int64_t m, int64_t k, int64_t n,
                 bool constantRhs) {
  INFO("batch " << batch << " M " << m << " K " << k << " N " << n
                << (constantRhs ? " constant B" : " variable B"));
  int64_t b = std::max<int64_t>(batch, 1);
  std::vector<float> x = randomFloats(b * m * k, 11),
                     w = randomFloats((constantRhs ? 1 : b) * k * n, 12);
  auto shape = [&](std::vector<int64_t> dims) {
    if (batch)
      dims.insert(dims.begin(), batch);
    return dims;
  };
  std::string xT = tensorType(shape({m, k})),
              wT = constantRhs ? tensorType({k, n}) : tensorType(shape({k, n})),
              yT = tensorType(shape({m, n}));
  std::string op = batch ? "linalg.batch_matmul" : "linalg.matmul";
  std::string source =
      "func.func @main(%x: " + xT + (constantRhs ? "" : ", %w: " + wT) +
      ") -> " + yT + " {\n" +
      (constantRhs ? "  %w = arith.constant dense_resource<w> : " + wT + "\n"
                   : "") +
      "  %zero = arith.constant 0.0 : f32\n"
      "  %e = tensor.empty() : " +
      yT + "\n  %f = linalg.fill ins(%zero : f32) outs(%e : " + yT + ") -> " +
      yT + "\n  %y = " + op + " ins(%x, %w : " + xT + ", " + wT +
      ") outs(%f : " + yT + ") -> " + yT + "\n  return %y : " + yT + "\n}\n";
  if (constantRhs)
    source += resourceSection({{"w", bytesOf(w)}});

  std::vector<mlir::kiln::TensorSpec> inputs = {
      {"x", KILN_DTYPE_F32, shape({m, k})}};
  if (!constantRhs)
    inputs.push_back({"w", KILN_DTYPE_F32, shape({k, n})});
  ArtifactSpec spec{"mm", inputs, {{"y", KILN_DTYPE_F32, shape({m, n})}}};
  auto artifact = compileAndLoad(source, spec);

  std::vector<double> want(b * m * n, 0.0);
  for (int64_t p = 0; p < b; ++p)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0;
        const float *wb = w.data() + (constantRhs ? 0 : p * k * n);
        for (int64_t kk = 0; kk < k; ++kk)
          acc += double(x[(p * m + i) * k + kk]) * wb[kk * n + j];
        want[(p * m + i) * n + j] = acc;
      }
  for (int threads : {3, 1}) {
    std::vector<float> y(b * m * n, -5.f);
    std::vector<const void *> in = {x.data()};
    if (!constantRhs)
      in.push_back(w.data());
    REQUIRE(artifact->run(in, {y.data()}, threads) == 0);
    checkClose(y, want);
  }
}

struct ConvCase {
  int64_t n, c, h, w, f, kh, kw, stride, dilation, pad;
};

void checkConv(const ConvCase &t) {
  int64_t hp = t.h + 2 * t.pad, wp = t.w + 2 * t.pad;
  int64_t oh = (hp - t.dilation * (t.kh - 1) - 1) / t.stride + 1;
  int64_t ow = (wp - t.dilation * (t.kw - 1) - 1) / t.stride + 1;
  INFO("conv N " << t.n << " C " << t.c << " " << t.h << "x" << t.w << " F "
                 << t.f << " kernel " << t.kh << "x" << t.kw << " stride "
                 << t.stride << " dilation " << t.dilation << " pad " << t.pad);
  std::vector<float> x = randomFloats(t.n * t.c * t.h * t.w, 21),
                     w = randomFloats(t.f * t.c * t.kh * t.kw, 22);
  std::string xT = tensorType({t.n, t.c, t.h, t.w}),
              pT = tensorType({t.n, t.c, hp, wp}),
              wT = tensorType({t.f, t.c, t.kh, t.kw}),
              yT = tensorType({t.n, t.f, oh, ow});
  std::string p = std::to_string(t.pad);
  std::string source =
      "func.func @main(%x: " + xT + ") -> " + yT +
      " {\n  %w = arith.constant dense_resource<w> : " + wT +
      "\n  %zero = arith.constant 0.0 : f32\n"
      "  %p = tensor.pad %x low[0, 0, " +
      p + ", " + p + "] high[0, 0, " + p + ", " + p +
      "] {\n  ^bb0(%i: index, %j: index, %k: index, %l: index):\n"
      "    tensor.yield %zero : f32\n  } : " +
      xT + " to " + pT + "\n  %e = tensor.empty() : " + yT +
      "\n  %f = linalg.fill ins(%zero : f32) outs(%e : " + yT + ") -> " + yT +
      "\n  %y = linalg.conv_2d_nchw_fchw {dilations = dense<" +
      std::to_string(t.dilation) + "> : tensor<2xi64>, strides = dense<" +
      std::to_string(t.stride) + "> : tensor<2xi64>} ins(%p, %w : " + pT +
      ", " + wT + ") outs(%f : " + yT + ") -> " + yT + "\n  return %y : " + yT +
      "\n}\n" + resourceSection({{"w", bytesOf(w)}});
  ArtifactSpec spec{"conv",
                    {{"x", KILN_DTYPE_F32, {t.n, t.c, t.h, t.w}}},
                    {{"y", KILN_DTYPE_F32, {t.n, t.f, oh, ow}}}};
  auto artifact = compileAndLoad(source, spec);

  std::vector<double> want(t.n * t.f * oh * ow, 0.0);
  for (int64_t b = 0; b < t.n; ++b)
    for (int64_t f = 0; f < t.f; ++f)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t xo = 0; xo < ow; ++xo) {
          double acc = 0;
          for (int64_t c = 0; c < t.c; ++c)
            for (int64_t i = 0; i < t.kh; ++i)
              for (int64_t j = 0; j < t.kw; ++j) {
                int64_t iy = y * t.stride + i * t.dilation - t.pad;
                int64_t ix = xo * t.stride + j * t.dilation - t.pad;
                if (iy < 0 || iy >= t.h || ix < 0 || ix >= t.w)
                  continue;
                acc += double(x[((b * t.c + c) * t.h + iy) * t.w + ix]) *
                       w[((f * t.c + c) * t.kh + i) * t.kw + j];
              }
          want[((b * t.f + f) * oh + y) * ow + xo] = acc;
        }
  for (int threads : {3, 1}) {
    std::vector<float> y(want.size(), -5.f);
    REQUIRE(artifact->run({x.data()}, {y.data()}, threads) == 0);
    checkClose(y, want);
  }
}

} // namespace

TEST_CASE("tiled matmul, constant B in panels", "[tiling]") {
  checkMatmul(0, 1, 7, 5, true);       // one row, N below a panel
  checkMatmul(0, 9, 31, 33, true);     // remainders in M and N
  checkMatmul(0, 37, 300, 70, true);   // two K blocks, the last partial
  checkMatmul(0, 130, 520, 260, true); // several thread-pool tiles
  checkMatmul(0, 16, 64, 64, true);    // exact register tiles
}

TEST_CASE("tiled matmul, variable B", "[tiling]") {
  checkMatmul(0, 37, 300, 70, false);
  checkMatmul(0, 8, 16, 32, false);
  checkMatmul(0, 1, 1, 1, false);
}

TEST_CASE("tiled batch_matmul", "[tiling]") {
  checkMatmul(3, 17, 40, 45, false);
  checkMatmul(2, 1, 5, 3, false);
}

TEST_CASE("convolution through the panel im2col", "[tiling]") {
  checkConv({1, 3, 9, 9, 4, 3, 3, 2, 1, 1});     // stride 2, padding
  checkConv({2, 5, 12, 10, 17, 3, 3, 1, 2, 2});  // batch 2, dilation 2
  checkConv({1, 16, 7, 7, 9, 1, 1, 1, 1, 0});    // 1x1
  checkConv({1, 3, 20, 23, 10, 5, 4, 3, 1, 0});  // non-square kernel, stride 3
  checkConv({1, 64, 14, 14, 40, 3, 3, 1, 1, 1}); // K = 576, two K blocks
}

// The first convolution's result (49 pixels: a padded panel view, strided
// once bufferized) feeds the second one's im2col: its gathers must not
// assume a dense input (they did, and read across the padding).
TEST_CASE("convolution reading a strided convolution result", "[tiling]") {
  const int64_t c = 8, f1 = 16, f2 = 12, hw = 7;
  std::vector<float> x = randomFloats(c * hw * hw, 31),
                     w1 = randomFloats(f1 * c, 32),
                     w2 = randomFloats(f2 * f1, 33);
  std::string source = R"(
func.func @main(%x: tensor<1x8x7x7xf32>) -> tensor<1x12x7x7xf32> {
  %w1 = arith.constant dense_resource<w1> : tensor<16x8x1x1xf32>
  %w2 = arith.constant dense_resource<w2> : tensor<12x16x1x1xf32>
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<1x16x7x7xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<1x16x7x7xf32>) -> tensor<1x16x7x7xf32>
  %y1 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w1 : tensor<1x8x7x7xf32>, tensor<16x8x1x1xf32>) outs(%f1 : tensor<1x16x7x7xf32>) -> tensor<1x16x7x7xf32>
  %e2 = tensor.empty() : tensor<1x12x7x7xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<1x12x7x7xf32>) -> tensor<1x12x7x7xf32>
  %y2 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%y1, %w2 : tensor<1x16x7x7xf32>, tensor<12x16x1x1xf32>) outs(%f2 : tensor<1x12x7x7xf32>) -> tensor<1x12x7x7xf32>
  return %y2 : tensor<1x12x7x7xf32>
}
)" + resourceSection({{"w1", bytesOf(w1)}, {"w2", bytesOf(w2)}});
  ArtifactSpec spec{"chain",
                    {{"x", KILN_DTYPE_F32, {1, c, hw, hw}}},
                    {{"y", KILN_DTYPE_F32, {1, f2, hw, hw}}}};
  auto artifact = compileAndLoad(source, spec);
  std::vector<double> mid(f1 * hw * hw, 0.0), want(f2 * hw * hw, 0.0);
  for (int64_t o = 0; o < f1; ++o)
    for (int64_t p = 0; p < hw * hw; ++p)
      for (int64_t i = 0; i < c; ++i)
        mid[o * hw * hw + p] += double(w1[o * c + i]) * x[i * hw * hw + p];
  for (int64_t o = 0; o < f2; ++o)
    for (int64_t p = 0; p < hw * hw; ++p)
      for (int64_t i = 0; i < f1; ++i)
        want[o * hw * hw + p] +=
            double(w2[o * f1 + i]) * float(mid[i * hw * hw + p]);
  std::vector<float> y(want.size(), -5.f);
  REQUIRE(artifact->run({x.data()}, {y.data()}) == 0);
  checkClose(y, want);
}
