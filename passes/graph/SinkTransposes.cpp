//===- SinkTransposes.cpp - Move layout conversions down and cancel them --===//
//
// The cleanup half of the layout work (Triton's RemoveLayoutConversions in
// spirit): a marked transpose moves below the op reading it when every op
// reading it can take it, so conversions meet their inverses and vanish.
// Only transposes marked by kiln-conv-layout move; the rest of the graph's
// transposes are the model's own business.
//
//===----------------------------------------------------------------------===//
#include "passes/graph/Layout.h"
#include "passes/graph/Passes.h"

#include "compiler/logging/Logging.h"
#include "compiler/logging/Report.h"
#include "dialects/kiln/NodeLocation.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_SINKTRANSPOSES
#include "passes/graph/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;

namespace {

bool isConstant(Value v) { return matchPattern(v, m_Constant()); }

/// A marked conversion of `v` by `perm` that already exists, or null.
TransposeOp existingConversion(Value v, ArrayRef<int64_t> perm) {
  for (Operation *user : v.getUsers())
    if (auto t = dyn_cast<TransposeOp>(user))
      if (t->hasAttr(layout::kConversionAttr) && t.getPerm() == perm)
        return t;
  return {};
}

/// The permutation of the marked transposes `op` reads, when `op` can take
/// them and have one transpose of its result instead. Its other operands may
/// be constants (binary elementwise ops) or, for conversions back to NCHW,
/// values already converted to NHWC for another reader (the residual input
/// of a block, read by the block's first conv and by its add).
std::optional<SmallVector<int64_t>> sinkablePerm(Operation *op) {
  if (op->getNumResults() != 1 || isa<TransposeOp>(op))
    return std::nullopt;
  std::optional<SmallVector<int64_t>> perm;
  bool constants = false;
  SmallVector<Value> others;
  for (Value v : op->getOperands()) {
    if (TransposeOp t = layout::conversionOf(v)) {
      if (perm && ArrayRef<int64_t>(*perm) != t.getPerm())
        return std::nullopt;
      perm = SmallVector<int64_t>(t.getPerm());
    } else if (isConstant(v)) {
      constants = true;
    } else {
      others.push_back(v);
    }
  }
  if (!perm)
    return std::nullopt;
  int64_t rank = perm->size();
  if (!layout::isLayoutTransparent(op, rank))
    return std::nullopt;
  if (constants && !layout::takesConstants(op))
    return std::nullopt;
  if (!others.empty()) {
    // Only conversions back to NCHW reuse NHWC values (so nothing moves back
    // and forth), and only where the op reads several values.
    if (ArrayRef<int64_t>(*perm) != ArrayRef<int64_t>(layout::kToNCHW) ||
        !(layout::isBinaryElementwise(op) || isa<ConcatOp>(op)))
      return std::nullopt;
    for (Value v : others)
      if (!existingConversion(v, layout::kToNHWC))
        return std::nullopt;
  }
  // An NCHW pool reading NHWC data converted back: the NHWC pool.
  if (isa<MaxPoolOp, AvgPoolOp>(op) &&
      (op->hasAttr("channels_last") ||
       ArrayRef<int64_t>(*perm) != ArrayRef<int64_t>(layout::kToNCHW)))
    return std::nullopt;
  return perm;
}

/// True when `user`, an elementwise reader of the marked transpose `t`, can
/// take `t` once its sibling readers have: each operand is `t`, a constant,
/// or computed from `t` and constants alone by a layout-transparent op.
/// QuantizeLinear's NaN check, where(equal(T(x), T(x)), T(x), lo), sinks
/// this way: first the equal, then the where.
bool takesAfterSiblings(Operation *user, TransposeOp t) {
  int64_t rank = t.getPerm().size();
  auto fromT = [&](Value v) { return v == t.getResult() || isConstant(v); };
  if (!layout::takesConstants(user) || !layout::isLayoutTransparent(user, rank))
    return false;
  return llvm::all_of(user->getOperands(), [&](Value v) {
    if (fromT(v))
      return true;
    Operation *def = v.getDefiningOp();
    return def && layout::isLayoutTransparent(def, rank) &&
           llvm::all_of(def->getOperands(), fromT);
  });
}

/// True when every reader of the marked transpose `t` can take it.
bool allReadersTake(TransposeOp t) {
  return llvm::all_of(t->getUsers(), [&](Operation *user) {
    return isa<TransposeOp>(user) || sinkablePerm(user).has_value() ||
           takesAfterSiblings(user, t);
  });
}

/// op(T(x), ...) -> T(op'(x, ...)).
struct SinkThroughOp : RewritePattern {
  SinkThroughOp(MLIRContext *ctx)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, ctx) {}

  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    auto perm = sinkablePerm(op);
    if (!perm)
      return failure();
    for (Value v : op->getOperands())
      if (TransposeOp t = layout::conversionOf(v); t && !allReadersTake(t))
        return rewriter.notifyMatchFailure(op, "a conversion read elsewhere");

