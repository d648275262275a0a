//===- InterchangeContractions.cpp - Unit-stride innermost loops ----------===//
//
// linalg's loop order for matmul is (i, j, k) and for conv_2d_nchw_fchw
// (n, f, oh, ow, c, kh, kw): the innermost loop is a reduction, which LLVM
// cannot vectorize without reassociating floating-point sums. Moving the
// output's fastest-varying dimension innermost gives a parallel, unit-stride
// loop LLVM vectorizes as is. Each output element still accumulates its
// reduction in the same order, so results are bit-identical.
//
// This is the cheap stand-in for real tiling + vectorization of contractions
// (which will replace it in the same pipeline slot).
//
//===----------------------------------------------------------------------===//
#include "backends/cpu/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_INTERCHANGECONTRACTIONS
#include "backends/cpu/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;

namespace {
/// The loop to put innermost: the output's last dimension, if it is a
/// parallel loop that every operand either ignores or indexes in its own
/// last dimension (so its accesses stay unit-stride or constant-stride).
std::optional<unsigned> innermostCandidate(linalg::LinalgOp op) {
  if (op.getNumDpsInits() != 1 || op.getNumReductionLoops() == 0)
    return std::nullopt;
  AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  if (outMap.getNumResults() == 0)
    return std::nullopt;
  auto lastDim = dyn_cast<AffineDimExpr>(outMap.getResults().back());
  if (!lastDim)
    return std::nullopt;
  unsigned dim = lastDim.getPosition();
  if (dim == op.getNumLoops() - 1 ||
      !linalg::isParallelIterator(op.getIteratorTypesArray()[dim]))
    return std::nullopt;
  for (AffineMap map : op.getIndexingMapsArray()) {
    ArrayRef<AffineExpr> results = map.getResults();
    for (AffineExpr expr : results.drop_back())
      if (expr.isFunctionOfDim(dim))
        return std::nullopt;
  }
  return dim;
}

struct InterchangeContraction
    : public OpInterfaceRewritePattern<linalg::LinalgOp> {
  using OpInterfaceRewritePattern::OpInterfaceRewritePattern;

  LogicalResult matchAndRewrite(linalg::LinalgOp op,
                                PatternRewriter &rewriter) const override {
    if (!linalg::isaContractionOpInterface(op) &&
        !linalg::isaConvolutionOpInterface(op))
      return rewriter.notifyMatchFailure(op, "not a contraction/convolution");
    std::optional<unsigned> dim = innermostCandidate(op);
    if (!dim)
      return rewriter.notifyMatchFailure(op, "no better innermost loop");

    SmallVector<unsigned> order;
    for (unsigned loop = 0, e = op.getNumLoops(); loop < e; ++loop)
      if (loop != *dim)
        order.push_back(loop);
    order.push_back(*dim);

    auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
    if (!generic) {
      FailureOr<linalg::GenericOp> generalized =
          linalg::generalizeNamedOp(rewriter, op);
      if (failed(generalized))
        return rewriter.notifyMatchFailure(op, "cannot generalize");
      generic = *generalized;
    }
    return linalg::interchangeGenericOp(rewriter, generic, order);
  }
};

struct InterchangeContractionsPass
    : public kiln::impl::InterchangeContractionsBase<
          InterchangeContractionsPass> {
  using Base::Base;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    kiln::populateInterchangeContractionsPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace

void kiln::populateInterchangeContractionsPatterns(
    RewritePatternSet &patterns) {
  patterns.add<InterchangeContraction>(patterns.getContext());
}
