//===- AttentionOps.cpp - Shape inference, verifiers and folders of kiln.attention -===//
//
// As for every kiln op, result type inference is also the verifier: a
// malformed attention (mismatched head dims, a mask that would widen the
// scores) fails inference with a message at the op's location.
//
//===----------------------------------------------------------------------===//

#include "dialects/kiln/KilnOps.h"

#include "mlir/IR/Diagnostics.h"

#include <cmath>

using namespace mlir;
using namespace mlir::kiln;

namespace {
std::string shapeText(ArrayRef<int64_t> shape) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "[";
  llvm::interleaveComma(shape, os);
  os << "]";
  return s;
}
} // namespace

LogicalResult AttentionOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor a,
                                            SmallVectorImpl<Type> &out) {
  auto q = cast<RankedTensorType>(a.getQuery().getType());
  auto k = cast<RankedTensorType>(a.getKey().getType());
  auto v = cast<RankedTensorType>(a.getValue().getType());
  int64_t rank = q.getRank();
  if (rank < 2 || k.getRank() != rank || v.getRank() != rank)
    return emitOptionalError(loc, "attention: q, k and v need one rank >= 2, "
                                  "got ",
                             q.getRank(), ", ", k.getRank(), ", ", v.getRank());
  Type element = q.getElementType();
  if (!isa<FloatType>(element) || k.getElementType() != element ||
      v.getElementType() != element)
    return emitOptionalError(loc, "attention: q, k and v need one float "
                                  "element type");
  ArrayRef<int64_t> qs = q.getShape(), ks = k.getShape(), vs = v.getShape();
  if (qs.drop_back(2) != ks.drop_back(2) || qs.drop_back(2) != vs.drop_back(2))
    return emitOptionalError(loc, "attention: batch dims differ: q ",
                             shapeText(qs), ", k ", shapeText(ks), ", v ",
                             shapeText(vs));
  if (qs.back() != ks.back())
    return emitOptionalError(loc, "attention: q and k head dims differ (",
                             qs.back(), " vs ", ks.back(), ")");
  if (ks.end()[-2] != vs.end()[-2])
    return emitOptionalError(loc, "attention: k and v sequence lengths "
                                  "differ (",
                             ks.end()[-2], " vs ", vs.end()[-2], ")");
  if (!std::isfinite(a.getScale().convertToDouble()))
    return emitOptionalError(loc, "attention: scale must be finite");

  SmallVector<int64_t> scores(qs.drop_back(1));
  scores.push_back(ks.end()[-2]);
  if (Value maskValue = a.getMask()) {
    auto mask = cast<RankedTensorType>(maskValue.getType());
    if (mask.getElementType() != element)
      return emitOptionalError(loc, "attention: the mask is additive and "
                                    "needs the element type of q");
    auto broadcast = broadcastShapes(scores, mask.getShape());
    if (mask.getRank() > rank || failed(broadcast) ||
        ArrayRef<int64_t>(*broadcast) != ArrayRef<int64_t>(scores))
      return emitOptionalError(loc, "attention: mask ",
                               shapeText(mask.getShape()),
                               " does not broadcast to the scores ",
                               shapeText(scores));
  }
  SmallVector<int64_t> shape(qs.drop_back(1));
  shape.push_back(vs.back());
  out.push_back(RankedTensorType::get(shape, element));
  return success();
}
