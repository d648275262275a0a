//===- Pipeline.cpp - The stages of compilation, per target and -O --------===//

#include "compiler/driver/Pipeline.h"

#include "backends/cpu/CpuPipeline.h"
#include "backends/cuda/CudaPipeline.h"
#include "backends/gpu/Passes.h"
#include "backends/hip/HipPipeline.h"
#include "passes/fusion/Passes.h"
#include "passes/graph/Passes.h"
#include "passes/lowering/Passes.h"

#include "mlir/Transforms/Passes.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TargetParser/Triple.h"

#include <cstdlib>

using namespace mlir;

namespace {
/// The convolution layout mode: the option, else KILN_CONV_LAYOUT, else auto.
std::string convLayoutMode(const kiln::PipelineOptions &options) {
  if (!options.convLayout.empty())
    return options.convLayout;
  if (const char *env = std::getenv("KILN_CONV_LAYOUT"); env && *env)
    return env;
  return "auto";
}

/// The CPU backend's `winograd` option: -1 the cost model, 0 off, else the
/// tile. From the option, else KILN_WINOGRAD, else auto.
int64_t winogradTile(const kiln::PipelineOptions &options) {
  std::string mode = options.winograd;
  if (const char *env = std::getenv("KILN_WINOGRAD");
      mode.empty() && env && *env)
    mode = env;
  if (mode == "off")
    return 0;
  if (mode == "2" || mode == "4")
    return mode[0] - '0';
  if (!mode.empty() && mode != "auto")
    llvm::errs() << "warning: KILN_WINOGRAD=" << mode
                 << " is not auto, off, 2 or 4; using auto\n";
  return -1;
}
} // namespace

void mlir::kiln::buildGraphPipeline(OpPassManager &pm,
                                    const PipelineOptions &options) {
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  if (options.optLevel > 0) {
    // A model's run-time Loop and Scan (scf.while): what the body computes
    // from outer values alone runs once, before the loop.
    pm.addNestedPass<func::FuncOp>(createLoopInvariantCodeMotionPass());
    pm.addPass(createFoldWeights());
    pm.addPass(createFoldBatchNorm());
    pm.addPass(createCanonicalizerPass());
    pm.addPass(createFuseNormalization());
    pm.addPass(createFuseAttention());
    // ONNX QDQ matmuls and convolutions as int8 products where the CPU has
    // VNNI.
    const CpuTarget &host = options.target.host;
    if (options.target.kind == TargetKind::Cpu &&
        llvm::Triple(host.triple).isX86() && host.hasFeature("avx512vnni")) {
      pm.addPass(createFuseQuantizedMatmul());
      pm.addPass(createFuseQuantizedConv());
    }
    pm.addPass(createFoldDequantizedWeights());
    // What dequantizing made constant (the int8 fusions' reshaped biases)
    // folds before the layout passes, which move transposes past constants.
    pm.addPass(createFoldWeights());
    pm.addPass(createMergeContractions());
  }
  if (options.optLevel > 1) {
    // Layout: choose NHWC per conv chain, convert at the boundaries, cancel
    // what cancels, fold the weight/constant transposes left behind.
    ConvLayoutOptions layout;
    layout.layout = convLayoutMode(options);
    pm.addPass(createConvLayout(layout));
    pm.addPass(createSinkTransposes());
    pm.addPass(createFoldWeights());
    pm.addPass(createCanonicalizerPass());
  }
}

void mlir::kiln::buildLoweringPipeline(OpPassManager &pm,
                                       const PipelineOptions &options) {
  // GPU targets write fused attention as one flash kernel of their own,
  // and normalization rows as block reductions.
  if (options.target.isGpu() && options.optLevel > 0) {
    // Matrix cores take attention's products too (AttentionMfma.cpp,
    // AttentionMma.cpp).
    AttentionKernelsOptions attention;
    const GpuTarget &gpu = options.target.gpu;
    attention.matrixUnit = !gpu.hasTensorCores() ? "none"
                           : gpu.isAmd()         ? "mfma"
                                                 : "mma.sync";
    attention.precision = stringifyGpuPrecision(gpu.precision).str();
    pm.addNestedPass<func::FuncOp>(createAttentionKernels(attention));
    pm.addNestedPass<func::FuncOp>(createNormalizationKernels());
  }
  pm.addPass(createLowerToLinalg());
  pm.addPass(createCanonicalizerPass());
  pm.addNestedPass<func::FuncOp>(createUnifySymbolDims());
  pm.addPass(createCSEPass());
  if (options.optLevel > 0)
    pm.addNestedPass<func::FuncOp>(createConcatInPlace());
  pm.addPass(createReportKernels());
}

void mlir::kiln::buildBackendPipeline(OpPassManager &pm,
                                      const PipelineOptions &options) {
  switch (options.target.kind) {
  case TargetKind::Cpu:
    buildCpuCodegenPipeline(
        pm, {options.target.host, options.optLevel, options.releaseWeights,
             options.target.bf16Weights, winogradTile(options)});
    return;
  case TargetKind::Cuda:
    buildCudaCodegenPipeline(pm, {options.target, options.optLevel});
    return;
  case TargetKind::Hip:
    buildHipCodegenPipeline(pm, {options.target, options.optLevel});
    return;
  }
}
