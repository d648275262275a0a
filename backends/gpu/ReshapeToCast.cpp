//===- ReshapeToCast.cpp - memref.reshape of stored extents as a cast -----===//
//
// A Reshape or Unsqueeze over symbolic dims bufferizes to a memref.reshape
// whose shape is a small buffer the host fills just before (one store per
// extent). On a GPU target that buffer lives in the device arena, so the
// host could not read the extents back. The extents are the values stored:
// this pass writes the reshape as a memref.reinterpret_cast with those
// sizes and row-major strides, and the shape buffer, left unread, goes.
//
//===----------------------------------------------------------------------===//
#include "backends/cpu/RowMajorStrides.h"
#include "backends/gpu/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_RESHAPETOCAST
#include "backends/gpu/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;

namespace {
/// The extents stored into `shape` (a static 1-D buffer of its own) before
/// `reshape` in the same block, one store per position; none if anything
/// else may write it.
std::optional<SmallVector<Value>> storedExtents(memref::ReshapeOp reshape) {
  Value shape = reshape.getShape();
  auto type = cast<MemRefType>(shape.getType());
  if (!type.hasStaticShape() || !shape.getDefiningOp<memref::AllocOp>())
    return std::nullopt;
  SmallVector<Value> extents(type.getDimSize(0));
  for (Operation *user : shape.getUsers()) {
    if (user == reshape.getOperation())
      continue;
    if (isa<memref::DeallocOp>(user))
      continue;
    auto store = dyn_cast<memref::StoreOp>(user);
    if (!store || store.getMemRef() != shape ||
        store->getBlock() != reshape->getBlock() ||
        !store->isBeforeInBlock(reshape))
      return std::nullopt;
    std::optional<int64_t> at = getConstantIntValue(store.getIndices()[0]);
    if (!at || *at < 0 || *at >= int64_t(extents.size()) || extents[*at])
      return std::nullopt;
    extents[*at] = store.getValueToStore();
  }
  if (llvm::is_contained(extents, Value()))
    return std::nullopt;
  return extents;
}

struct ReshapeToCastPass
    : public kiln::impl::ReshapeToCastBase<ReshapeToCastPass> {
  void runOnOperation() override {
    SmallVector<memref::ReshapeOp> reshapes;
    getOperation().walk([&](memref::ReshapeOp op) { reshapes.push_back(op); });
    for (memref::ReshapeOp reshape : reshapes) {
      auto source = cast<MemRefType>(reshape.getSource().getType());
      auto result = cast<MemRefType>(reshape.getResult().getType());
      if (!source.getLayout().isIdentity() || !result.getLayout().isIdentity())
        continue;
      std::optional<SmallVector<Value>> extents = storedExtents(reshape);
      if (!extents)
        continue;
      OpBuilder b(reshape);
      Location loc = reshape.getLoc();
      SmallVector<OpFoldResult> sizes;
      for (auto [d, extent] : llvm::enumerate(*extents)) {
        if (!result.isDynamicDim(d)) {
          sizes.push_back(b.getIndexAttr(result.getDimSize(d)));
          continue;
        }
        Value index = extent;
        if (!index.getType().isIndex())
          index = arith::IndexCastOp::create(b, loc, b.getIndexType(), index);
        sizes.push_back(index);
      }
      SmallVector<OpFoldResult> strides = kiln::rowMajorStrides(b, loc, sizes);
      auto cast =
          memref::ReinterpretCastOp::create(b, loc, result, reshape.getSource(),
                                            b.getIndexAttr(0), sizes, strides);
      Value shape = reshape.getShape();
      reshape.replaceAllUsesWith(cast.getResult());
      reshape.erase();
      // The shape buffer, now only written, goes with its stores.
      if (llvm::all_of(shape.getUsers(), [](Operation *user) {
            return isa<memref::StoreOp, memref::DeallocOp>(user);
          })) {
        for (Operation *user : llvm::make_early_inc_range(shape.getUsers()))
          user->erase();
        shape.getDefiningOp()->erase();
      }
    }
  }
};
} // namespace
