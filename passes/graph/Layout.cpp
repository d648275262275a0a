//===- Layout.cpp - Shared pieces of the convolution layout passes --------===//

#include "passes/graph/Layout.h"

#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::kiln;

Value layout::createTranspose(OpBuilder &b, Location loc, Value value,
                              ArrayRef<int64_t> perm, bool conversion) {
  auto t = TransposeOp::create(b, loc, value, perm);
  if (conversion)
    t->setAttr(kConversionAttr, b.getUnitAttr());
  return t.getResult();
}

TransposeOp layout::conversionOf(Value v) {
  auto t = v.getDefiningOp<TransposeOp>();
  return t && t->hasAttr(kConversionAttr) ? t : TransposeOp();
}

SmallVector<int64_t> layout::inversePerm(ArrayRef<int64_t> perm) {
  SmallVector<int64_t> q(perm.size());
  for (auto [i, p] : llvm::enumerate(perm))
    q[p] = i;
  return q;
}

SmallVector<int64_t> layout::unpermuteShape(ArrayRef<int64_t> shape,
                                            ArrayRef<int64_t> perm) {
  SmallVector<int64_t> s(shape.size());
  for (auto [i, p] : llvm::enumerate(perm))
    s[p] = shape[i];
  return s;
}

bool layout::isUnaryElementwise(Operation *op) {
  return isa<ReluOp, SigmoidOp, TanhOp, ClipOp, LeakyReluOp, GeluOp, NegOp,
             AbsOp, ExpOp, LogOp, SqrtOp, ReciprocalOp, ErfOp, NotOp, SinOp,
             CosOp, TanOp, AsinOp, AcosOp, AtanOp, SinhOp, CoshOp, AsinhOp,
             AcoshOp, AtanhOp, CeilOp, FloorOp, RoundOp, CastOp>(op);
}

bool layout::isBinaryElementwise(Operation *op) {
  return isa<AddOp, SubOp, MulOp, DivOp, PowOp, MaxOp, MinOp, EqualOp, LessOp,
             GreaterOp, LessEqualOp, GreaterEqualOp, AndOp, OrOp, XorOp>(op);
}

bool layout::takesConstants(Operation *op) {
  return isBinaryElementwise(op) || isa<WhereOp>(op);
}

bool layout::isLayoutTransparent(Operation *op, int64_t rank) {
  if (op->getNumResults() != 1)
    return false;
  auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!type || type.getRank() != rank)
    return false;
  if (isUnaryElementwise(op) || isa<ConcatOp, SliceOp>(op))
    return true;
  if (takesConstants(op))
    return llvm::all_of(op->getOperands(), [&](Value v) {
      return cast<RankedTensorType>(v.getType()).getRank() == rank ||
             matchPattern(v, m_Constant());
    });
  if (auto r = dyn_cast<ReduceMeanOp>(op))
    return r.getKeepdims();
  if (auto r = dyn_cast<ReduceSumOp>(op))
    return r.getKeepdims();
  if (auto r = dyn_cast<ReduceMaxOp>(op))
    return r.getKeepdims();
  if (auto r = dyn_cast<ReduceMinOp>(op))
    return r.getKeepdims();
  if (isa<MaxPoolOp, AvgPoolOp>(op))
    return rank == 4;
  return false;
}
