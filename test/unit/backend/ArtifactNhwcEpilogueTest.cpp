//===- ArtifactNhwcEpilogueTest.cpp - NHWC conv epilogues against loops ---===//
//
// Elementwise consumers fused into the NHWC kernels of
// kiln-tile-nhwc-convolutions (a bias read by the consumer or seeding the
// accumulators from a linalg.broadcast init, a residual input, ReLU, Clip)
// for the direct and the depthwise convolution, on shapes with remainders:
// channel counts that are not a multiple of the vector width, 1-pixel
// outputs, stride 2, padding, batch 2, several K blocks (the epilogue must
// apply on the last only). Each case checks that the consumer was fused
// (the report's `epilogues_fused`) and compares with plain loops in double
// precision.
//
//===----------------------------------------------------------------------===//
#include "BackendTestSupport.h"

#include "compiler/logging/Report.h"

#include <catch.hpp>

#include <algorithm>
#include <string>

using namespace kiln_test;
using mlir::kiln::ArtifactSpec;

namespace {

struct EpilogueCase {
  int64_t batch, h, w, c, k, f; // f: filters (depthwise: unused)
  int64_t stride, pad;
  bool depthwise = false;
  bool biasInit = false; ///< bias broadcast as the conv's init, else consumer
  bool residual = false; ///< the consumer adds a residual input
  bool clip = false;     ///< Clip(0, 6) rather than ReLU
};

int64_t outSize(int64_t in, const EpilogueCase &t) {
  return (in + 2 * t.pad - t.k) / t.stride + 1;
}

std::string source(const EpilogueCase &t, const std::vector<float> &filter) {
  int64_t oh = outSize(t.h, t), ow = outSize(t.w, t);
  int64_t outC = t.depthwise ? t.c : t.f;
  std::string xT = tensorType({t.batch, t.h, t.w, t.c});
  std::string pT = tensorType({t.batch, t.h + 2 * t.pad, t.w + 2 * t.pad, t.c});
  std::string wT = t.depthwise ? tensorType({t.k, t.k, t.c})
                               : tensorType({t.k, t.k, t.c, t.f});
  std::string yT = tensorType({t.batch, oh, ow, outC});
  std::string bT = tensorType({outC});
  std::string s = "func.func @main(%x: " + xT + ", %bias: " + bT +
                  ", %res: " + yT + ") -> " + yT +
                  " {\n  %zero = arith.constant 0.0 : f32\n"
                  "  %six = arith.constant 6.0 : f32\n"
                  "  %w = arith.constant dense_resource<w> : " +
                  wT + "\n";
  std::string in = "%x";
  if (t.pad) {
    std::string p = std::to_string(t.pad);
    s += "  %p = tensor.pad %x low[0, " + p + ", " + p + ", 0] high[0, " + p +
         ", " + p +
         ", 0] {\n  ^bb0(%i: index, %j: index, %k: index, %l: index):\n"
         "    tensor.yield %zero : f32\n  } : " +
         xT + " to " + pT + "\n";
    in = "%p";
  }
  s += "  %e = tensor.empty() : " + yT + "\n";
  if (t.biasInit)
    s += "  %i = linalg.broadcast ins(%bias : " + bT + ") outs(%e : " + yT +
         ") dimensions = [0, 1, 2]\n";
  else
    s += "  %i = linalg.fill ins(%zero : f32) outs(%e : " + yT + ") -> " + yT +
         "\n";
  std::string strides = "dense<" + std::to_string(t.stride) + ">";
  s += std::string("  %y = ") +
       (t.depthwise ? "linalg.depthwise_conv_2d_nhwc_hwc"
                    : "linalg.conv_2d_nhwc_hwcf") +
       " {dilations = dense<1> : tensor<2xi64>, strides = " + strides +
       " : tensor<2xi64>} ins(" + in + ", %w : " + (t.pad ? pT : xT) + ", " +
       wT + ") outs(%i : " + yT + ") -> " + yT + "\n";
  std::string id = "affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>";
  std::string ch = "affine_map<(d0, d1, d2, d3) -> (d3)>";
  s += "  %z = linalg.generic {indexing_maps = [" + id + ", " + ch + ", " + id +
       ", " + id +
       "], iterator_types = [\"parallel\", \"parallel\", \"parallel\", "
       "\"parallel\"]} ins(%y, %bias, %res : " +
       yT + ", " + bT + ", " + yT + ") outs(%e : " + yT +
       ") {\n  ^bb0(%a: f32, %b: f32, %r: f32, %o: f32):\n";
  std::string v = "%a";
  if (!t.biasInit) {
    s += "    %s = arith.addf " + v + ", %b : f32\n";
    v = "%s";
  }
  if (t.residual) {
    s += "    %t = arith.addf " + v + ", %r : f32\n";
    v = "%t";
  }
  s += "    %u = arith.maximumf " + v + ", %zero : f32\n";
  v = "%u";
  if (t.clip) {
    s += "    %c = arith.minimumf %u, %six : f32\n";
    v = "%c";
  }
  s += "    linalg.yield " + v + " : f32\n  } -> " + yT +
       "\n  return %z : " + yT + "\n}\n";
  return s + resourceSection({{"w", bytesOf(filter)}});
}

void checkEpilogue(const EpilogueCase &t) {
  INFO((t.depthwise ? "depthwise" : "conv")
       << " batch " << t.batch << " " << t.h << "x" << t.w << "x" << t.c
       << " kernel " << t.k << " F " << t.f << " stride " << t.stride << " pad "
       << t.pad << (t.biasInit ? " bias init" : " bias operand")
       << (t.residual ? " residual" : "") << (t.clip ? " clip" : " relu"));
  int64_t oh = outSize(t.h, t), ow = outSize(t.w, t);
  int64_t outC = t.depthwise ? t.c : t.f;
  std::vector<float> x = randomFloats(t.batch * t.h * t.w * t.c, 31);
  std::vector<float> w =
      randomFloats(t.k * t.k * t.c * (t.depthwise ? 1 : t.f), 32);
  std::vector<float> bias = randomFloats(outC, 33);
  // Outputs straddle the clip bounds.
  std::vector<float> res = randomFloats(t.batch * oh * ow * outC, 34, -4, 8);

  std::vector<int64_t> yShape = {t.batch, oh, ow, outC};
  ArtifactSpec spec{"nhwc_epilogue",
                    {{"x", KILN_DTYPE_F32, {t.batch, t.h, t.w, t.c}},
                     {"bias", KILN_DTYPE_F32, {outC}},
                     {"res", KILN_DTYPE_F32, yShape}},
                    {{"y", KILN_DTYPE_F32, yShape}}};
  mlir::kiln::report::reset();
  auto artifact = compileAndLoad(source(t, w), spec);
  auto counters = mlir::kiln::report::counters();
  CHECK(counters["epilogues_fused"] == 1);

  std::vector<double> want = nhwcConvReference(
      {t.batch, t.h, t.w, t.c, t.k, t.f, t.stride, 1, t.pad, t.depthwise}, x,
      w);
  for (size_t at = 0; at < want.size(); ++at) {
    double v = want[at] + bias[at % outC] + (t.residual ? res[at] : 0.0);
    v = std::max(v, 0.0);
    want[at] = t.clip ? std::min(v, 6.0) : v;
  }
  for (int threads : {3, 1}) {
    std::vector<float> y(want.size(), -5.f);
    REQUIRE(artifact->run({x.data(), bias.data(), res.data()}, {y.data()},
                          threads) == 0);
    checkClose(y, want);
  }
}

} // namespace

