//===- ArtifactNhwcConvTest.cpp - NHWC convolutions against C++ loops -----===//
//
// kiln-tile-nhwc-convolutions end to end: conv_2d_nhwc_hwcf as a direct
// convolution (strides, dilations, padding through tensor.pad, C/F/W that
// are not multiples of the register tile, 1x1, 3x3, 7x7 stride 2, batch 2,
// several thread-pool tiles, K blocks of several runs and of split runs) and
// depthwise_conv_2d_nhwc_hwc (3x3 stride 1 and 2, dilation, channels not a
// multiple of the vector width, constant and variable filters, padding read
// with border checks in blocks at the edges and unchecked ones inside).
// References are plain loops in double precision.
//
//===----------------------------------------------------------------------===//
#include "BackendTestSupport.h"

#include "compiler/logging/Report.h"

#include <catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <string>

using namespace kiln_test;
using mlir::kiln::ArtifactSpec;

namespace {

struct NhwcCase {
  int64_t batch, h, w, c, k, f; // f: filters (depthwise: unused)
  int64_t stride, dilation, pad;
  bool depthwise = false;
  bool constantFilter = true;
  bool nchw = false; // the same convolution in NCHW (for the benchmark only)
  float fill = 0;    // the value the result accumulates into
};

int64_t outSize(int64_t in, int64_t k, const NhwcCase &t) {
  return (in + 2 * t.pad - t.dilation * (k - 1) - 1) / t.stride + 1;
}

/// The module: input (padded by tensor.pad when `pad`), filter constant or
/// an input, result accumulated into a fill of t.fill. NHWC / HWCF (HWC for
/// depthwise), or NCHW / FCHW (CHW) when `t.nchw`.
std::string convSource(const NhwcCase &t, const std::vector<float> &filter) {
  int64_t oh = outSize(t.h, t.k, t), ow = outSize(t.w, t.k, t);
  int64_t outC = t.depthwise ? t.c : t.f;
  auto image = [&](int64_t c, int64_t h, int64_t w) {
    return t.nchw ? tensorType({t.batch, c, h, w})
                  : tensorType({t.batch, h, w, c});
  };
  std::string xT = image(t.c, t.h, t.w);
  std::string pT = image(t.c, t.h + 2 * t.pad, t.w + 2 * t.pad);
  std::string wT = t.depthwise ? (t.nchw ? tensorType({t.c, t.k, t.k})
                                         : tensorType({t.k, t.k, t.c}))
                               : (t.nchw ? tensorType({t.f, t.c, t.k, t.k})
                                         : tensorType({t.k, t.k, t.c, t.f}));
  std::string yT = image(outC, oh, ow);
  std::string s = "func.func @main(%x: " + xT +
                  (t.constantFilter ? "" : ", %w: " + wT) + ") -> " + yT +
                  " {\n  %zero = arith.constant 0.0 : f32\n  %init = "
                  "arith.constant " +
                  std::to_string(t.fill) + " : f32\n";
  if (t.constantFilter)
    s += "  %w = arith.constant dense_resource<w> : " + wT + "\n";
  std::string in = "%x";
  if (t.pad) {
    std::string p = std::to_string(t.pad);
    std::string spatial = p + ", " + p;
    std::string low =
        t.nchw ? "[0, 0, " + spatial + "]" : "[0, " + spatial + ", 0]";
    s += "  %p = tensor.pad %x low" + low + " high" + low +
         " {\n  ^bb0(%i: index, %j: index, %k: index, %l: "
         "index):\n    tensor.yield %zero : f32\n  } : " +
         xT + " to " + pT + "\n";
    in = "%p";
  }
  std::string attrs = "{dilations = dense<" + std::to_string(t.dilation) +
                      "> : tensor<2xi64>, strides = dense<" +
                      std::to_string(t.stride) + "> : tensor<2xi64>}";
  std::string op = t.depthwise ? (t.nchw ? "linalg.depthwise_conv_2d_nchw_chw "
                                         : "linalg.depthwise_conv_2d_nhwc_hwc ")
                               : (t.nchw ? "linalg.conv_2d_nchw_fchw "
                                         : "linalg.conv_2d_nhwc_hwcf ");
  s += "  %e = tensor.empty() : " + yT +
       "\n  %f = linalg.fill ins(%init : f32) outs(%e : " + yT + ") -> " + yT +
       "\n  %y = " + op + attrs + " ins(" + in + ", %w : " + (t.pad ? pT : xT) +
       ", " + wT + ") outs(%f : " + yT + ") -> " + yT +
       "\n  return %y : " + yT + "\n}\n";
  if (t.constantFilter)
    s += resourceSection({{"w", bytesOf(filter)}});
  return s;
}

/// `winograd`: 0 the direct kernel, 2 or 4 that Winograd tile for 3x3
/// stride-1 convolutions (CpuCodegenOptions::winograd).
void checkNhwc(const NhwcCase &t, int64_t winograd = 0) {
  INFO((t.depthwise ? "depthwise" : "conv")
       << " batch " << t.batch << " " << t.h << "x" << t.w << "x" << t.c
       << " kernel " << t.k << " F " << t.f << " stride " << t.stride
       << " dilation " << t.dilation << " pad " << t.pad
       << (t.constantFilter ? "" : " variable filter") << " winograd "
       << winograd);
  int64_t oh = outSize(t.h, t.k, t), ow = outSize(t.w, t.k, t);
  int64_t outC = t.depthwise ? t.c : t.f;
  std::vector<float> x = randomFloats(t.batch * t.h * t.w * t.c, 21);
  std::vector<float> w =
      randomFloats(t.k * t.k * t.c * (t.depthwise ? 1 : t.f), 22);

  std::vector<mlir::kiln::TensorSpec> inputs = {
      {"x", KILN_DTYPE_F32, {t.batch, t.h, t.w, t.c}}};
  if (!t.constantFilter)
    inputs.push_back({"w", KILN_DTYPE_F32,
                      t.depthwise ? std::vector<int64_t>{t.k, t.k, t.c}
                                  : std::vector<int64_t>{t.k, t.k, t.c, t.f}});
  ArtifactSpec spec{
      "nhwc", inputs, {{"y", KILN_DTYPE_F32, {t.batch, oh, ow, outC}}}};
  mlir::kiln::report::reset();
  auto artifact =
      compileAndLoad(convSource(t, w), spec, /*optLevel=*/2, winograd);
  // Forced Winograd took every 3x3 stride-1 convolution.
  if (winograd)
    CHECK(mlir::kiln::report::counters().count("winograd_convolutions") == 1);

  std::vector<double> want =
      nhwcConvReference({t.batch, t.h, t.w, t.c, t.k, t.f, t.stride, t.dilation,
                         t.pad, t.depthwise},
                        x, w);
  for (double &v : want)
    v += t.fill;
  // Winograd's transforms round at the scale of the whole tile: every
  // output within 1e-4 of the largest one (F(4x4, 3x3) over 352 channels:
  // 2.5e-4 on outputs of up to about 60), not of itself.
  double largest = 0;
  for (double v : want)
    largest = std::max(largest, std::fabs(v));
  for (int threads : {3, 1}) {
    std::vector<float> y(want.size(), -5.f);
    std::vector<const void *> in = {x.data()};
    if (!t.constantFilter)
      in.push_back(w.data());
    REQUIRE(artifact->run(in, {y.data()}, threads) == 0);
    if (!winograd) {
      checkClose(y, want);
      continue;
    }
    size_t bad = 0;
    for (size_t i = 0; i < y.size(); ++i)
      if (!(std::fabs(y[i] - want[i]) <= 1e-4 * largest) && bad++ < 5)
        FAIL_CHECK("element " << i << ": got " << y[i] << ", want " << want[i]
                              << " (largest " << largest << ")");
    CHECK(bad == 0);
  }
}

} // namespace

