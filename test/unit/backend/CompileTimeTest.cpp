//===- CompileTimeTest.cpp - A ResNet-18-sized module compiles quickly ----===//
//
// 20 convolutions and a classifier with ResNet-18's shapes and 46 MB of
// dense_resource weights (set as blobs after parsing, as the importer does,
// instead of 90 MB of hex). Prints the time of each phase; fails above a
// minute.
//
//===----------------------------------------------------------------------===//
#include "BackendTestSupport.h"

#include "backends/cpu/CpuPipeline.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <catch.hpp>

#include <chrono>
#include <cmath>
#include <cstring>
#include <dlfcn.h>
#include <iostream>
#include <sstream>

using namespace kiln_test;

namespace {
/// Emits ResNet-18 (batch 1, 3x224x224) in linalg on tensors; batch norm is
/// assumed folded into conv weights and biases.
class ResNetWriter {
public:
  std::string module();
  int64_t weightBytes = 0;

private:
  std::string tensor(int64_t c, int64_t h, int64_t w) {
    return "tensor<1x" + std::to_string(c) + "x" + std::to_string(h) + "x" +
           std::to_string(w) + "xf32>";
  }
  std::string fresh() { return "%v" + std::to_string(next++); }
  std::string weight(const std::string &shape, int64_t elements);
  std::string conv(const std::string &in, int64_t inC, int64_t outC, int64_t hw,
                   int64_t k, int64_t stride, bool relu, int64_t &outHW);
  std::string block(const std::string &in, int64_t inC, int64_t outC,
                    int64_t &hw, int64_t stride);

