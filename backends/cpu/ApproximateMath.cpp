//===- ApproximateMath.cpp - Inline polynomials for transcendentals -------===//
#include "backends/cpu/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_APPROXIMATEMATH
#include "backends/cpu/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;

namespace {
/// The ops whose upstream f32 approximations are accurate to a few ulp over
/// the whole range. sin/cos/atan & co. stay libm calls: their range
/// reduction is weaker, and models rarely spend time in them.
bool isApproximated(StringRef opName) {
  return llvm::is_contained({"math.exp", "math.expm1", "math.log", "math.log1p",
                             "math.log2", "math.tanh", "math.erf", "math.erfc"},
                            opName);
}

struct ApproximateMathPass
    : public kiln::impl::ApproximateMathBase<ApproximateMathPass> {
  using Base::Base;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    // pow(x, 2) -> x * x and friends first come from the same set.
    populateMathAlgebraicSimplificationPatterns(patterns);
    populateMathF32ExpansionPatterns(patterns, isApproximated);
    populateMathPolynomialApproximationPatterns(patterns, isApproximated);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
