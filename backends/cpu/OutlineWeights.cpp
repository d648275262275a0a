//===- OutlineWeights.cpp - Constant globals into one raw blob ------------===//
//
// Weights must reach the artifact as raw bytes: an LLVM constant per
// element costs minutes and gigabytes at ResNet/BERT sizes. This pass copies
// nothing: it lays the constants out and leaves the layout for the artifact
// writer, which writes each one from where it already is in memory.
//
//===----------------------------------------------------------------------===//
#include "backends/common/WeightsSection.h"
#include "backends/cpu/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_OUTLINEWEIGHTS
#include "backends/cpu/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;

namespace {
constexpr uint64_t kWeightsAlignment = 64;

struct OutlinedGlobal {
  memref::GlobalOp global;
  ElementsAttr value;
  uint64_t bytes = 0;
  uint64_t offset = 0;
  SmallVector<memref::GetGlobalOp> uses;
};

/// Checks that the resource's data is there and has the size its type
/// needs, so the artifact writer can take it as it is.
LogicalResult checkData(memref::GlobalOp global, ElementsAttr value,
                        uint64_t bytes) {
  auto resource = dyn_cast<DenseResourceElementsAttr>(value);
  if (!resource)
    return success();
  AsmResourceBlob *blob = resource.getRawHandle().getBlob();
  if (!blob)
    return global.emitError("kiln-outline-weights: the data of '")
           << resource.getRawHandle().getKey() << "' is not available";
  if (blob->getData().size() != bytes)
    return global.emitError("kiln-outline-weights: resource holds ")
           << blob->getData().size() << " bytes, its type needs " << bytes;
  return success();
}

/// The globals to outline: constant, non-splat, laid out byte for byte, and
/// read only from `func`.
SmallVector<OutlinedGlobal> collectWeights(ModuleOp module, func::FuncOp func) {
  DenseMap<StringAttr, SmallVector<memref::GetGlobalOp>> uses;
  module.walk([&](memref::GetGlobalOp get) {
    uses[get.getNameAttr().getAttr()].push_back(get);
  });
  // Every symbol use in the module counted once (one walk, not one per
  // global: the kernels' bodies make the function large).
  DenseMap<StringAttr, size_t> symbolUses;
  module.walk([&](Operation *op) {
    op->getAttrDictionary().walk(
        [&](SymbolRefAttr ref) { ++symbolUses[ref.getRootReference()]; });
  });

  SmallVector<OutlinedGlobal> result;
  for (auto global : module.getOps<memref::GlobalOp>()) {
    if (!global.getConstant() || !global.getType().getLayout().isIdentity())
      continue;
    auto value = dyn_cast_or_null<ElementsAttr>(global.getConstantInitValue());
    if (!value)
      continue;
    if (auto dense = dyn_cast<DenseElementsAttr>(value);
        (dense && dense.isSplat()) ||
        (!dense && !isa<DenseResourceElementsAttr>(value)))
      continue;
    std::optional<uint64_t> bytes = kiln::weightMemoryBytes(value);
    if (!bytes)
      continue;
    auto globalUses = uses.lookup(global.getSymNameAttr());
    if (llvm::any_of(globalUses, [&](memref::GetGlobalOp get) {
          return get->getParentOfType<func::FuncOp>() != func;
        }))
      continue;
    // Other symbol uses (not get_global) would dangle once the global is gone.
    if (symbolUses.lookup(global.getSymNameAttr()) != globalUses.size())
      continue;
    result.push_back({global, value, *bytes, 0, std::move(globalUses)});
  }
  return result;
}

LogicalResult outlineWeights(ModuleOp module, func::FuncOp func) {
  if (module->hasAttr("kiln.weights"))
    return module.emitError("kiln-outline-weights: weights already outlined");
  SmallVector<OutlinedGlobal> weights = collectWeights(module, func);

  uint64_t total = 0;
  for (OutlinedGlobal &w : weights) {
    w.offset = llvm::alignTo(total, kWeightsAlignment);
    total = w.offset + w.bytes;
  }
  total = llvm::alignTo(total, kWeightsAlignment);

  MLIRContext *ctx = module.getContext();
  Type i8 = IntegerType::get(ctx, 8);
  if (total) {
    Builder b(ctx);
    SmallVector<int64_t> offsets;
    SmallVector<Attribute> values;
    for (OutlinedGlobal &w : weights) {
      if (failed(checkData(w.global, w.value, w.bytes)))
        return failure();
      offsets.push_back(w.offset);
      values.push_back(w.value);
    }
    module->setAttr(
        "kiln.weights",
        b.getDictionaryAttr({
            b.getNamedAttr("offsets", b.getDenseI64ArrayAttr(offsets)),
            b.getNamedAttr("size", b.getI64IntegerAttr(total)),
            b.getNamedAttr("values", b.getArrayAttr(values)),
        }));
  }

  unsigned argIndex = func.getNumArguments();
  NamedAttribute marker(StringAttr::get(ctx, "kiln.weights"),
                        UnitAttr::get(ctx));
  if (failed(
          func.insertArgument(argIndex, MemRefType::get({int64_t(total)}, i8),
                              DictionaryAttr::get(ctx, marker), func.getLoc())))
    return func.emitError("kiln-outline-weights: cannot add the argument");
  Value base = func.getArgument(argIndex);

  OpBuilder builder(ctx);
  for (OutlinedGlobal &w : weights) {
    for (memref::GetGlobalOp get : w.uses) {
      builder.setInsertionPoint(get);
      Value offset =
          arith::ConstantIndexOp::create(builder, get.getLoc(), w.offset);
      Value view = memref::ViewOp::create(builder, get.getLoc(), get.getType(),
                                          base, offset, ValueRange{});
      get.getResult().replaceAllUsesWith(view);
      get.erase();
    }
    w.global.erase();
  }
  return success();
}

struct OutlineWeightsPass
    : public kiln::impl::OutlineWeightsBase<OutlineWeightsPass> {
  using Base::Base;

  void runOnOperation() override {
    auto func = getOperation().lookupSymbol<func::FuncOp>(entryName);
    if (!func || func.isExternal()) {
      getOperation().emitError()
          << "kiln-outline-weights: no entry function @" << entryName;
      return signalPassFailure();
    }
    if (failed(outlineWeights(getOperation(), func)))
      signalPassFailure();
  }
};
} // namespace
