//===- ExpandStridedCopies.cpp - No memrefCopy calls in artifacts ---------===//
#include "backends/cpu/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_EXPANDSTRIDEDCOPIES
#include "backends/cpu/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;

namespace {
/// A copy is a memcpy only if both sides are one dense block of memory; the
/// LLVM lowering calls the MLIR runtime's memrefCopy for everything else.
bool lowersToMemcpy(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  return memref && (memref.getLayout().isIdentity() ||
                    memref::isStaticShapeAndContiguousRowMajor(memref));
}

struct StridedCopyToLinalg : public OpRewritePattern<memref::CopyOp> {
  StridedCopyToLinalg(MLIRContext *ctx, bool all)
      : OpRewritePattern(ctx), all(all) {}

  LogicalResult matchAndRewrite(memref::CopyOp copy,
                                PatternRewriter &rewriter) const override {
    // A tile or concat operand written in place leaves a copy of a view
    // onto itself.
    if (copy.getSource() == copy.getTarget()) {
      rewriter.eraseOp(copy);
      return success();
    }
    if (!all && lowersToMemcpy(copy.getSource().getType()) &&
        lowersToMemcpy(copy.getTarget().getType()))
      return rewriter.notifyMatchFailure(copy, "contiguous copy");
    rewriter.replaceOpWithNewOp<linalg::CopyOp>(copy, copy.getSource(),
                                                copy.getTarget());
    return success();
  }

  bool all;
};

struct ExpandStridedCopiesPass
    : public kiln::impl::ExpandStridedCopiesBase<ExpandStridedCopiesPass> {
  using Base::Base;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<StridedCopyToLinalg>(&getContext(), allCopies);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
