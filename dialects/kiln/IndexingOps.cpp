//===- IndexingOps.cpp - Shape inference of indexing ops ------------------===//
//
// As in ShapeInference.cpp, inference is also the verifier: a malformed op
// fails here with a message at its location.
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

LogicalResult checkAxis(std::optional<Location> l, int64_t axis, int64_t rank) {
  if (axis < 0 || axis >= rank)
    return emitOptionalError(l, "axis ", axis, " out of range for rank ", rank);
  return success();
}

LogicalResult checkIntegerIndices(std::optional<Location> l, Value indices) {
  if (!isa<IntegerType>(rankedType(indices).getElementType()))
    return emitOptionalError(l, "indices must be integers");
  return success();
}

LogicalResult checkReduction(std::optional<Location> l, StringRef reduction) {
  if (!llvm::is_contained({"none", "add", "mul", "max", "min"}, reduction))
    return emitOptionalError(l, "unknown reduction '", reduction, "'");
  return success();
}

LogicalResult checkScalarOf(std::optional<Location> l, Value v, Type type,
                            StringRef what) {
  auto t = rankedType(v);
  if (t.getRank() != 0 || t.getElementType() != type)
    return emitOptionalError(l, what, " must be a rank-0 tensor of ", type);
  return success();
}
} // namespace

LogicalResult GatherElementsOp::inferReturnTypes(MLIRContext *,
                                                 std::optional<Location> l,
                                                 Adaptor a,
                                                 SmallVectorImpl<Type> &out) {
  auto data = rankedType(a.getData()), indices = rankedType(a.getIndices());
  if (failed(checkAxis(l, a.getAxis(), data.getRank())) ||
      failed(checkIntegerIndices(l, a.getIndices())))
    return failure();
  if (indices.getRank() != data.getRank())
    return emitOptionalError(l, "indices must have the rank of data");
  out.push_back(data.clone(indices.getShape()));
  return success();
}

LogicalResult GatherNDOp::inferReturnTypes(MLIRContext *,
                                           std::optional<Location> l, Adaptor a,
                                           SmallVectorImpl<Type> &out) {
  auto data = rankedType(a.getData()), indices = rankedType(a.getIndices());
  int64_t batch = a.getBatchDims();
  if (failed(checkIntegerIndices(l, a.getIndices())))
    return failure();
  if (indices.getRank() < 1 || batch < 0 || batch >= indices.getRank() ||
      batch >= data.getRank())
    return emitOptionalError(l, "batch_dims ", batch,
                             " must be below the ranks of data and indices");
  int64_t m = indices.getShape().back();
  if (m < 1 || batch + m > data.getRank())
    return emitOptionalError(l, "index tuples of length ", m,
                             " do not fit data of rank ", data.getRank());
  if (data.getShape().take_front(batch) != indices.getShape().take_front(batch))
    return emitOptionalError(l, "batch dims of data and indices differ");
  SmallVector<int64_t> shape(indices.getShape().drop_back());
  llvm::append_range(shape, data.getShape().drop_front(batch + m));
  out.push_back(data.clone(shape));
  return success();
}

LogicalResult ScatterElementsOp::inferReturnTypes(MLIRContext *,
                                                  std::optional<Location> l,
                                                  Adaptor a,
                                                  SmallVectorImpl<Type> &out) {
  auto data = rankedType(a.getData()), indices = rankedType(a.getIndices()),
       updates = rankedType(a.getUpdates());
  if (failed(checkAxis(l, a.getAxis(), data.getRank())) ||
      failed(checkIntegerIndices(l, a.getIndices())) ||
      failed(checkReduction(l, a.getReduction())))
    return failure();
  if (indices.getShape() != updates.getShape() ||
      indices.getRank() != data.getRank())
    return emitOptionalError(
        l, "indices and updates must have one shape and the rank of data");
  if (updates.getElementType() != data.getElementType())
    return emitOptionalError(l, "updates must have the element type of data");
  out.push_back(data);
  return success();
}