TEST_CASE("epilogues fused into the direct NHWC convolution",
          "[nhwc_epilogue]") {
  // batch, h, w, c, k, f, stride, pad, depthwise, biasInit, residual, clip
  checkEpilogue({1, 9, 11, 5, 3, 13, 1, 1, false, false, false, false});
  checkEpilogue({1, 9, 11, 5, 3, 13, 1, 1, false, true, true, false});
  checkEpilogue({2, 12, 13, 8, 3, 33, 2, 1, false, true, true, true});
  // 1-pixel outputs (3x3 over 3x3, no padding; 1x1 stride 2 over 2x2).
  checkEpilogue({1, 3, 3, 7, 3, 20, 1, 0, false, false, true, false});
  checkEpilogue({2, 2, 2, 9, 1, 17, 2, 0, false, true, true, true});
  // Filter rows of 3 x 352 floats split in two K blocks each (KC 1024):
  // six blocks, the bias seeding the first, the epilogue on the last.
  checkEpilogue({1, 8, 9, 352, 3, 40, 1, 1, false, true, true, false});
  // Several thread-pool tiles, one K block.
  checkEpilogue({1, 15, 15, 96, 3, 70, 1, 1, false, true, true, false});
  // 1x1 stride 1, F a whole number of panels.
  checkEpilogue({1, 7, 9, 19, 1, 32, 1, 0, false, false, true, true});
}

TEST_CASE("epilogues fused into the NHWC depthwise convolution",
          "[nhwc_epilogue]") {
  // batch, h, w, c, k, f (unused), stride, pad, depthwise, biasInit,
  // residual, clip
  checkEpilogue({1, 12, 12, 32, 3, 0, 1, 1, true, true, false, true});
  checkEpilogue({1, 13, 11, 21, 3, 0, 2, 1, true, true, false, true});
  checkEpilogue({2, 9, 10, 13, 3, 0, 1, 1, true, false, true, false});
  // 1-pixel outputs, odd channels.
  checkEpilogue({1, 3, 3, 11, 3, 0, 1, 0, true, true, true, true});
  checkEpilogue({1, 2, 2, 5, 3, 0, 2, 1, true, false, false, true});
  // Wide rows: interior blocks and blocks reaching into the padding.
  checkEpilogue({1, 6, 40, 24, 3, 0, 1, 1, true, true, true, false});
  // Few rows of several channel vectors (7x7 maps as in MobileNetV2;
  // batch 2, stride 2).
  checkEpilogue({1, 7, 7, 96, 3, 0, 1, 1, true, true, true, true});
  checkEpilogue({2, 4, 5, 64, 3, 0, 2, 1, true, true, true, false});
}
