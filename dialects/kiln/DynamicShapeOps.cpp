//===- DynamicShapeOps.cpp - Shape inference of run-time extent ops -------===//
//
// The ops whose results have run-time (`?`) extents: the dynamic forms of
// reshape/expand/range/slice/unsqueeze/squeeze, whose extents come from
// run-time shape operands, and the data-dependent ones (nonzero_indices,
// unique, non_max_suppression), whose extents are known only after the run.
// As in ShapeInference.cpp, inference is also the verifier.
//
//===----------------------------------------------------------------------===//

#include "dialects/kiln/KilnOps.h"

#include "mlir/IR/Diagnostics.h"

using namespace mlir;
using namespace mlir::kiln;

namespace {
RankedTensorType rankedType(Value v) {
  return cast<RankedTensorType>(v.getType());
}
} // namespace

/// Length of a run-time shape-like operand (1-D i64, static length).
static FailureOr<int64_t> shapeOperandLength(std::optional<Location> l, Value v,
                                             StringRef what) {
  auto type = rankedType(v);
  if (type.getRank() != 1 || type.isDynamicDim(0) ||
      !type.getElementType().isSignlessInteger(64))
    return emitOptionalError(
        l, what, " must be a 1-D i64 tensor of static length, got ", type);
  return type.getDimSize(0);
}

LogicalResult DynamicReshapeOp::inferReturnTypes(MLIRContext *,
                                                 std::optional<Location> l,
                                                 Adaptor a,
                                                 SmallVectorImpl<Type> &out) {
  auto input = rankedType(a.getInput());
  FailureOr<int64_t> rank = shapeOperandLength(l, a.getShape(), "shape");
  if (failed(rank))
    return failure();
  SmallVector<int64_t> dims(*rank, ShapedType::kDynamic);
  if (auto known = a.getStaticShape()) {
    if ((int64_t)known->size() != *rank)
      return emitOptionalError(l, "static_shape has ", known->size(),
                               " entries for a rank-", *rank, " result");
    for (auto [dim, k] : llvm::zip(dims, *known))
      if (k >= 0)
        dim = k;
  }
  out.push_back(input.clone(dims));
  return success();
}

LogicalResult DynamicExpandOp::inferReturnTypes(MLIRContext *,
                                                std::optional<Location> l,
                                                Adaptor a,
                                                SmallVectorImpl<Type> &out) {
  auto input = rankedType(a.getInput());
  FailureOr<int64_t> length = shapeOperandLength(l, a.getShape(), "shape");
  if (failed(length))
    return failure();
  int64_t rank = std::max<int64_t>(input.getRank(), *length);
  ArrayRef<int64_t> known = a.getStaticShape();
  if ((int64_t)known.size() != rank)
    return emitOptionalError(l, "static_shape has ", known.size(),
                             " entries for a rank-", rank, " result");
  SmallVector<int64_t> dims;
  for (int64_t k : known)
    dims.push_back(k >= 0 ? k : ShapedType::kDynamic);
  out.push_back(input.clone(dims));
  return success();
}

LogicalResult DynamicRangeOp::inferReturnTypes(MLIRContext *,
                                               std::optional<Location> l,
                                               Adaptor a,
                                               SmallVectorImpl<Type> &out) {
  auto start = rankedType(a.getStart());
  for (Value v : {a.getStart(), a.getLimit(), a.getDelta()})
    if (rankedType(v).getRank() != 0 ||
        rankedType(v).getElementType() != start.getElementType())
      return emitOptionalError(l, "start, limit and delta must be scalars of "
                                  "one type");
  out.push_back(
      RankedTensorType::get({ShapedType::kDynamic}, start.getElementType()));
  return success();
}

LogicalResult DynamicSliceOp::inferReturnTypes(MLIRContext *,
                                               std::optional<Location> l,
                                               Adaptor a,
                                               SmallVectorImpl<Type> &out) {
  auto input = rankedType(a.getInput());
  for (Value bounds : {a.getStarts(), a.getEnds()}) {
    FailureOr<int64_t> n = shapeOperandLength(l, bounds, "slice bounds");
    if (failed(n))
      return failure();
    if (*n != input.getRank())
      return emitOptionalError(l, "slice bounds need one entry per dim");
  }
  ArrayRef<int64_t> known = a.getStaticShape();
  if ((int64_t)known.size() != input.getRank())
    return emitOptionalError(l, "static_shape has ", known.size(),
                             " entries for a rank-", input.getRank(),
                             " result");
  if (std::optional<ArrayRef<int64_t>> steps = a.getSteps()) {
    if ((int64_t)steps->size() != input.getRank())
      return emitOptionalError(l, "steps has ", steps->size(),
                               " entries for a rank-", input.getRank(),
                               " input");
    if (llvm::is_contained(*steps, 0))
      return emitOptionalError(l, "steps must not be 0");
    if (llvm::is_contained(*steps, INT64_MIN))
      return emitOptionalError(l, "a step of INT64_MIN cannot be negated");
  }
  SmallVector<int64_t> dims;
  for (int64_t k : known)
    dims.push_back(k >= 0 ? k : ShapedType::kDynamic);
  out.push_back(input.clone(dims));
  return success();
}

