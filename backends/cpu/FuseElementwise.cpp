//===- FuseElementwise.cpp - Elementwise fusion that never repeats work ---===//
//
// Upstream's linalg-fuse-elementwise-ops fuses an elementwise producer into
// any linalg.generic consumer, contractions included: a GELU feeding a
// matmul was fused into it and evaluated (erf and all) once per
// multiply-add, K times per element (BERT's FFN: 768x the work). Here a
// producer is fused only where the consumer reads each of its elements once:
// the consumer's indexing map for it is a permutation of all its loops.
// Reshapes are propagated through elementwise ops but not through
// contractions, which keeps named matmuls in the form kiln-tile-contractions
// packs. Inputs made of one constant (a fill, or a generic yielding it) are
// read as that constant instead.
//
//===----------------------------------------------------------------------===//
#include "backends/cpu/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_FUSEELEMENTWISE
#include "backends/cpu/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;

namespace {
bool hasReduction(Operation *op) {
  auto linalgOp = dyn_cast_or_null<linalg::LinalgOp>(op);
  return linalgOp && linalgOp.getNumReductionLoops() > 0;
}

/// Fuse when the producer has one use and the consumer reads each of its
/// elements exactly once.
bool readsEachElementOnce(OpOperand *fused) {
  Operation *producer = fused->get().getDefiningOp();
  if (!producer || !producer->hasOneUse())
    return false;
  auto consumer = dyn_cast<linalg::LinalgOp>(fused->getOwner());
  if (!consumer)
    return false;
  AffineMap map = consumer.getMatchingIndexingMap(fused);
  return map.isPermutation();
}

/// Reshapes move through elementwise ops only.
bool reshapeAcrossElementwise(OpOperand *fused) {
  Operation *producer = fused->get().getDefiningOp();
  if (!producer || !producer->hasOneUse())
    return false;
  if (hasReduction(fused->getOwner()))
    return false;
  if (isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(producer))
    producer = producer->getOperand(0).getDefiningOp();
  return !hasReduction(producer);
}

/// The constant every element of `v` holds when it is made by a linalg.fill
/// of a constant, or by a linalg.generic with no inputs whose body yields a
/// constant (how a scalar kiln constant broadcast to a shape is lowered),
/// looking through reshapes.
arith::ConstantOp filledConstant(Value v) {
  while (Operation *op = v.getDefiningOp()) {
    if (!isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(op))
      break;
    v = op->getOperand(0);
  }
  Value scalar;
  if (auto fill = v.getDefiningOp<linalg::FillOp>())
    scalar = fill.getInputs()[0];
  else if (auto generic = v.getDefiningOp<linalg::GenericOp>();
           generic && generic.getNumDpsInputs() == 0 &&
           generic.getNumResults() == 1)
    scalar =
        cast<linalg::YieldOp>(generic.getBody()->getTerminator()).getOperand(0);
  return scalar ? scalar.getDefiningOp<arith::ConstantOp>() : nullptr;
}

/// A generic input whose elements are all one constant (filledConstant)
/// is read as that constant: the operand goes, so the loop no longer loads
/// it. Such a load from the arena (BERT's attention scale as a 0-d tensor)
/// may alias the loop's stores, which kept LLVM from vectorizing the loop.
struct InlineUniformInputs : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    bool changed = false;
    Block *body = op.getBody();
    for (OpOperand *input : op.getDpsInputOperands()) {
      BlockArgument arg = body->getArgument(input->getOperandNumber());
      arith::ConstantOp constant = filledConstant(input->get());
      if (!constant || arg.use_empty())
        continue;
      rewriter.setInsertionPointToStart(body);
      Operation *clone = rewriter.clone(*constant);
      rewriter.replaceAllUsesWith(arg, clone->getResult(0));
      changed = true;
    }
    // The inputs left unused are erased by
    // populateEraseUnusedOperandsAndResultsPatterns.
    return success(changed);
  }
};

struct FuseElementwise
    : public kiln::impl::FuseElementwiseBase<FuseElementwise> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    RewritePatternSet patterns(ctx);
    linalg::populateElementwiseOpsFusionPatterns(patterns,
                                                 readsEachElementOnce);
    linalg::populateFoldReshapeOpsByExpansionPatterns(patterns,
                                                      reshapeAcrossElementwise);
    linalg::populateEraseUnusedOperandsAndResultsPatterns(patterns);
    patterns.add<InlineUniformInputs>(ctx);
    tensor::populateFoldTensorEmptyPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};
} // namespace