    Location loc = op->getLoc();
    auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
    int64_t rank = perm->size();
    SmallVector<int64_t> inverse = layout::inversePerm(*perm);
    IRMapping mapping;
    for (Value v : op->getOperands()) {
      if (TransposeOp t = layout::conversionOf(v)) {
        mapping.map(v, t.getInput());
        continue;
      }
      if (!isConstant(v)) {
        // Already converted for another reader: use that conversion, placed
        // right after `v` so that it dominates `op`.
        TransposeOp t = existingConversion(v, inverse);
        if (Operation *def = v.getDefiningOp())
          rewriter.moveOpAfter(t, def);
        else
          rewriter.moveOpBefore(t, &v.getParentBlock()->front());
        mapping.map(v, t.getResult());
        continue;
      }
      // A constant: full rank, then the inverse permutation (both fold).
      auto type = cast<RankedTensorType>(v.getType());
      Value c = v;
      if (type.getRank() < rank) {
        SmallVector<int64_t> shape(rank - type.getRank(), 1);
        llvm::append_range(shape, type.getShape());
        c = ReshapeOp::create(rewriter, loc, c, shape);
      }
      mapping.map(v, layout::createTranspose(rewriter, loc, c, inverse,
                                             /*conversion=*/false));
    }
    Operation *moved = rewriter.clone(*op, mapping);
    moved->getResult(0).setType(
        resultType.clone(layout::unpermuteShape(resultType.getShape(), *perm)));
    remapAttributes(moved, *perm, rewriter);
    Value result = layout::createTranspose(rewriter, loc, moved->getResult(0),
                                           *perm, /*conversion=*/true);
    KILN_LOG("layout", Debug)
        << "moved a conversion below " << op->getName().stripDialect() << " '"
        << onnxNodeName(loc) << "'\n";
    rewriter.replaceOp(op, result);
    return success();
  }

  /// Axis attributes now index the unpermuted dims: dim i of the old result
  /// is dim perm[i] of the new one.
  static void remapAttributes(Operation *op, ArrayRef<int64_t> perm,
                              PatternRewriter &rewriter) {
    if (auto concat = dyn_cast<ConcatOp>(op)) {
      concat.setAxis(perm[concat.getAxis()]);
      return;
    }
    if (auto slice = dyn_cast<SliceOp>(op)) {
      slice.setStarts(layout::unpermuteShape(slice.getStarts(), perm));
      slice.setEnds(layout::unpermuteShape(slice.getEnds(), perm));
      slice.setSteps(layout::unpermuteShape(slice.getSteps(), perm));
      return;
    }
    if (isa<MaxPoolOp, AvgPoolOp>(op)) {
      op->setAttr("channels_last", rewriter.getUnitAttr());
      return;
    }
    if (auto axesAttr = op->getAttrOfType<DenseI64ArrayAttr>("axes")) {
      SmallVector<int64_t> axes;
      for (int64_t a : axesAttr.asArrayRef())
        axes.push_back(perm[a]);
      llvm::sort(axes);
      op->setAttr("axes", rewriter.getDenseI64ArrayAttr(axes));
    }
  }
};

/// T2(T1(x)) -> x when they cancel, else one transpose.
struct ComposeTransposes : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(TransposeOp outer,
                                PatternRewriter &rewriter) const override {
    auto inner = outer.getInput().getDefiningOp<TransposeOp>();
    if (!inner || !(inner->hasAttr(layout::kConversionAttr) ||
                    outer->hasAttr(layout::kConversionAttr)))
      return failure();
    SmallVector<int64_t> perm;
    bool identity = true;
    for (auto [i, p] : llvm::enumerate(outer.getPerm())) {
      perm.push_back(inner.getPerm()[p]);
      identity &= perm.back() == (int64_t)i;
    }
    if (identity) {
      KILN_LOG("layout", Debug)
          << "cancelled the conversions of '" << onnxNodeName(inner.getLoc())
          << "' and '" << onnxNodeName(outer.getLoc()) << "'\n";
      rewriter.replaceOp(outer, inner.getInput());
      return success();
    }
    rewriter.replaceOp(outer, layout::createTranspose(rewriter, outer.getLoc(),
                                                      inner.getInput(), perm,
                                                      /*conversion=*/true));
    return success();
  }
};

struct SinkTransposesPass
    : mlir::kiln::impl::SinkTransposesBase<SinkTransposesPass> {
  using Base::Base;
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<SinkThroughOp, ComposeTransposes>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    int64_t left = 0;
    getOperation().walk([&](TransposeOp t) {
      if (!t->hasAttr(layout::kConversionAttr))
        return;
      ++left;
      KILN_LOG("layout", Info)
          << "conversion left at '" << onnxNodeName(t.getLoc())
          << "': " << t.getInput().getType() << " -> " << t.getType() << "\n";
    });
    report::count("layout_conversions", left);
  }
};
} // namespace