  std::ostringstream body;
  int next = 0, weights = 0;
};

std::string ResNetWriter::weight(const std::string &shape, int64_t elements) {
  std::string name = fresh();
  body << "  " << name << " = arith.constant dense_resource<w" << weights++
       << "> : tensor<" << shape << "xf32>\n";
  weightBytes += elements * 4;
  return name;
}

std::string ResNetWriter::conv(const std::string &in, int64_t inC, int64_t outC,
                               int64_t hw, int64_t k, int64_t stride, bool relu,
                               int64_t &outHW) {
  int64_t pad = k / 2, padded = hw + 2 * pad;
  outHW = (padded - k) / stride + 1;
  std::string w = weight(std::to_string(outC) + "x" + std::to_string(inC) +
                             "x" + std::to_string(k) + "x" + std::to_string(k),
                         outC * inC * k * k);
  std::string b = weight(std::to_string(outC), outC);
  std::string p = fresh(), e = fresh(), f = fresh(), c = fresh(), y = fresh();
  std::string outT = tensor(outC, outHW, outHW);
  body << "  " << p << " = tensor.pad " << in << " low[0, 0, " << pad << ", "
       << pad << "] high[0, 0, " << pad << ", " << pad
       << "] {\n  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):\n"
       << "    tensor.yield %zero : f32\n  } : " << tensor(inC, hw, hw)
       << " to " << tensor(inC, padded, padded) << "\n";
  body << "  " << e << " = tensor.empty() : " << outT << "\n";
  body << "  " << f << " = linalg.fill ins(%zero : f32) outs(" << e << " : "
       << outT << ") -> " << outT << "\n";
  body << "  " << c
       << " = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, "
          "strides = dense<"
       << stride << "> : tensor<2xi64>} ins(" << p << ", " << w << " : "
       << tensor(inC, padded, padded) << ", tensor<" << outC << "x" << inC
       << "x" << k << "x" << k << "xf32>) outs(" << f << " : " << outT
       << ") -> " << outT << "\n";
  body << "  " << y
       << " = linalg.generic {indexing_maps = [#id4, #chan, #id4], "
          "iterator_types = [\"parallel\", \"parallel\", \"parallel\", "
          "\"parallel\"]} ins("
       << c << ", " << b << " : " << outT << ", tensor<" << outC
       << "xf32>) outs(" << e << " : " << outT
       << ") {\n  ^bb0(%a: f32, %bb: f32, %o: f32):\n"
       << "    %s = arith.addf %a, %bb : f32\n"
       << (relu ? "    %r = arith.maximumf %s, %zero : f32\n"
                  "    linalg.yield %r : f32\n"
                : "    linalg.yield %s : f32\n")
       << "  } -> " << outT << "\n";
  return y;
}

std::string ResNetWriter::block(const std::string &in, int64_t inC,
                                int64_t outC, int64_t &hw, int64_t stride) {
  int64_t h1, h2;
  std::string a = conv(in, inC, outC, hw, 3, stride, true, h1);
  std::string b = conv(a, outC, outC, h1, 3, 1, false, h2);
  std::string skip = in;
  if (stride != 1 || inC != outC) {
    int64_t hs;
    skip = conv(in, inC, outC, hw, 1, stride, false, hs);
  }
  std::string outT = tensor(outC, h2, h2), e = fresh(), y = fresh();
  body << "  " << e << " = tensor.empty() : " << outT << "\n";
  body << "  " << y
       << " = linalg.generic {indexing_maps = [#id4, #id4, #id4], "
          "iterator_types = [\"parallel\", \"parallel\", \"parallel\", "
          "\"parallel\"]} ins("
       << b << ", " << skip << " : " << outT << ", " << outT << ") outs(" << e
       << " : " << outT << ") {\n  ^bb0(%a: f32, %bb: f32, %o: f32):\n"
       << "    %s = arith.addf %a, %bb : f32\n"
       << "    %r = arith.maximumf %s, %zero : f32\n"
       << "    linalg.yield %r : f32\n  } -> " << outT << "\n";
  hw = h2;
  return y;
}

std::string ResNetWriter::module() {
  int64_t hw;
  std::string x = conv("%x", 3, 64, 224, 7, 2, true, hw); // 112
  // Max pool 3x3 stride 2 (inputs are >= 0 after relu, so 0 padding is
  // exact).
  std::string p = fresh(), e = fresh(), f = fresh(), win = fresh(),
              pool = fresh();
  body
      << "  " << p << " = tensor.pad " << x
      << " low[0, 0, 1, 1] high[0, 0, 1, 1] {\n  ^bb0(%i0: index, %i1: "
         "index, %i2: index, %i3: index):\n    tensor.yield %zero : f32\n  } : "
      << tensor(64, 112, 112) << " to " << tensor(64, 114, 114) << "\n";
  body << "  " << e << " = tensor.empty() : " << tensor(64, 56, 56) << "\n";
  body << "  " << f << " = linalg.fill ins(%zero : f32) outs(" << e << " : "
       << tensor(64, 56, 56) << ") -> " << tensor(64, 56, 56) << "\n";
  body << "  " << win << " = tensor.empty() : tensor<3x3xf32>\n";
  body << "  " << pool
       << " = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, "
          "strides = dense<2> : tensor<2xi64>} ins("
       << p << ", " << win << " : " << tensor(64, 114, 114)
       << ", tensor<3x3xf32>) outs(" << f << " : " << tensor(64, 56, 56)
       << ") -> " << tensor(64, 56, 56) << "\n";
  hw = 56;
  std::string y = pool;
  int64_t channels = 64;
  for (int64_t outC : {64, 128, 256, 512}) {
    y = block(y, channels, outC, hw, outC == 64 ? 1 : 2);
    y = block(y, outC, outC, hw, 1);
    channels = outC;
  }
  // Global average pool and the classifier.
  std::string sumE = fresh(), sumF = fresh(), sum = fresh(),
              w = weight("512x1000", 512 * 1000), b = weight("1x1000", 1000),
              mmE = fresh(), mmF = fresh(), mm = fresh(), out = fresh();
  body << "  " << sumE << " = tensor.empty() : tensor<1x512xf32>\n";
  body << "  " << sumF << " = linalg.fill ins(%zero : f32) outs(" << sumE
       << " : tensor<1x512xf32>) -> tensor<1x512xf32>\n";
  body << "  " << sum
       << " = linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, "
          "c, h, w)>, affine_map<(n, c, h, w) -> (n, c)>], iterator_types = "
          "[\"parallel\", \"parallel\", \"reduction\", \"reduction\"]} ins("
       << y << " : " << tensor(512, 7, 7) << ") outs(" << sumF
       << " : tensor<1x512xf32>) {\n  ^bb0(%a: f32, %acc: f32):\n"
       << "    %s = arith.addf %a, %acc : f32\n    linalg.yield %s : f32\n"
       << "  } -> tensor<1x512xf32>\n";
  body << "  " << mmE << " = tensor.empty() : tensor<1x1000xf32>\n";
  body << "  " << mmF << " = linalg.fill ins(%zero : f32) outs(" << mmE
       << " : tensor<1x1000xf32>) -> tensor<1x1000xf32>\n";
  body << "  " << mm << " = linalg.matmul ins(" << sum << ", " << w
       << " : tensor<1x512xf32>, tensor<512x1000xf32>) outs(" << mmF
       << " : tensor<1x1000xf32>) -> tensor<1x1000xf32>\n";
  body << "  " << out
       << " = linalg.generic {indexing_maps = [#id2, #id2, #id2], "
          "iterator_types = [\"parallel\", \"parallel\"]} ins("
       << mm << ", " << b << " : tensor<1x1000xf32>, tensor<1x1000xf32>) outs("
       << mmE
       << " : tensor<1x1000xf32>) {\n  ^bb0(%a: f32, %bb: f32, %o: f32):\n"
       << "    %m = arith.mulf %a, %inv49 : f32\n"
       << "    %s = arith.addf %m, %bb : f32\n    linalg.yield %s : f32\n"
       << "  } -> tensor<1x1000xf32>\n";

  return "#id4 = affine_map<(n, c, h, w) -> (n, c, h, w)>\n"
         "#chan = affine_map<(n, c, h, w) -> (c)>\n"
         "#id2 = affine_map<(i, j) -> (i, j)>\n"
         "func.func @main(%x: tensor<1x3x224x224xf32>) -> "
         "tensor<1x1000xf32> {\n"
         "  %zero = arith.constant 0.0 : f32\n"
         "  %inv49 = arith.constant 0.0204081632 : f32\n" +
         body.str() + "  return " + out + " : tensor<1x1000xf32>\n}\n";
}

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}
} // namespace