TEST_CASE("direct NHWC convolution", "[nhwc]") {
  // batch, h, w, c, k, f, stride, dilation, pad
  checkNhwc({1, 10, 10, 16, 3, 40, 1, 1, 0}); // F past the panels
  checkNhwc({1, 9, 11, 5, 3, 7, 1, 1, 1});    // odd C, F, W; padding
  checkNhwc({2, 12, 13, 8, 3, 33, 2, 1, 1});  // batch 2, stride 2
  checkNhwc({1, 13, 13, 6, 3, 16, 1, 2, 2});  // dilation 2
  checkNhwc({1, 7, 9, 19, 1, 24, 1, 1, 0});   // 1x1 stride 1
  checkNhwc({1, 8, 8, 12, 1, 64, 2, 1, 0});   // 1x1 stride 2
  checkNhwc({1, 23, 21, 3, 7, 20, 2, 1, 3});  // 7x7 stride 2 stem
  // Several thread-pool tiles in M and N, remainder rows.
  checkNhwc({1, 15, 15, 96, 3, 200, 1, 1, 1});
  // K blocks of at most 1024 floats (nhwcConvolutionTileK): filter rows of
  // 3 x 352 = 1056 floats split in two K blocks each, 72 filters (the last
  // panel masked).
  checkNhwc({1, 9, 8, 352, 3, 72, 1, 1, 1});
  // K blocks of two filter rows (3 x 150 = 450 floats) and a partial last
  // block of one.
  checkNhwc({1, 9, 10, 150, 3, 36, 1, 1, 1});
}

