//===- CudaPipeline.cpp - NVVM conversion and serialization ---------------===//
#include "backends/cuda/CudaPipeline.h"
#include "backends/cuda/Passes.h"
#include "backends/gpu/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::kiln;

/// @kiln_kernels to the NVVM/LLVM dialects, then PTX, cubins and a fatbin.
static void addCudaLeaf(OpPassManager &pm, const GpuCodegenOptions &options) {
  OpPassManager &device = pm.nest<gpu::GPUModuleOp>();
  device.addPass(createLowerVectorOps());
  device.addPass(memref::createFoldMemRefAliasOpsPass());
  device.addPass(memref::createExpandStridedMetadataPass());
  device.addPass(createLowerAffinePass());
  arith::ArithExpandOpsPassOptions expand;
  expand.includeBf16 = true;
  device.addPass(arith::createArithExpandOpsPass(expand));
  device.addPass(createSCFToControlFlowPass());
  // Buffers are bare pointers: the host passes one address per buffer.
  ConvertGpuOpsToNVVMOpsOptions nvvm;
  nvvm.useBarePtrCallConv = true;
  device.addPass(createConvertGpuOpsToNVVMOps(nvvm));
  // Math libdevice has no function for (trunc, ...) maps to LLVM intrinsics.
  device.addPass(createConvertMathToLLVMPass());
  device.addPass(createReconcileUnrealizedCastsPass());
  device.addPass(createCanonicalizerPass());

  SerializeCudaOptions serialize;
  serialize.archs.assign(options.target.gpu.archs.begin(),
                         options.target.gpu.archs.end());
  serialize.optLevel = options.optLevel > 0 ? 3 : 0;
  pm.addPass(createSerializeCuda(serialize));
}

void mlir::kiln::buildCudaCodegenPipeline(OpPassManager &pm,
                                          const GpuCodegenOptions &options) {
  buildGpuCodegenPipeline(pm, options, addCudaLeaf);
}

void mlir::kiln::registerCudaBackendPasses() { registerKilnCudaPasses(); }