TEST_CASE("a ResNet-18-sized module compiles in well under a minute",
          "[compile_time]") {
  auto start = std::chrono::steady_clock::now();
  ResNetWriter writer;
  std::string source = writer.module();

  mlir::DialectRegistry registry;
  mlir::kiln::registerCpuBackendDialects(registry);
  mlir::MLIRContext context(registry);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(source, &context);
  REQUIRE(module);
  // Give every weight its bytes, as the ONNX importer would.
  int64_t blobs = 0;
  module->walk([&](mlir::Operation *op) {
    for (mlir::NamedAttribute attr : op->getAttrs()) {
      auto resource =
          mlir::dyn_cast<mlir::DenseResourceElementsAttr>(attr.getValue());
      if (!resource)
        continue;
      int64_t count = resource.getNumElements();
      std::vector<float> values =
          randomFloats(count, unsigned(blobs++), -0.05f, 0.05f);
      resource.getRawHandle().getResource()->setBlob(
          mlir::HeapAsmResourceBlob::allocateAndCopyInferAlign(
              llvm::ArrayRef<float>(values)));
    }
  });
  REQUIRE(blobs == 2 * 21);
  REQUIRE(writer.weightBytes > 45'000'000);
  double parse = secondsSince(start);

  auto pipelineStart = std::chrono::steady_clock::now();
  mlir::PassManager pm(&context);
  mlir::kiln::CpuCodegenOptions options{mlir::kiln::CpuTarget::host(), 2};
  mlir::kiln::buildCpuCodegenPipeline(pm, options);
  REQUIRE(mlir::succeeded(pm.run(*module)));
  double pipeline = secondsSince(pipelineStart);

  auto writeStart = std::chrono::steady_clock::now();
  TempDir dir;
  std::string output = dir.file("resnet18.so"), error;
  mlir::kiln::ArtifactSpec spec{"resnet18-shaped",
                                {{"x", KILN_DTYPE_F32, {1, 3, 224, 224}}},
                                {{"logits", KILN_DTYPE_F32, {1, 1000}}}};
  REQUIRE(mlir::succeeded(mlir::kiln::writeArtifact(
      *module, spec, mlir::kiln::Target::cpu(options.target), 2, output,
      error)));
  double write = secondsSince(writeStart);
  double total = secondsSince(start);
  std::cout << "resnet18-shaped: " << writer.weightBytes / 1e6
            << " MB of weights; build+parse " << parse << " s, pipeline "
            << pipeline << " s, writeArtifact " << write << " s, total "
            << total << " s\n";
  CHECK(total < 60);

  void *handle = dlopen(output.c_str(), RTLD_NOW | RTLD_LOCAL);
  REQUIRE(handle);
  auto fn = reinterpret_cast<kiln_artifact_fn>(dlsym(handle, "kiln_artifact"));
  REQUIRE(fn);
  const kiln_artifact_descriptor *d = fn();
  CHECK(d->weights_size >= uint64_t(writer.weightBytes));
  std::cout << "resnet18-shaped: arena " << d->arena_size / 1e6 << " MB\n";
  // Biggest activations: two 64x112x112 buffers live at once (3.2 MB each).
  CHECK(d->arena_size < 16'000'000);

  std::vector<float> x = randomFloats(3 * 224 * 224, 99), logits(1000);
  void *arena = std::aligned_alloc(64, (d->arena_size + 63) / 64 * 64);
  kiln_runtime_callbacks callbacks{};
  callbacks.abi_version = KILN_ABI_VERSION;
  callbacks.num_threads = 1;
  callbacks.weights = readWeightsSection(output, d->weights_size);
  const void *inputs[] = {x.data()};
  void *outputs[] = {logits.data()};
  auto runStart = std::chrono::steady_clock::now();
  REQUIRE(d->entry(const_cast<void *const *>(inputs), outputs, arena,
                   &callbacks) == 0);
  std::cout << "resnet18-shaped: one inference " << secondsSince(runStart)
            << " s\n";
  std::free(arena);
  std::free(const_cast<void *>(callbacks.weights));
  for (float v : logits)
    CHECK(std::isfinite(v));
  dlclose(handle);
}
