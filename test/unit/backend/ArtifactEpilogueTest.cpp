//===- ArtifactEpilogueTest.cpp - Fused epilogues against C++ loops -------===//
//
// Elementwise consumers of tiled contractions applied in the register tiles
// (EpilogueFusion.cpp): a bias broadcast along the rows or the columns, a
// residual input of the result's shape, and ReLU, on shapes with remainders
// in M and N, several K blocks (the epilogue must run only on the last),
// constant B in panels, variable B, batches, and convolutions through the
// panel im2col (padded last panel) and in place (1x1). References are plain
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

std::string dims(unsigned rank) {
  std::string s;
  for (unsigned d = 0; d < rank; ++d)
    s += (d ? ", d" : "d") + std::to_string(d);
  return s;
}

/// `relu(%y + %bias[dim biasDim] + %res)` as one generic on %y (of `shape`).
std::string epilogue(const std::vector<int64_t> &shape, unsigned biasDim) {
  unsigned rank = shape.size();
  std::string yT = tensorType(shape);
  std::string bT = tensorType({shape[biasDim]});
  std::string id = "affine_map<(" + dims(rank) + ") -> (" + dims(rank) + ")>";
  std::string bias =
      "affine_map<(" + dims(rank) + ") -> (d" + std::to_string(biasDim) + ")>";
  std::string parallel;
  for (unsigned d = 0; d < rank; ++d)
    parallel += std::string(d ? ", " : "") + "\"parallel\"";
  return "  %z = linalg.generic {indexing_maps = [" + id + ", " + bias + ", " +
         id + ", " + id + "], iterator_types = [" + parallel + "]} ins(%y, " +
         "%bias, %res : " + yT + ", " + bT + ", " + yT + ") outs(%e : " + yT +
         ") {\n  ^bb0(%a: f32, %b: f32, %r: f32, %o: f32):\n"
         "    %s = arith.addf %a, %b : f32\n"
         "    %t = arith.addf %s, %r : f32\n"
         "    %u = arith.maximumf %t, %zero : f32\n"
         "    linalg.yield %u : f32\n  } -> " +
         yT + "\n  return %z : " + yT + "\n}\n";
}

/// [B] x [M, K] * [K, N] then bias per column and a residual, ReLU.
void checkMatmul(int64_t batch, int64_t m, int64_t k, int64_t n,
                 bool constantRhs) {
  INFO("batch " << batch << " M " << m << " K " << k << " N " << n
                << (constantRhs ? " constant B" : " variable B"));
  int64_t b = std::max<int64_t>(batch, 1);
  std::vector<float> x = randomFloats(b * m * k, 41),
                     w = randomFloats((constantRhs ? 1 : b) * k * n, 42),
                     bias = randomFloats(n, 43),
                     res = randomFloats(b * m * n, 44);
  auto shape = [&](std::vector<int64_t> d) {
    if (batch)
      d.insert(d.begin(), batch);
    return d;
  };
  std::string xT = tensorType(shape({m, k})),
              wT = constantRhs ? tensorType({k, n}) : tensorType(shape({k, n})),
              yT = tensorType(shape({m, n})), bT = tensorType({n});
  std::string op = batch ? "linalg.batch_matmul" : "linalg.matmul";
  std::string source =
      "func.func @main(%x: " + xT + (constantRhs ? "" : ", %w: " + wT) +
      ", %bias: " + bT + ", %res: " + yT + ") -> " + yT + " {\n" +
      (constantRhs ? "  %w = arith.constant dense_resource<w> : " + wT + "\n"
                   : "") +
      "  %zero = arith.constant 0.0 : f32\n  %e = tensor.empty() : " + yT +
      "\n  %f = linalg.fill ins(%zero : f32) outs(%e : " + yT + ") -> " + yT +
      "\n  %y = " + op + " ins(%x, %w : " + xT + ", " + wT +
      ") outs(%f : " + yT + ") -> " + yT + "\n" +
      epilogue(shape({m, n}), batch ? 2 : 1);
  if (constantRhs)
    source += resourceSection({{"w", bytesOf(w)}});
  std::vector<mlir::kiln::TensorSpec> inputs = {
      {"x", KILN_DTYPE_F32, shape({m, k})}};
  if (!constantRhs)
    inputs.push_back({"w", KILN_DTYPE_F32, shape({k, n})});
  inputs.push_back({"bias", KILN_DTYPE_F32, {n}});
  inputs.push_back({"res", KILN_DTYPE_F32, shape({m, n})});
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
        int64_t at = (p * m + i) * n + j;
        want[at] = std::max(0.0, acc + bias[j] + res[at]);
      }
  for (int threads : {3, 1}) {
    std::vector<float> y(b * m * n, -5.f);
    std::vector<const void *> in = {x.data()};
    if (!constantRhs)
      in.push_back(w.data());
    in.push_back(bias.data());
    in.push_back(res.data());
    REQUIRE(artifact->run(in, {y.data()}, threads) == 0);
    checkClose(y, want);
  }
}

