//===- SdpaDecomposition.cpp - torch's SDPA math decomposition ------------===//
//
// `ep.run_decompositions()` writes scaled_dot_product_attention as its math
// form, which differs from the exporters' attention in two ways that
// kiln-fuse-attention reads through here:
//
// * the products are 3-D bmms over the flattened batch and heads,
//
//     %s = reshape [B, H, M, N] (bmm (reshape [B*H, M, K] %q),
//                                    (reshape [B*H, K, N] %kT))
//
//   which unflattenBatchedMatmuls rewrites as the 4-D `kiln.matmul %q, %kT`
//   (the same products; only next to a softmax, so other bmms are left);
//
// * the probabilities are guarded against rows whose scores are all -inf
//   (masked everywhere: softmax gives NaN, the guard 0):
//
//     %p = where(not(any(not(%s == -inf), last axis)), 0, softmax(%s))
//
//   with `any` spelled cast(reduce_max(cast(...))). matchRowGuard finds it;
//   the matcher drops it where no row can be masked everywhere, else sets
//   kiln.attention's `zero_masked_rows`.
//
//===----------------------------------------------------------------------===//
#include "passes/fusion/AttentionMatch.h"
#include "passes/fusion/UniformConstant.h"

#include "mlir/IR/Matchers.h"

#include <cmath>

using namespace mlir;
using namespace mlir::kiln;

namespace {
/// `v` through a cast between i1 and f32 (either way).
Value throughBoolCast(Value v) {
  if (auto c = v.getDefiningOp<CastOp>())
    return c.getInput();
  return Value();
}

/// The rank-4 value whose two leading dims the reshape defining `v` (used
/// once) flattens into one, or null.
Value flattenedBatch(Value v) {
  auto r = v.getDefiningOp<ReshapeOp>();
  if (!r || !r->hasOneUse())
    return Value();
  auto in = cast<RankedTensorType>(r.getInput().getType());
  auto out = cast<RankedTensorType>(r.getType());
  if (in.getRank() != 4 || out.getRank() != 3 || !in.hasStaticShape() ||
      out.getDimSize(0) != in.getDimSize(0) * in.getDimSize(1) ||
      out.getShape().drop_front() != in.getShape().drop_front(2))
    return Value();
  return r.getInput();
}

/// Whether a bmm's `result` feeds a softmax (directly or through a mask or
/// scale) or its `lhs` is one (or its guard): the bmms of attention.
bool nearSoftmax(Value result, Value lhs) {
  for (Operation *user : result.getUsers()) {
    if (isa<SoftmaxOp>(user))
      return true;
    if (isa<AddOp, WhereOp, MulOp, DivOp>(user))
      for (Operation *next : user->getUsers())
        if (isa<SoftmaxOp>(next))
          return true;
  }
  return lhs.getDefiningOp<SoftmaxOp>() || matchRowGuard(lhs).has_value();
}
} // namespace

std::optional<RowGuard> mlir::kiln::matchRowGuard(Value probs) {
  auto where = probs.getDefiningOp<WhereOp>();
  if (!where)
    return std::nullopt;
  std::optional<double> zero = uniformConstant(where.getX());
  auto softmax = where.getY().getDefiningOp<SoftmaxOp>();
  if (!zero || *zero != 0.0 || !softmax)
    return std::nullopt;
  int64_t last = softmax.getType().getRank() - 1;
  if (int64_t(softmax.getAxis()) != last)
    return std::nullopt;
  // not(cast(reduce_max(cast(not(equal(s, -inf))), [last])))
  RowGuard g{softmax, {where}};
  auto outerNot = where.getCondition().getDefiningOp<NotOp>();
  if (!outerNot)
    return std::nullopt;
  g.ops.push_back(outerNot);
  Value anyKept = throughBoolCast(outerNot.getInput());
  auto reduce = anyKept ? anyKept.getDefiningOp<ReduceMaxOp>() : ReduceMaxOp();
  if (!reduce || reduce.getAxes() != ArrayRef<int64_t>{last} ||
      !reduce.getKeepdims())
    return std::nullopt;
  g.ops.push_back(outerNot.getInput().getDefiningOp());
  g.ops.push_back(reduce);
  Value kept = throughBoolCast(reduce.getInput());
  auto innerNot = kept ? kept.getDefiningOp<NotOp>() : NotOp();
  if (!innerNot)
    return std::nullopt;
  g.ops.push_back(reduce.getInput().getDefiningOp());
  g.ops.push_back(innerNot);
  auto equal = innerNot.getInput().getDefiningOp<EqualOp>();
  if (!equal || equal.getLhs() != softmax.getInput())
    return std::nullopt;
  std::optional<double> minusInf = uniformConstant(equal.getRhs());
  if (!minusInf || !std::isinf(*minusInf) || *minusInf > 0)
    return std::nullopt;
  g.ops.push_back(equal);
  g.equal = equal;
  for (Operation *op : g.ops)
    if (!op->hasOneUse())
      return std::nullopt;
  return g;
}

int64_t mlir::kiln::unflattenBatchedMatmuls(RewriterBase &rewriter,
                                            Operation *root) {
  SmallVector<ReshapeOp> candidates;
  root->walk([&](ReshapeOp r) {
    auto mm = r.getInput().getDefiningOp<MatMulOp>();
    if (mm && mm->hasOneUse())
      candidates.push_back(r);
  });
  int64_t rewritten = 0;
  for (ReshapeOp r : candidates) {
    auto mm = r.getInput().getDefiningOp<MatMulOp>();
    Value a = flattenedBatch(mm.getLhs()), b = flattenedBatch(mm.getRhs());
    auto out = cast<RankedTensorType>(r.getType());
    if (!a || !b || out.getRank() != 4 || !nearSoftmax(r.getResult(), a))
      continue;
    auto at = cast<RankedTensorType>(a.getType());
    auto bt = cast<RankedTensorType>(b.getType());
    // [B*H, M, N] -> [B, H, M, N]: the batch split back, nothing else.
    if (at.getShape().take_front(2) != bt.getShape().take_front(2) ||
        at.getShape().take_front(2) != out.getShape().take_front(2) ||
        out.getShape().drop_front(2) != mm.getType().getShape().drop_front())
      continue;
    rewriter.setInsertionPoint(r);
    Value product = MatMulOp::create(rewriter, mm.getLoc(), a, b).getResult();
    Operation *lhs = mm.getLhs().getDefiningOp();
    Operation *rhs = mm.getRhs().getDefiningOp();
    rewriter.replaceOp(r, product);
    rewriter.eraseOp(mm);
    rewriter.eraseOp(lhs);
    if (rhs != lhs)
      rewriter.eraseOp(rhs);
    ++rewritten;
  }
  return rewritten;
}
