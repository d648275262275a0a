//===- OutlineKernels.cpp - gpu.launch bodies into one gpu.module ---------===//
//
// Upstream's gpu-kernel-outlining makes one gpu.module per kernel; a Kiln
// artifact carries one device image, so every kernel of the entry goes into
// one module, named by its position (kiln_kernel_N), with the ONNX nodes it
// covers.
//
//===----------------------------------------------------------------------===//
#include "backends/gpu/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Utils/GPUUtils.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_OUTLINEKERNELS
#include "backends/gpu/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;

namespace {
void collectNodeNames(Location loc, llvm::SetVector<StringRef> &names) {
  if (auto name = dyn_cast<NameLoc>(loc)) {
    names.insert(name.getName().getValue());
    return;
  }
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location inner : fused.getLocations())
      collectNodeNames(inner, names);
  if (auto callSite = dyn_cast<CallSiteLoc>(loc))
    collectNodeNames(callSite.getCallee(), names);
}

struct OutlineKernelsPass
    : public kiln::impl::OutlineKernelsBase<OutlineKernelsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto entry = module.lookupSymbol<func::FuncOp>(entryName);
    if (!entry || entry.isExternal()) {
      module.emitError() << "kiln-gpu-outline-kernels: no entry function @"
                         << entryName;
      return signalPassFailure();
    }
    SmallVector<gpu::LaunchOp> launches;
    entry.walk([&](gpu::LaunchOp launch) { launches.push_back(launch); });
    if (launches.empty())
      return;

    MLIRContext *ctx = &getContext();
    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                    UnitAttr::get(ctx));
    OpBuilder b(ctx);
    b.setInsertionPointToEnd(module.getBody());
    auto kernels = gpu::GPUModuleOp::create(b, module.getLoc(), "kiln_kernels");
    SymbolTable symbols(kernels);

    for (auto [index, launch] : llvm::enumerate(launches)) {
      llvm::SetVector<StringRef> nodes;
      launch.walk(
          [&](Operation *op) { collectNodeNames(op->getLoc(), nodes); });
      SmallVector<Value> operands;
      std::string name = "kiln_kernel_" + std::to_string(index);
      gpu::GPUFuncOp func = outlineKernelFunc(launch, name, operands);
      symbols.insert(func);
      SmallVector<Attribute> nodeAttrs;
      for (StringRef node : nodes)
        nodeAttrs.push_back(StringAttr::get(ctx, node));
      func->setAttr("kiln.onnx_nodes", ArrayAttr::get(ctx, nodeAttrs));

      b.setInsertionPoint(launch);
      auto launchFunc = gpu::LaunchFuncOp::create(
          b, launch.getLoc(), func, launch.getGridSizeOperandValues(),
          launch.getBlockSizeOperandValues(),
          launch.getDynamicSharedMemorySize(), operands);
      (void)launchFunc;
      launch.erase();
    }
  }
};
} // namespace