struct ConvCase {
  int64_t n, c, h, w, f, kh, kw, stride;
};

/// Unpadded NCHW convolution, then bias per filter, a residual, ReLU.
void checkConv(const ConvCase &t) {
  int64_t oh = (t.h - t.kh) / t.stride + 1, ow = (t.w - t.kw) / t.stride + 1;
  INFO("conv N " << t.n << " C " << t.c << " " << t.h << "x" << t.w << " F "
                 << t.f << " kernel " << t.kh << "x" << t.kw << " stride "
                 << t.stride);
  std::vector<float> x = randomFloats(t.n * t.c * t.h * t.w, 51),
                     w = randomFloats(t.f * t.c * t.kh * t.kw, 52),
                     bias = randomFloats(t.f, 53),
                     res = randomFloats(t.n * t.f * oh * ow, 54);
  std::string xT = tensorType({t.n, t.c, t.h, t.w}),
              wT = tensorType({t.f, t.c, t.kh, t.kw}),
              yT = tensorType({t.n, t.f, oh, ow}), bT = tensorType({t.f});
  std::string s = std::to_string(t.stride);
  std::string source =
      "func.func @main(%x: " + xT + ", %bias: " + bT + ", %res: " + yT +
      ") -> " + yT + " {\n  %w = arith.constant dense_resource<w> : " + wT +
      "\n  %zero = arith.constant 0.0 : f32\n  %e = tensor.empty() : " + yT +
      "\n  %f = linalg.fill ins(%zero : f32) outs(%e : " + yT + ") -> " + yT +
      "\n  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : "
      "tensor<2xi64>, strides = dense<" +
      s + "> : tensor<2xi64>} ins(%x, %w : " + xT + ", " + wT +
      ") outs(%f : " + yT + ") -> " + yT + "\n" +
      epilogue({t.n, t.f, oh, ow}, 1) + resourceSection({{"w", bytesOf(w)}});
  ArtifactSpec spec{"conv",
                    {{"x", KILN_DTYPE_F32, {t.n, t.c, t.h, t.w}},
                     {"bias", KILN_DTYPE_F32, {t.f}},
                     {"res", KILN_DTYPE_F32, {t.n, t.f, oh, ow}}},
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
              for (int64_t j = 0; j < t.kw; ++j)
                acc += double(x[((b * t.c + c) * t.h + y * t.stride + i) * t.w +
                                xo * t.stride + j]) *
                       w[((f * t.c + c) * t.kh + i) * t.kw + j];
          int64_t at = ((b * t.f + f) * oh + y) * ow + xo;
          want[at] = std::max(0.0, acc + bias[f] + res[at]);
        }
  for (int threads : {3, 1}) {
    std::vector<float> y(want.size(), -5.f);
    REQUIRE(artifact->run({x.data(), bias.data(), res.data()}, {y.data()},
                          threads) == 0);
    checkClose(y, want);
  }
}

} // namespace

TEST_CASE("epilogue on a matmul, constant B in panels", "[epilogue]") {
  checkMatmul(0, 9, 31, 33, true);     // remainders in M and N
  checkMatmul(0, 37, 600, 70, true);   // three K blocks, the last partial
  checkMatmul(0, 130, 520, 260, true); // several thread-pool tiles
  checkMatmul(0, 16, 64, 64, true);    // exact register tiles
}

TEST_CASE("epilogue on a matmul, variable B", "[epilogue]") {
  checkMatmul(0, 37, 600, 70, false);
  checkMatmul(0, 1, 1, 1, false);
}

TEST_CASE("epilogue on a batch_matmul", "[epilogue]") {
  checkMatmul(3, 17, 300, 45, false);
}

TEST_CASE("epilogue on convolutions", "[epilogue]") {
  checkConv({1, 3, 9, 9, 4, 3, 3, 1});     // 49 pixels: padded last panel
  checkConv({2, 5, 12, 10, 17, 3, 3, 2});  // batch 2, stride 2
  checkConv({1, 64, 16, 16, 40, 3, 3, 1}); // K = 576: three K blocks
  checkConv({2, 16, 7, 7, 9, 1, 1, 1});    // 1x1 in place, batch 2
  checkConv({1, 300, 8, 8, 12, 1, 1, 1});  // 1x1 with two K blocks
}
