//===- HipPipeline.cpp - ROCDL conversion and code objects ----------------===//
#include "backends/hip/HipPipeline.h"
#include "backends/gpu/Passes.h"
#include "backends/hip/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::kiln;

/// @kiln_kernels down to what every AMD arch shares (vector ops, views,
/// affine and structured control flow lowered); kiln-hip-serialize does the
/// chipset-specific conversion per arch.
static void addHipLeaf(OpPassManager &pm, const GpuCodegenOptions &options) {
  OpPassManager &device = pm.nest<gpu::GPUModuleOp>();
  device.addPass(createLowerVectorOps());
  device.addPass(memref::createFoldMemRefAliasOpsPass());
  device.addPass(memref::createExpandStridedMetadataPass());
  device.addPass(createLowerAffinePass());
  arith::ArithExpandOpsPassOptions expand;
  expand.includeBf16 = true;
  device.addPass(arith::createArithExpandOpsPass(expand));
  device.addPass(createSCFToControlFlowPass());
  device.addPass(createCanonicalizerPass());

  SerializeHipOptions serialize;
  serialize.archs.assign(options.target.gpu.archs.begin(),
                         options.target.gpu.archs.end());
  serialize.optLevel = options.optLevel > 0 ? 3 : 0;
  pm.addPass(createSerializeHip(serialize));
}

void mlir::kiln::buildHipCodegenPipeline(OpPassManager &pm,
                                         const GpuCodegenOptions &options) {
  buildGpuCodegenPipeline(pm, options, addHipLeaf);
}

void mlir::kiln::registerHipBackendPasses() { registerKilnHipPasses(); }