LogicalResult NonZeroIndicesOp::inferReturnTypes(MLIRContext *ctx,
                                                 std::optional<Location> l,
                                                 Adaptor a,
                                                 SmallVectorImpl<Type> &out) {
  if (rankedType(a.getInput()).getRank() != 1)
    return emitOptionalError(l, "input must be 1-D, got ",
                             a.getInput().getType());
  out.push_back(
      RankedTensorType::get({ShapedType::kDynamic}, IntegerType::get(ctx, 64)));
  return success();
}

LogicalResult UniqueOp::inferReturnTypes(MLIRContext *ctx,
                                         std::optional<Location> l, Adaptor a,
                                         SmallVectorImpl<Type> &out) {
  auto input = rankedType(a.getInput());
  if (!input.hasStaticShape())
    return emitOptionalError(l, "needs a static input shape, got ", input);
  Type i64 = IntegerType::get(ctx, 64);
  int64_t keys = input.getNumElements();
  if (std::optional<int64_t> axis = a.getAxis()) {
    if (*axis < 0 || *axis >= input.getRank())
      return emitOptionalError(l, "axis ", *axis, " out of range for rank ",
                               input.getRank());
    keys = input.getDimSize(*axis);
    SmallVector<int64_t> shape(input.getShape());
    shape[*axis] = ShapedType::kDynamic;
    out.push_back(input.clone(shape));
  } else {
    out.push_back(input.clone({ShapedType::kDynamic}));
  }
  auto perUnique = RankedTensorType::get({ShapedType::kDynamic}, i64);
  out.append({perUnique, RankedTensorType::get({keys}, i64), perUnique});
  return success();
}

LogicalResult
NonMaxSuppressionOp::inferReturnTypes(MLIRContext *ctx,
                                      std::optional<Location> l, Adaptor a,
                                      SmallVectorImpl<Type> &out) {
  auto boxes = rankedType(a.getBoxes()), scores = rankedType(a.getScores());
  if (boxes.getRank() != 3 || boxes.getDimSize(2) != 4 ||
      !isa<FloatType>(boxes.getElementType()))
    return emitOptionalError(l, "boxes must be [batch, boxes, 4] floats, got ",
                             a.getBoxes().getType());
  if (scores.getRank() != 3 ||
      scores.getElementType() != boxes.getElementType() ||
      scores.getDimSize(0) != boxes.getDimSize(0) ||
      scores.getDimSize(2) != boxes.getDimSize(1))
    return emitOptionalError(l, "scores must be [batch, classes, boxes] of ",
                             a.getBoxes().getType(), ", got ",
                             a.getScores().getType());
  for (Value v : {a.getMaxOutputBoxesPerClass(), a.getIouThreshold(),
                  a.getScoreThreshold()})
    if (rankedType(v).getRank() != 0)
      return emitOptionalError(l,
                               "thresholds and the box count must be "
                               "rank 0, got ",
                               v.getType());
  if (!rankedType(a.getMaxOutputBoxesPerClass()).getElementType().isInteger(64))
    return emitOptionalError(l, "max_output_boxes_per_class must be i64");
  out.push_back(RankedTensorType::get({ShapedType::kDynamic, 3},
                                      IntegerType::get(ctx, 64)));
  return success();
}

LogicalResult DynamicUnsqueezeOp::inferReturnTypes(MLIRContext *,
                                                   std::optional<Location> l,
                                                   Adaptor a,
                                                   SmallVectorImpl<Type> &out) {
  auto input = rankedType(a.getInput());
  FailureOr<int64_t> count = shapeOperandLength(l, a.getAxes(), "axes");
  if (failed(count))
    return failure();
  SmallVector<int64_t> dims(input.getRank() + *count, ShapedType::kDynamic);
  out.push_back(input.clone(dims));
  return success();
}

LogicalResult DynamicSqueezeOp::inferReturnTypes(MLIRContext *,
                                                 std::optional<Location> l,
                                                 Adaptor a,
                                                 SmallVectorImpl<Type> &out) {
  auto input = rankedType(a.getInput());
  FailureOr<int64_t> count = shapeOperandLength(l, a.getAxes(), "axes");
  if (failed(count))
    return failure();
  if (*count > input.getRank())
    return emitOptionalError(l, "cannot squeeze ", *count, " axes of a rank-",
                             input.getRank(), " tensor");
  SmallVector<int64_t> dims(input.getRank() - *count, ShapedType::kDynamic);
  out.push_back(input.clone(dims));
  return success();
}
