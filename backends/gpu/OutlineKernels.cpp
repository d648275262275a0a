//===- OutlineKernels.cpp - gpu.launch bodies into one gpu.module ---------===//
//
// Upstream's gpu-kernel-outlining makes one gpu.module per kernel; a Kiln
// artifact carries one device image, so every kernel of the entry goes into
// one module, named by its position (kiln_kernel_N), with the ONNX nodes it
// covers.
//
//===----------------------------------------------------------------------===//
#include "backends/gpu/Passes.h"
#include "dialects/kiln/NodeLocation.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Utils/GPUUtils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_OUTLINEKERNELS
#include "backends/gpu/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;

namespace {
/// Clones into `launch` the pure ops (views, index arithmetic, constants,
/// which canonicalization hoists out of launches) whose results it reads,
/// and theirs in turn, so it captures only the entry's arguments. Upstream's
/// sinking stops at ops whose operands are not already captured (a view of
/// an argument).
void sinkPureOps(gpu::LaunchOp launch) {
  Region &body = launch.getBody();
  while (true) {
    llvm::SetVector<Value> above;
    getUsedValuesDefinedAbove(body, above);
    llvm::SetVector<Operation *> defs;
    for (Value value : above)
      if (Operation *def = value.getDefiningOp();
          def && def->getNumRegions() == 0 && isMemoryEffectFree(def))
        defs.insert(def);
    if (defs.empty())
      return;
    // In program order, ahead of the clones of earlier rounds (which read
    // these).
    SmallVector<Operation *> ordered(defs.begin(), defs.end());
    llvm::sort(ordered, [](Operation *a, Operation *b) {
      return a->getBlock() == b->getBlock() ? a->isBeforeInBlock(b)
                                            : a->getBlock() < b->getBlock();
    });
    OpBuilder b = OpBuilder::atBlockBegin(&body.front());
    for (Operation *def : ordered) {
      Operation *copy = b.clone(*def);
      for (auto [from, to] : llvm::zip(def->getResults(), copy->getResults()))
        replaceAllUsesInRegionWith(from, to, body);
    }
  }
}

/// The kernel parameters are bare pointers, which a memref of run-time
/// extents, strides or offset (symbolic dims) cannot be. Each such buffer
/// `launch` reads is passed as its base buffer (a rank-0 memref) and its
/// run-time metadata (index values), and rebuilt inside the kernel by a
/// memref.reinterpret_cast of the same type.
void passRunTimeMetadata(gpu::LaunchOp launch) {
  Region &body = launch.getBody();
  llvm::SetVector<Value> above;
  getUsedValuesDefinedAbove(body, above);
  OpBuilder host(launch);
  OpBuilder inside = OpBuilder::atBlockBegin(&body.front());
  for (Value value : above) {
    auto type = dyn_cast<MemRefType>(value.getType());
    if (!type)
      continue;
    auto [strides, offset] = type.getStridesAndOffset();
    if (type.hasStaticShape() && !ShapedType::isDynamic(offset) &&
        llvm::none_of(strides, ShapedType::isDynamic))
      continue;
    Location loc = value.getLoc();
    auto meta = memref::ExtractStridedMetadataOp::create(host, loc, value);
    auto pick = [&](int64_t known, Value runTime) -> OpFoldResult {
      if (ShapedType::isDynamic(known))
        return runTime;
      return inside.getIndexAttr(known);
    };
    SmallVector<OpFoldResult> sizes, steps;
    for (int64_t d = 0; d < type.getRank(); ++d) {
      sizes.push_back(pick(type.getDimSize(d), meta.getSizes()[d]));
      steps.push_back(pick(strides[d], meta.getStrides()[d]));
    }
    auto rebuilt = memref::ReinterpretCastOp::create(
        inside, loc, type, meta.getBaseBuffer(), pick(offset, meta.getOffset()),
        sizes, steps);
    replaceAllUsesInRegionWith(value, rebuilt, body);
  }
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
      sinkPureOps(launch);
      passRunTimeMetadata(launch);
      // The nodes whose work the kernel does: constants and views carry
      // the location of wherever they were first made (CSE shares them).
      std::vector<std::string> nodes;
      launch.walk([&](Operation *op) {
        if (!op->hasTrait<OpTrait::ConstantLike>() &&
            !isa<ViewLikeOpInterface, memref::GetGlobalOp>(op))
          appendOnnxNodeNames(op->getLoc(), nodes);
      });
      SmallVector<Value> operands;
      std::string name = "kiln_kernel_" + std::to_string(index);
      gpu::GPUFuncOp func = outlineKernelFunc(launch, name, operands);
      symbols.insert(func);
      // Shared buffers 16-byte aligned: the device leaves declare them with
      // their element type's alignment, while LLVM may vectorize accesses
      // assuming a global's preferred one.
      for (unsigned i = 0; i < func.getNumWorkgroupAttributions(); ++i)
        func.setWorkgroupAttributionAttr(i, "llvm.align",
                                         b.getI64IntegerAttr(16));
      SmallVector<Attribute> nodeAttrs;
      for (const std::string &node : nodes)
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

    // Constants the kernels read (splats the weights blob leaves out) and
    // functions they call (integer powers) go with them into the device
    // module, those functions' own callees too.
    SmallVector<Operation *> worklist(kernels.getOps<gpu::GPUFuncOp>());
    while (!worklist.empty()) {
      Operation *root = worklist.pop_back_val();
      root->walk([&](Operation *op) {
        FlatSymbolRefAttr ref;
        if (auto get = dyn_cast<memref::GetGlobalOp>(op))
          ref = get.getNameAttr();
        else if (auto call = dyn_cast<func::CallOp>(op))
          ref = call.getCalleeAttr();
        if (!ref || symbols.lookup(ref.getAttr()))
          return;
        Operation *symbol = module.lookupSymbol(ref.getAttr());
        if (!isa_and_nonnull<memref::GlobalOp, func::FuncOp>(symbol))
          return;
        b.setInsertionPointToStart(kernels.getBody());
        Operation *copy = b.clone(*symbol);
        symbols.insert(copy);
        worklist.push_back(copy);
      });
    }
  }
};
} // namespace
