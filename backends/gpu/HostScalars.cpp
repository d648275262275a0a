//===- HostScalars.cpp - Values the host computes, kept off the device ----===//
//
// Over symbolic dims the host computes scalars from the extents that the
// tensor program passes through small buffers: a Reshape's extents stored
// into a shape buffer, a run-time check's value stored into a 0-d buffer
// and compared by a 0-d linalg.generic. On a GPU target those buffers are
// device memory, so the host could not read the results back (the check
// would run, and trap, in a one-thread kernel). This pass forwards them on
// the host, within a block:
//
//   - a store of a value at constant indices into a buffer of its own (a
//     static alloc) makes that element known;
//   - a 0-d linalg.generic whose inputs are known (or constants' loads) is
//     evaluated on the host: its body is cloned before it, and its output
//     element becomes the yielded value;
//   - a load of a known element is that value;
//   - a memref.reshape whose shape buffer is known becomes a
//     memref.reinterpret_cast with those extents and row-major strides.
//
// A buffer that anything else reads or writes is left alone. Buffers left
// with stores only are erased with them.
//
//===----------------------------------------------------------------------===//
#include "backends/cpu/RowMajorStrides.h"
#include "backends/gpu/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_HOSTSCALARS
#include "backends/gpu/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;

namespace {
/// The linear position of constant `indices` in `type` (static, row-major),
/// or none.
std::optional<int64_t> constantPosition(MemRefType type, ValueRange indices) {
  int64_t position = 0;
  for (auto [d, index] : llvm::enumerate(indices)) {
    std::optional<int64_t> at = getConstantIntValue(index);
    if (!at || *at < 0 || *at >= type.getDimSize(d))
      return std::nullopt;
    position = position * type.getDimSize(d) + *at;
  }
  return position;
}

/// A 0-d linalg.generic (on 0-d buffers or scalars) with a body free of
/// memory effects.
bool isScalarGeneric(Operation *op) {
  auto generic = dyn_cast<linalg::GenericOp>(op);
  return generic && generic.getNumLoops() == 0 &&
         generic.hasPureBufferSemantics() && generic.getNumDpsInits() == 1 &&
         llvm::all_of(generic.getIndexingMapsArray(),
                      [](AffineMap map) { return map.getNumResults() == 0; }) &&
         llvm::all_of(
             generic.getBody()->without_terminator(), [](Operation &inner) {
               return isMemoryEffectFree(&inner) && inner.getNumRegions() == 0;
             });
}

/// Whether `buffer` is a small static alloc whose every use this pass
/// understands: stores and loads at constant indices and 0-d generics in
/// its own block, a reshape's shape, deallocs.
bool isTracked(Value buffer) {
  auto alloc = buffer.getDefiningOp<memref::AllocOp>();
  if (!alloc || !alloc.getType().hasStaticShape() ||
      alloc.getType().getNumElements() > 16)
    return false;
  Block *block = alloc->getBlock();
  return llvm::all_of(buffer.getUsers(), [&](Operation *user) {
    if (isa<memref::DeallocOp>(user))
      return true;
    if (user->getBlock() != block)
      return false;
    if (auto store = dyn_cast<memref::StoreOp>(user))
      return store.getMemRef() == buffer &&
             constantPosition(alloc.getType(), store.getIndices());
    if (auto load = dyn_cast<memref::LoadOp>(user))
      return bool(constantPosition(alloc.getType(), load.getIndices()));
    if (auto reshape = dyn_cast<memref::ReshapeOp>(user))
      return reshape.getShape() == buffer;
    return isScalarGeneric(user);
  });
}

struct HostScalarsPass : public kiln::impl::HostScalarsBase<HostScalarsPass> {
  /// Known elements of tracked buffers: (buffer, position) -> value.
  DenseMap<std::pair<Value, int64_t>, Value> known;
  DenseMap<Value, bool> computable;

  /// Whether the host computes `value` alone: from arguments and ops free
  /// of memory effects (extents, constants, index arithmetic), not from a
  /// load of device memory, which the device's kernels would compute.
  bool hostComputable(Value value) {
    auto [it, inserted] = computable.try_emplace(value, false);
    if (!inserted)
      return it->second;
    Operation *def = value.getDefiningOp();
    bool result =
        !def || (def->getNumRegions() == 0 && isMemoryEffectFree(def) &&
                 llvm::all_of(def->getOperands(),
                              [&](Value v) { return hostComputable(v); }));
    // Loads of the entry's host memory (a symbolic input's extents).
    if (auto load = dyn_cast_or_null<memref::LoadOp>(def))
      if (auto arg = dyn_cast<BlockArgument>(load.getMemRef()))
        if (auto func = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp()))
          result = func.getArgAttr(arg.getArgNumber(), "kiln.host") &&
                   llvm::all_of(load.getIndices(),
                                [&](Value v) { return hostComputable(v); });
    computable[value] = result;
    return result;
  }

