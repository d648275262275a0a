//===- InitAll.cpp - Register Kiln's dialects and passes ------------------===//
#include "compiler/driver/InitAll.h"

#include "backends/cpu/Passes.h"
#include "backends/cuda/CudaPipeline.h"
#include "backends/gpu/GpuPipeline.h"
#include "backends/hip/HipPipeline.h"
#include "dialects/kiln/KilnDialect.h"
#include "passes/fusion/Passes.h"
#include "passes/graph/Passes.h"
#include "passes/lowering/Passes.h"

#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"

void mlir::kiln::registerAllDialects(DialectRegistry &registry) {
  registry.insert<KilnDialect>();
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::registerAllToLLVMIRTranslations(registry);
  registerGpuBackendDialects(registry);
}

void mlir::kiln::registerAllPasses() {
  mlir::registerAllPasses();
  registerGraphPasses();
  registerFusionPasses();
  registerLoweringPasses();
  registerCpuBackendPasses();
  registerGpuBackendPasses();
  registerCudaBackendPasses();
  registerHipBackendPasses();
}