LogicalResult ScatterNDOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> l,
                                            Adaptor a,
                                            SmallVectorImpl<Type> &out) {
  auto data = rankedType(a.getData()), indices = rankedType(a.getIndices()),
       updates = rankedType(a.getUpdates());
  if (failed(checkIntegerIndices(l, a.getIndices())) ||
      failed(checkReduction(l, a.getReduction())))
    return failure();
  if (indices.getRank() < 1 || indices.getShape().back() < 1 ||
      indices.getShape().back() > data.getRank())
    return emitOptionalError(l, "index tuples must have 1 to ", data.getRank(),
                             " entries");
  SmallVector<int64_t> expected(indices.getShape().drop_back());
  llvm::append_range(expected,
                     data.getShape().drop_front(indices.getShape().back()));
  if (updates.getShape() != ArrayRef<int64_t>(expected) ||
      updates.getElementType() != data.getElementType())
    return emitOptionalError(l, "updates do not match data and indices");
  out.push_back(data);
  return success();
}

LogicalResult TriluOp::inferReturnTypes(MLIRContext *ctx,
                                        std::optional<Location> l, Adaptor a,
                                        SmallVectorImpl<Type> &out) {
  auto input = rankedType(a.getInput());
  if (input.getRank() < 2)
    return emitOptionalError(l, "input must have rank >= 2");
  if (failed(checkScalarOf(l, a.getK(), IntegerType::get(ctx, 64), "k")))
    return failure();
  out.push_back(input);
  return success();
}

LogicalResult ReverseSequenceOp::inferReturnTypes(MLIRContext *,
                                                  std::optional<Location> l,
                                                  Adaptor a,
                                                  SmallVectorImpl<Type> &out) {
  auto input = rankedType(a.getInput()), lengths = rankedType(a.getLengths());
  int64_t batch = a.getBatchAxis(), time = a.getTimeAxis();
  if (input.getRank() < 2 || batch == time || batch < 0 || batch > 1 ||
      time < 0 || time > 1)
    return emitOptionalError(l, "batch_axis and time_axis must be 0 and 1 "
                                "of an input of rank >= 2");
  if (failed(checkIntegerIndices(l, a.getLengths())) ||
      lengths.getRank() != 1 ||
      lengths.getDimSize(0) != input.getDimSize(batch))
    return emitOptionalError(l, "lengths must be integers, one per batch "
                                "element");
  out.push_back(input);
  return success();
}

LogicalResult PadOp::inferReturnTypes(MLIRContext *, std::optional<Location> l,
                                      Adaptor a, SmallVectorImpl<Type> &out) {
  auto input = rankedType(a.getInput());
  ArrayRef<int64_t> pads = a.getPads();
  int64_t rank = input.getRank();
  StringRef mode = a.getMode();
  if (!llvm::is_contained({"constant", "reflect", "edge", "wrap"}, mode))
    return emitOptionalError(l, "unknown pad mode '", mode, "'");
  if (failed(checkScalarOf(l, a.getValue(), input.getElementType(), "value")))
    return failure();
  if ((int64_t)pads.size() != 2 * rank ||
      llvm::any_of(pads, [](int64_t p) { return p < 0; }))
    return emitOptionalError(l, "pads must be ", 2 * rank,
                             " non-negative values");
  std::optional<ArrayRef<int64_t>> interior = a.getInterior();
  if (interior && ((int64_t)interior->size() != rank || mode != "constant" ||
                   llvm::any_of(*interior, [](int64_t p) { return p < 0; })))
    return emitOptionalError(l, "interior must be ", rank,
                             " non-negative values, in constant mode");
  SmallVector<int64_t> shape(input.getShape());
  for (int64_t d = 0; d < rank; ++d) {
    bool padded = pads[d] > 0 || pads[rank + d] > 0;
    // Non-constant modes read existing elements to fill the border.
    if (padded && mode != "constant" && shape[d] == 0)
      return emitOptionalError(l, mode, " padding of an empty dim ", d);
    if (ShapedType::isDynamic(shape[d]))
      continue;
    int64_t between =
        interior ? (*interior)[d] * std::max<int64_t>(shape[d] - 1, 0) : 0;
    shape[d] += pads[d] + pads[rank + d] + between;
  }
  out.push_back(input.clone(shape));
  return success();
}