  Value knownAt(Value buffer, int64_t position) {
    return known.lookup({buffer, position});
  }

  /// Evaluates `generic` on the host when its inputs are known.
  void evaluate(linalg::GenericOp generic) {
    Value output = generic.getDpsInits()[0];
    if (!isTracked(output))
      return;
    // Unless evaluated below, the output's element is no longer known.
    known.erase({output, 0});
    IRMapping mapping;
    Block *body = generic.getBody();
    for (OpOperand *input : generic.getDpsInputOperands()) {
      Value value = input->get();
      Value element = isa<MemRefType>(value.getType())
                          ? knownAt(value, 0)
                          : value; // a scalar operand
      if (!element || !hostComputable(element))
        return;
      mapping.map(body->getArgument(input->getOperandNumber()), element);
    }
    if (generic.payloadUsesValueFromOperand(generic.getDpsInitOperand(0)))
      return;
    // The values the body reads from above must be the host's too.
    llvm::SetVector<Value> above;
    getUsedValuesDefinedAbove(generic.getRegion(), above);
    if (!llvm::all_of(above, [&](Value v) { return hostComputable(v); }))
      return;
    OpBuilder b(generic);
    for (Operation &op : body->without_terminator())
      b.clone(op, mapping);
    known[{output, 0}] =
        mapping.lookupOrDefault(body->getTerminator()->getOperand(0));
    generic.erase();
  }

  void rewriteReshape(memref::ReshapeOp reshape) {
    Value shape = reshape.getShape();
    auto shapeType = cast<MemRefType>(shape.getType());
    auto source = cast<MemRefType>(reshape.getSource().getType());
    auto result = cast<MemRefType>(reshape.getResult().getType());
    if (!source.getLayout().isIdentity() || !result.getLayout().isIdentity() ||
        !isTracked(shape))
      return;
    OpBuilder b(reshape);
    Location loc = reshape.getLoc();
    SmallVector<OpFoldResult> sizes;
    for (int64_t d = 0; d < shapeType.getDimSize(0); ++d) {
      if (!result.isDynamicDim(d)) {
        sizes.push_back(b.getIndexAttr(result.getDimSize(d)));
        continue;
      }
      Value extent = knownAt(shape, d);
      if (!extent)
        return;
      if (!extent.getType().isIndex())
        extent = arith::IndexCastOp::create(b, loc, b.getIndexType(), extent);
      sizes.push_back(extent);
    }
    SmallVector<OpFoldResult> strides = kiln::rowMajorStrides(b, loc, sizes);
    auto cast = memref::ReinterpretCastOp::create(
        b, loc, result, reshape.getSource(), b.getIndexAttr(0), sizes, strides);
    reshape.replaceAllUsesWith(cast.getResult());
    reshape.erase();
  }

  void runOnBlock(Block &block) {
    for (Operation &op : llvm::make_early_inc_range(block)) {
      for (Region &region : op.getRegions())
        for (Block &inner : region)
          runOnBlock(inner);
      if (auto store = dyn_cast<memref::StoreOp>(op)) {
        Value buffer = store.getMemRef();
        if (!isTracked(buffer))
          continue;
        // A value the device computes stays in memory (a kernel writes it).
        std::pair<Value, int64_t> element = {
            buffer, *constantPosition(cast<MemRefType>(buffer.getType()),
                                      store.getIndices())};
        if (hostComputable(store.getValueToStore()))
          known[element] = store.getValueToStore();
        else
          known.erase(element);
      } else if (auto load = dyn_cast<memref::LoadOp>(op)) {
        Value buffer = load.getMemRef();
        if (!isTracked(buffer))
          continue;
        if (Value value = knownAt(
                buffer, *constantPosition(cast<MemRefType>(buffer.getType()),
                                          load.getIndices()))) {
          load.replaceAllUsesWith(value);
          load.erase();
        }
      } else if (isScalarGeneric(&op)) {
        evaluate(cast<linalg::GenericOp>(op));
      } else if (auto reshape = dyn_cast<memref::ReshapeOp>(op)) {
        rewriteReshape(reshape);
      }
    }
  }

  void runOnOperation() override {
    known.clear();
    computable.clear();
    func::FuncOp func = getOperation();
    for (Block &block : func.getBody())
      runOnBlock(block);
    // Buffers now only written go, with their stores.
    SmallVector<memref::AllocOp> allocs;
    func.walk([&](memref::AllocOp alloc) { allocs.push_back(alloc); });
    for (memref::AllocOp alloc : allocs) {
      if (!isTracked(alloc) ||
          !llvm::all_of(alloc->getUsers(), [](Operation *user) {
            return isa<memref::StoreOp, memref::DeallocOp>(user);
          }))
        continue;
      for (Operation *user : llvm::make_early_inc_range(alloc->getUsers()))
        user->erase();
      alloc.erase();
    }
  }
};
} // namespace
