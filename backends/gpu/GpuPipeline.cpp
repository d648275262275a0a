//===- GpuPipeline.cpp - The GPU code generation pipeline -----------------===//
#include "backends/gpu/GpuPipeline.h"
#include "backends/cpu/CpuPipeline.h"
#include "backends/cpu/Passes.h"
#include "backends/gpu/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/VectorToSCF/VectorToSCF.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVM/ROCDL/Target.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::kiln;

static void addCleanup(OpPassManager &pm) {
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void mlir::kiln::buildGpuCodegenPipeline(OpPassManager &pm,
                                         const GpuCodegenOptions &options,
                                         const GpuLeafBuilder &deviceLeaf) {
  // 1. Tensor level.
  pm.addPass(createMarkInputsReadOnly());
  pm.addNestedPass<func::FuncOp>(createFuseElementwise());
  addCleanup(pm);
  // Contractions as tiled shared-memory kernels with their epilogues.
  if (options.optLevel > 0) {
    ContractionKernelsOptions contractions;
    contractions.precision =
        stringifyGpuPrecision(options.target.gpu.precision).str();
    const GpuTarget &gpu = options.target.gpu;
    contractions.matrixUnit = !gpu.hasTensorCores() ? "none"
                              : gpu.isAmd()         ? "mfma"
                                                    : "mma.sync";
    pm.addNestedPass<func::FuncOp>(createContractionKernels(contractions));
    addCleanup(pm);
  }

  // Every output of a reduction gets its own thread.
  pm.addNestedPass<func::FuncOp>(createParallelDimsFirst());

  // 2. Bufferization, as on the CPU: the entry's buffers become its
  // arguments and views of them.
  addBufferizationPasses(pm);
  // Scalars the host computes (symbolic dims' extents, checks) stay there.
  pm.addNestedPass<func::FuncOp>(createHostScalars());

  // 3. Memory: the arena and the weights live on the device; scratch of a
  // parallel iteration is the thread's own (local memory).
  pm.addNestedPass<func::FuncOp>(createPrivatizeParallelAllocs());
  pm.addPass(createPlanArena());
  pm.addPass(createOutlineWeights());

  // 4. Kernels. A copy is a parallel loop like any other: one thread
  // copying megabytes with memcpy would serialize the GPU.
  ExpandStridedCopiesOptions copies;
  copies.allCopies = true;
  pm.addNestedPass<func::FuncOp>(createExpandStridedCopies(copies));
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToParallelLoopsPass());
  pm.addNestedPass<func::FuncOp>(createForallToParallelLoopPass());
  pm.addNestedPass<func::FuncOp>(createConvertVectorToSCFPass(
      VectorTransferToSCFOptions().enableFullUnroll()));
  addCleanup(pm);
  pm.addPass(createFormKernels());
  addCleanup(pm);
  // Integer powers become functions, which the outlining copies into the
  // device module with the kernels that call them.
  pm.addPass(createConvertMathToFuncs());
  pm.addPass(createOutlineKernels());
  // Each layer's copy of a kernel becomes one kernel.
  pm.addPass(createDedupeKernels());
  pm.addPass(createLaunchCalls());

  // 5. Device code. Run-time expand_shapes first become what
  // expand-strided-metadata takes, in the kernels as on the host.
  pm.addPass(createExpandDynamicShapes());
  if (options.target.gpu.emulate)
    pm.addPass(createEmulateKernels());
  else
    deviceLeaf(pm, options);

  // 6. The host code (and the emulated kernels) for the host CPU.
  addLLVMLoweringPasses(
      pm, CpuCodegenOptions{options.target.host, options.optLevel});
}

void mlir::kiln::registerGpuBackendDialects(DialectRegistry &registry) {
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  ROCDL::registerROCDLTargetInterfaceExternalModels(registry);
}

void mlir::kiln::registerGpuBackendPasses() { registerKilnGpuPasses(); }