TEST_CASE("Winograd NHWC convolution", "[nhwc]") {
  // batch, h, w, c, k, f, stride, dilation, pad; each by F(2x2, 3x3) and
  // F(4x4, 3x3), within 1e-4 of the largest output.
  for (int64_t m : {2, 4}) {
    checkNhwc({1, 10, 10, 16, 3, 40, 1, 1, 0}, m);  // tiles fit in 8 x 8
    checkNhwc({1, 9, 11, 5, 3, 7, 1, 1, 1}, m);     // odd C, F; edge tiles
    checkNhwc({2, 12, 13, 8, 3, 33, 1, 1, 1}, m);   // batch 2
    checkNhwc({1, 15, 15, 96, 3, 200, 1, 1, 1}, m); // 96 channels
    checkNhwc({1, 9, 8, 352, 3, 72, 1, 1, 1}, m);   // 352 channels
    checkNhwc({1, 3, 3, 24, 3, 16, 1, 1, 2}, m);    // pad 2 > image/2
    // Accumulating into a fill of 0.75 (the output transform adds it).
    NhwcCase filled{1, 6, 7, 32, 3, 48, 1, 1, 1};
    filled.fill = 0.75f;
    checkNhwc(filled, m);
  }
}

TEST_CASE("NHWC depthwise convolution", "[nhwc]") {
  // batch, h, w, c, k, f (unused), stride, dilation, pad
  checkNhwc({1, 12, 12, 32, 3, 0, 1, 1, 1, true});       // 3x3 stride 1
  checkNhwc({1, 13, 11, 21, 3, 0, 2, 1, 1, true});       // stride 2, odd C, W
  checkNhwc({2, 9, 10, 40, 3, 0, 1, 2, 2, true});        // batch 2, dilation 2
  checkNhwc({1, 10, 19, 7, 5, 0, 1, 1, 2, true, false}); // variable filter
  // Wide rows: register blocks inside the image (no column checks) between
  // blocks reaching into the left and right padding.
  checkNhwc({1, 6, 40, 16, 3, 0, 1, 1, 1, true});
  checkNhwc({1, 7, 45, 24, 3, 0, 2, 1, 1, true});
  // Few rows of several channel vectors (MobileNetV2's 7x7 maps).
  checkNhwc({1, 7, 7, 96, 3, 0, 1, 1, 1, true});
  checkNhwc({2, 4, 5, 64, 3, 0, 2, 1, 1, true});
}

// Not a test: writes NCHW and NHWC artifacts of ResNet/MobileNet-like
// convolutions (and a manifest of their FLOPs) into $KILN_CONV_BENCH_DIR for
// benchmarks/conv_layouts.py to time with `kiln bench`.
TEST_CASE("NCHW and NHWC convolution artifacts for benchmarks",
          "[.conv_bench]") {
  const char *dir = std::getenv("KILN_CONV_BENCH_DIR");
  if (!dir) {
    WARN("KILN_CONV_BENCH_DIR not set, nothing written");
    return;
  }
  struct Named {
    const char *name;
    NhwcCase shape;
  };
  // batch, h, w, c, k, f, stride, dilation, pad, depthwise
  std::vector<Named> cases = {
      {"conv3x3_64_56x56", {1, 56, 56, 64, 3, 64, 1, 1, 1}},
      {"conv3x3_256_14x14", {1, 14, 14, 256, 3, 256, 1, 1, 1}},
      {"conv1x1_64to256_56x56", {1, 56, 56, 64, 1, 256, 1, 1, 0}},
      {"conv1x1s2_64to128_56x56", {1, 56, 56, 64, 1, 128, 2, 1, 0}},
      {"stem7x7s2_3to64_224x224", {1, 224, 224, 3, 7, 64, 2, 1, 3}},
      {"dw3x3_32_112x112", {1, 112, 112, 32, 3, 0, 1, 1, 1, true}},
      {"dw3x3s2_96_112x112", {1, 112, 112, 96, 3, 0, 2, 1, 1, true}},
      {"dw3x3_576_14x14", {1, 14, 14, 576, 3, 0, 1, 1, 1, true}},
  };
  std::ofstream manifest(std::string(dir) + "/manifest.txt");
  for (const Named &c : cases) {
    const NhwcCase &t = c.shape;
    int64_t oh = outSize(t.h, t.k, t), ow = outSize(t.w, t.k, t);
    int64_t outC = t.depthwise ? t.c : t.f;
    int64_t flops =
        2 * t.batch * oh * ow * outC * t.k * t.k * (t.depthwise ? 1 : t.c);
    std::vector<float> w =
        randomFloats(t.k * t.k * t.c * (t.depthwise ? 1 : t.f), 22);
    for (bool nchw : {true, false}) {
      NhwcCase variant = t;
      variant.nchw = nchw;
      auto dims = [&](int64_t ch, int64_t h, int64_t w) {
        return nchw ? std::vector<int64_t>{t.batch, ch, h, w}
                    : std::vector<int64_t>{t.batch, h, w, ch};
      };
      ArtifactSpec spec{"conv",
                        {{"x", KILN_DTYPE_F32, dims(t.c, t.h, t.w)}},
                        {{"y", KILN_DTYPE_F32, dims(outC, oh, ow)}}};
      std::string file =
          std::string(dir) + "/" + c.name + (nchw ? "_nchw.so" : "_nhwc.so");
      std::string error = compileToFile(convSource(variant, w), spec,
                                        mlir::kiln::CpuTarget::host(), file);
      INFO(c.name << ": " << error);
      REQUIRE(error.empty());
    }
    manifest << c.name << " " << flops << "\n";
  }
}
