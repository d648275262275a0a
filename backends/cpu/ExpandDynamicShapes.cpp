//===- ExpandDynamicShapes.cpp - Run-time expand_shape as reinterpret_cast ===//
//
// MLIR 22's expand-strided-metadata crashes on a memref.expand_shape that
// splits one dim into several run-time dims ([?, 64] -> [?, ?, 64], the
// [batch * seq, hidden] -> [batch, seq, hidden] of every matmul over
// symbolic dims). On a contiguous source the result is just the source's
// memory with new sizes and row-major strides, so this pass writes it as
// that memref.reinterpret_cast first.
//
//===----------------------------------------------------------------------===//
#include "backends/cpu/Passes.h"
#include "backends/cpu/RowMajorStrides.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_EXPANDDYNAMICSHAPES
#include "backends/cpu/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;

namespace {
/// Whether a reassociation group of `type` holds two or more run-time dims.
bool splitsRunTimeDims(memref::ExpandShapeOp op) {
  MemRefType type = op.getResultType();
  for (const ReassociationIndices &group : op.getReassociationIndices())
    if (llvm::count_if(group, [&](int64_t d) { return type.isDynamicDim(d); }) >
        1)
      return true;
  return false;
}

struct ExpandDynamicShapesPass
    : public kiln::impl::ExpandDynamicShapesBase<ExpandDynamicShapesPass> {
  void runOnOperation() override {
    SmallVector<memref::ExpandShapeOp> candidates;
    getOperation().walk([&](memref::ExpandShapeOp op) {
      if (splitsRunTimeDims(op) && op.getSrcType().getLayout().isIdentity() &&
          op.getResultType().getLayout().isIdentity())
        candidates.push_back(op);
    });
    for (memref::ExpandShapeOp op : candidates) {
      OpBuilder b(op);
      Location loc = op.getLoc();
      SmallVector<OpFoldResult> sizes = op.getMixedOutputShape();
      // Row-major strides: the product of the sizes to the right.
      SmallVector<OpFoldResult> strides = kiln::rowMajorStrides(b, loc, sizes);
      auto cast = memref::ReinterpretCastOp::create(
          b, loc, op.getResultType(), op.getSrc(), b.getIndexAttr(0), sizes,
          strides);
      op.replaceAllUsesWith(cast.getResult());
      op.erase();
    }
  }
};
} // namespace