LogicalResult ResizeOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> l, Adaptor a,
                                         SmallVectorImpl<Type> &out) {
  auto input = rankedType(a.getInput());
  int64_t rank = input.getRank();
  if ((int64_t)a.getSizes().size() != rank ||
      (int64_t)a.getScales().size() != rank)
    return emitOptionalError(l, "needs one size and one scale per dim");
  if (!a.getRoi().empty() && (int64_t)a.getRoi().size() != 2 * rank)
    return emitOptionalError(l, "roi must be empty or have ", 2 * rank,
                             " values");
  if (!llvm::is_contained({"nearest", "linear", "cubic"}, a.getMode()))
    return emitOptionalError(l, "unknown mode '", a.getMode(), "'");
  if (Value params = a.getParams()) {
    auto type = rankedType(params);
    if (type.getRank() != 1 || type.getDimSize(0) != 3 * rank ||
        !type.getElementType().isF64())
      return emitOptionalError(l, "params must be tensor<", 3 * rank, "xf64>");
  }
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t size = a.getSizes()[d];
    bool runTimeIn = input.isDynamicDim(d);
    if (!(a.getScales()[d] > 0)) // NaN too
      return emitOptionalError(l, "bad size or scale in dim ", d);
    // -1: floor(in * scale) of a run-time input extent, computed then.
    if (size == -1 && runTimeIn) {
      shape.push_back(ShapedType::kDynamic);
      continue;
    }
    if (size < 0 || a.getScales()[d] <= 0 ||
        (size > 0 && input.getDimSize(d) == 0))
      return emitOptionalError(l, "bad size or scale in dim ", d);
    // A static size of a run-time extent implies a run-time scale.
    if (runTimeIn && !a.getParams())
      return emitOptionalError(l, "dim ", d,
                               " resizes a run-time extent to a static "
                               "size; its scale must come from params");
    shape.push_back(size);
  }
  out.push_back(input.clone(shape));
  return success();
}

LogicalResult TopKOp::inferReturnTypes(MLIRContext *ctx,
                                       std::optional<Location> l, Adaptor a,
                                       SmallVectorImpl<Type> &out) {
  auto input = rankedType(a.getInput());
  if (failed(checkAxis(l, a.getAxis(), input.getRank())))
    return failure();
  int64_t k = a.getK();
  if (Value kValue = a.getKValue()) {
    auto type = rankedType(kValue);
    if (type.getRank() != 0 || !type.getElementType().isInteger(64))
      return emitOptionalError(l, "k_value must be tensor<i64>, got ", type);
    k = ShapedType::kDynamic;
  } else if (k < 0 || k > input.getDimSize(a.getAxis())) {
    return emitOptionalError(l, "k = ", k, " out of range for a dim of ",
                             input.getDimSize(a.getAxis()));
  }
  SmallVector<int64_t> shape(input.getShape());
  shape[a.getAxis()] = k;
  out.push_back(input.clone(shape));
  out.push_back(RankedTensorType::get(shape, IntegerType::get(ctx, 64)));
  return success();
}

LogicalResult GridSampleOp::inferReturnTypes(MLIRContext *,
                                             std::optional<Location> l,
                                             Adaptor a,
                                             SmallVectorImpl<Type> &out) {
  auto input = rankedType(a.getInput()), grid = rankedType(a.getGrid());
  int64_t rank = input.getRank();
  if (rank < 3)
    return emitOptionalError(l, "input must be [N, C, D1..Dk] (rank >= 3)");
  if (!isa<FloatType>(input.getElementType()) ||
      !isa<FloatType>(grid.getElementType()))
    return emitOptionalError(l, "input and grid must be floats");
  if (grid.getRank() != rank || grid.getDimSize(0) != input.getDimSize(0) ||
      grid.getDimSize(rank - 1) != rank - 2)
    return emitOptionalError(l, "grid must be [N, O1..Ok, k] for an input "
                                "of k spatial dims");
  if (!llvm::is_contained({"nearest", "linear", "cubic"}, a.getMode()))
    return emitOptionalError(l, "unknown mode '", a.getMode(), "'");
  if (!llvm::is_contained({"zeros", "border", "reflection"},
                          a.getPaddingMode()))
    return emitOptionalError(l, "unknown padding_mode '", a.getPaddingMode(),
                             "'");
  SmallVector<int64_t> shape{input.getDimSize(0), input.getDimSize(1)};
  for (int64_t d = 1; d < rank - 1; ++d)
    shape.push_back(grid.getDimSize(d));
  out.push_back(input.clone(shape));
  return success();
}
