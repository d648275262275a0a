//===- FuseNormalization.cpp - decomposed norms -> kiln.layer_norm/softmax ===//
//
// Exporters below ONNX opset 17 (and hand-written modules) spell LayerNorm
// as ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt/Div (then Mul by the weight and
// Add of the bias), and softmax as Exp/ReduceSum/Div, with or without the
// max subtracted first. Matched chains become one kiln.layer_norm or
// kiln.softmax, which the lowering turns into one row kernel.
//
// Each match is anchored at the Div and checks that every intermediate has
// no other user (the centered input feeds exactly the Pow/Mul and the Div),
// the reductions share one run of trailing axes (one axis for softmax) with
// keepdims, and the constants are what the formula needs (exponent 2, a
// uniform epsilon). The weight and bias must broadcast along the normalized
// dims only. Decisions are logged under KILN_LOGS=fusion with the ONNX node
// names; `norms_fused` counts them.
//
//===----------------------------------------------------------------------===//
#include "passes/fusion/Passes.h"
#include "passes/fusion/UniformConstant.h"

#include "compiler/logging/Logging.h"
#include "compiler/logging/Report.h"
#include "dialects/kiln/NodeLocation.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_FUSENORMALIZATION
#include "passes/fusion/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;

namespace {

RankedTensorType tensorType(Value v) {
  return cast<RankedTensorType>(v.getType());
}

template <typename OpTy> OpTy producer(Value v) {
  return v.getDefiningOp<OpTy>();
}

/// The first normalized axis if `axes` is a run of trailing axes of a
/// rank-`rank` tensor reduced with keepdims.
std::optional<int64_t> trailingAxes(ArrayRef<int64_t> axes, bool keepdims,
                                    int64_t rank) {
  if (!keepdims || axes.empty())
    return std::nullopt;
  for (size_t i = 0; i < axes.size(); ++i)
    if (axes[i] != rank - int64_t(axes.size()) + int64_t(i))
      return std::nullopt;
  return axes.front();
}

/// Ops using `v` (`d * d` is one user).
size_t distinctUsers(Value v) {
  llvm::SmallPtrSet<Operation *, 4> users(v.getUsers().begin(),
                                          v.getUsers().end());
  return users.size();
}

/// For `op(a, b)` with one operand equal to `v`, the other one.
Value otherOperand(Operation *op, Value v) {
  if (op->getOperand(0) == v)
    return op->getOperand(1);
  if (op->getOperand(1) == v)
    return op->getOperand(0);
  return {};
}

/// `p` if it only broadcasts along the normalized dims [axis, rank) of a
/// tensor of `shape` (its outer dims, right-aligned, are 1 or absent),
/// reshaped to exactly rank - axis dims.
Value normalizedParameter(OpBuilder &b, Value p, ArrayRef<int64_t> shape,
                          int64_t axis) {
  RankedTensorType type = tensorType(p);
  int64_t rank = shape.size(), pRank = type.getRank();
  if (pRank > rank || !type.hasStaticShape())
    return {};
  for (int64_t d = 0; d < pRank; ++d) {
    int64_t xd = rank - pRank + d;
    if (xd < axis && type.getDimSize(d) != 1)
      return {};
  }
  if (pRank <= rank - axis)
    return p;
  ArrayRef<int64_t> inner = type.getShape().take_back(rank - axis);
  return ReshapeOp::create(b, p.getLoc(), type.clone(inner), p,
                           b.getDenseI64ArrayAttr(inner));
}

struct LayerNormMatch {
  Value input;
  int64_t axis = 0;
  double epsilon = 0;
  Value scale, bias;
  Operation *result = nullptr; // the last matched op
  SmallVector<Operation *> ops;
};

/// div(d, sqrt(add(mean(d * d), eps))) with d = x - mean(x); `d * d` may be
/// pow(d, 2); the division may be a multiply by reciprocal(sqrt(...)).
FailureOr<LayerNormMatch> matchLayerNorm(Operation *div, std::string &why) {
  LayerNormMatch m;
  Value centered, denominator;
  if (auto d = dyn_cast<DivOp>(div)) {
    centered = d.getLhs();
    denominator = d.getRhs();
  } else if (auto mul = dyn_cast<MulOp>(div)) {
    for (int i = 0; i < 2 && !denominator; ++i)
      if (auto r = producer<ReciprocalOp>(mul->getOperand(i))) {
        denominator = r.getInput();
        centered = mul->getOperand(1 - i);
        m.ops.push_back(r);
      }
  }
  auto sub = centered ? producer<SubOp>(centered) : SubOp();
  if (!sub)
    return failure();
  auto mean = producer<ReduceMeanOp>(sub.getRhs());
  if (!mean || mean.getInput() != sub.getLhs())
    return failure();
  // From here on the shape is a layer norm's; say why it is not fused.
  m.input = sub.getLhs();
  RankedTensorType type = tensorType(m.input);
  std::optional<int64_t> axis =
      trailingAxes(mean.getAxes(), mean.getKeepdims(), type.getRank());
  if (!axis) {
    why = "the mean is not over trailing axes with keepdims";
    return failure();
  }
  m.axis = *axis;
  auto sqrt = producer<SqrtOp>(denominator);
  auto addEps = sqrt ? producer<AddOp>(sqrt.getInput()) : AddOp();
  ReduceMeanOp variance;
  std::optional<double> eps;
  for (int i = 0; addEps && i < 2 && !variance; ++i)
    if ((variance = producer<ReduceMeanOp>(addEps->getOperand(i))))
      eps = uniformConstant(addEps->getOperand(1 - i));
  if (!variance || !eps) {
    why = "the denominator is not sqrt(mean(...) + constant)";
    return failure();
  }
  m.epsilon = *eps;
  if (variance.getAxes() != mean.getAxes() || !variance.getKeepdims()) {
    why = "the variance is not over the same axes as the mean";
    return failure();
  }
  Operation *square = variance.getInput().getDefiningOp();
  bool isSquare = false;
  if (auto pow = dyn_cast_or_null<PowOp>(square))
    isSquare = pow.getLhs() == centered &&
               uniformConstant(pow.getRhs()) == std::optional<double>(2.0);
  else if (auto mul = dyn_cast_or_null<MulOp>(square))
    isSquare = mul.getLhs() == centered && mul.getRhs() == centered;
  if (!isSquare) {
    why = "the variance is not the mean of the squared centered input";
    return failure();
  }
  if (!mean->hasOneUse() || !variance->hasOneUse() || !addEps->hasOneUse() ||
      !sqrt->hasOneUse() || !square->hasOneUse() ||
      distinctUsers(centered) != 2) {
    why = "an intermediate result has other users";
    return failure();
  }
  if (!isa<FloatType>(type.getElementType()) || !type.hasStaticShape()) {
    why = "not a static float tensor";
    return failure();
  }
  m.ops.append({div, sqrt, addEps, variance, square, sub, mean});
  m.result = div;
  return m;
}

/// Extends the match with `* weight` and `+ bias` when they broadcast along
/// the normalized dims only.
void matchAffine(OpBuilder &b, LayerNormMatch &m) {
  ArrayRef<int64_t> shape = tensorType(m.input).getShape();
  auto next = [&](Value v) -> Operation * {
    return v.hasOneUse() ? *v.getUsers().begin() : nullptr;
  };
  Value out = m.result->getResult(0);
  if (auto mul = dyn_cast_or_null<MulOp>(next(out))) {
    Value w = otherOperand(mul, out);
    if (mul.getType() == out.getType() && w != out) {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(mul);
      if (Value scale = normalizedParameter(b, w, shape, m.axis)) {
        m.scale = scale;
        m.result = mul;
        m.ops.insert(m.ops.begin(), mul);
        out = mul.getResult();
      }
    }
  }
  if (auto add = dyn_cast_or_null<AddOp>(next(out))) {
    Value bias = otherOperand(add, out);
    if (add.getType() == out.getType() && bias != out) {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(add);
      if (Value p = normalizedParameter(b, bias, shape, m.axis)) {
        m.bias = p;
        m.result = add;
        m.ops.insert(m.ops.begin(), add);
      }
    }
  }
}

struct SoftmaxMatch {
  Value input;
  int64_t axis = 0;
  bool shifted = false;
  SmallVector<Operation *> ops;
};

/// div(e, sum(e)) with e = exp(x - max(x)) or exp(x), over one axis.
FailureOr<SoftmaxMatch> matchSoftmax(DivOp div, std::string &why) {
  SoftmaxMatch m;
  auto exp = producer<ExpOp>(div.getLhs());
  auto sum = producer<ReduceSumOp>(div.getRhs());
  if (!exp || !sum || sum.getInput() != exp.getResult())
    return failure();
  RankedTensorType type = tensorType(exp.getResult());
  if (sum.getAxes().size() != 1 || !sum.getKeepdims()) {
    why = "the sum is not over one axis with keepdims";
    return failure();
  }
  m.axis = sum.getAxes().front();
  m.input = exp.getInput();
  m.ops = {div, sum, exp};
  if (auto sub = producer<SubOp>(exp.getInput())) {
    auto max = producer<ReduceMaxOp>(sub.getRhs());
    if (max && max.getInput() == sub.getLhs() &&
        max.getAxes() == sum.getAxes() && max.getKeepdims()) {
      if (!sub->hasOneUse() || !max->hasOneUse()) {
        why = "the shifted input has other users";
        return failure();
      }
      m.input = sub.getLhs();
      m.shifted = true;
      m.ops.append({sub, max});
    }
  }
  if (!sum->hasOneUse() || distinctUsers(exp.getResult()) != 2) {
    why = "the exponentials have other users";
    return failure();
  }
  if (!isa<FloatType>(type.getElementType()) || tensorType(m.input) != type) {
    why = "not a float softmax of the input's shape";
    return failure();
  }
  return m;
}

Location fusedLoc(MLIRContext *ctx, ArrayRef<Operation *> ops) {
  SmallVector<Location> locs;
  for (Operation *op : llvm::reverse(ops))
    locs.push_back(op->getLoc());
  return FusedLoc::get(ctx, locs);
}

/// The matched nodes from the input to the output (`ops` runs backwards).
std::string names(ArrayRef<Operation *> ops) {
  return onnxNodeList(llvm::to_vector(llvm::reverse(ops)));
}

/// Erases the matched ops other than `replaced` (already gone), users
/// first: `ops` runs from the output back to the input.
void eraseMatched(RewriterBase &rewriter, ArrayRef<Operation *> ops,
                  Operation *replaced) {
  for (Operation *op : ops)
    if (op != replaced && op->use_empty())
      rewriter.eraseOp(op);
}

struct FuseNormalizationPass
    : mlir::kiln::impl::FuseNormalizationBase<FuseNormalizationPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<Operation *> candidates;
    getOperation().walk([&](Operation *op) {
      if (isa<DivOp, MulOp>(op))
        candidates.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    DenseSet<Operation *> erased;
    for (Operation *op : candidates) {
      if (erased.contains(op))
        continue;
      std::string why;
      std::string at = onnxNodeName(op->getLoc());
      if (auto ln = matchLayerNorm(op, why); succeeded(ln)) {
        fuseLayerNorm(rewriter, *ln, erased);
        continue;
      }
      if (!why.empty()) {
        KILN_LOG("fusion", Info)
            << "not fusing layer norm at '" << at << "': " << why << "\n";
        continue;
      }
      auto div = dyn_cast<DivOp>(op);
      if (!div)
        continue;
      if (auto sm = matchSoftmax(div, why); succeeded(sm)) {
        fuseSoftmax(rewriter, *sm, erased);
        continue;
      }
      if (!why.empty())
        KILN_LOG("fusion", Info)
            << "not fusing softmax at '" << at << "': " << why << "\n";
    }
  }

  void fuseLayerNorm(IRRewriter &rewriter, LayerNormMatch &m,
                     DenseSet<Operation *> &erased) {
    matchAffine(rewriter, m);
    std::string matched = names(m.ops);
    bool hasWeight = bool(m.scale);
    rewriter.setInsertionPoint(m.result);
    RankedTensorType type = tensorType(m.input);
    Location loc = fusedLoc(rewriter.getContext(), m.ops);
    if (!m.scale) {
      auto scaleType = RankedTensorType::get(type.getShape().drop_front(m.axis),
                                             type.getElementType());
      m.scale = ConstantOp::create(
          rewriter, loc,
          DenseElementsAttr::get(
              scaleType, rewriter.getFloatAttr(type.getElementType(), 1.0)));
    }
    auto fused = LayerNormOp::create(rewriter, loc, type, m.input, m.scale,
                                     m.bias, rewriter.getI64IntegerAttr(m.axis),
                                     rewriter.getF64FloatAttr(m.epsilon));
    for (Operation *op : m.ops)
      erased.insert(op);
    rewriter.replaceOp(m.result, fused.getResult());
    eraseMatched(rewriter, m.ops, m.result);
    report::count("norms_fused");
    KILN_LOG("fusion", Info)
        << "fused layer norm over axes from " << m.axis << " (epsilon "
        << m.epsilon << (hasWeight ? ", weight" : "")
        << (m.bias ? ", bias" : "") << "): " << matched << "\n";
  }

  void fuseSoftmax(IRRewriter &rewriter, SoftmaxMatch &m,
                   DenseSet<Operation *> &erased) {
    Operation *div = m.ops.front();
    std::string matched = names(m.ops);
    rewriter.setInsertionPoint(div);
    auto fused =
        SoftmaxOp::create(rewriter, fusedLoc(rewriter.getContext(), m.ops),
                          div->getResult(0).getType(), m.input,
                          rewriter.getI64IntegerAttr(m.axis));
    for (Operation *op : m.ops)
      erased.insert(op);
    rewriter.replaceOp(div, fused.getResult());
    eraseMatched(rewriter, m.ops, div);
    report::count("norms_fused");
    KILN_LOG("fusion", Info)
        << "fused softmax over axis " << m.axis
        << (m.shifted ? "" : " (exp without the max: now computed stably)")
        << ": " << matched << "\n";
  }
};
} // namespace
