//===- ImportNNBuilder.cpp - Composing NN ops from kiln ops ---------------===//

#include "compiler/import/onnx/ImportNNBuilder.h"
#include "compiler/import/onnx/SymbolicShapes.h"

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::onnx_import;

SmallVector<int64_t> mlir::kiln::onnx_import::dimRange(int64_t from,
                                                       int64_t to) {
  SmallVector<int64_t> dims;
  for (int64_t d = from; d < to; ++d)
    dims.push_back(d);
  return dims;
}

Value NNBuilder::splat(ArrayRef<int64_t> shape, Type type, double v) {
  auto tensorType = RankedTensorType::get(shape, type);
  Attribute element;
  if (isa<FloatType>(type))
    element = FloatAttr::get(type, v);
  else if (type.isInteger(1))
    element = IntegerAttr::get(type, APInt(1, v != 0));
  else
    element = IntegerAttr::get(
        type, APInt(type.getIntOrFloatBitWidth(), (int64_t)v, true));
  return c.constant(
      llvm::cast<ElementsAttr>(DenseElementsAttr::get(tensorType, element)));
}

Value NNBuilder::clip(Value a, std::optional<double> lo,
                      std::optional<double> hi) {
  SmallVector<NamedAttribute> attrs;
  if (lo)
    attrs.push_back(c.named("min", c.b.getF64FloatAttr(*lo)));
  if (hi)
    attrs.push_back(c.named("max", c.b.getF64FloatAttr(*hi)));
  return op<ClipOp>({a}, attrs);
}

Value NNBuilder::cast(Value a, Type to) {
  if (a && elementType(a) == to)
    return a;
  return op<CastOp>({a}, {c.named("to", TypeAttr::get(to))});
}

Value NNBuilder::reshape(Value v, ArrayRef<int64_t> shape) {
  if (failed || !v)
    return failed = true, Value();
  auto type = c.type(v);
  if (type.hasStaticShape() && !llvm::any_of(shape, ShapedType::isDynamic))
    return op<ReshapeOp>({v}, {c.named("shape", c.i64s(shape))});
  // Run-time dims: the k-th `?` of `shape` is the k-th run-time dim of `v`
  // (the reshape inserts or drops unit dims around them).
  SmallVector<int64_t> runTimeDims;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (type.isDynamicDim(d))
      runTimeDims.push_back(d);
  if ((int64_t)runTimeDims.size() !=
      llvm::count_if(shape, ShapedType::isDynamic)) {
    c.error = "a reshape of run-time dims that is not a Squeeze or "
              "Unsqueeze needs its shape as a value";
    return failed = true, Value();
  }
  SymInts target;
  size_t next = 0;
  for (int64_t d : shape)
    target.push_back(ShapedType::isDynamic(d)
                         ? dimOf(c, v, runTimeDims[next++])
                         : SymInt(c.b.getI64IntegerAttr(d)));
  auto reshaped = reshapeSymbolic(c, v, target, /*allowZero=*/true);
  if (mlir::failed(reshaped))
    return failed = true, Value();
  return *reshaped;
}

Value NNBuilder::transpose(Value v, ArrayRef<int64_t> perm) {
  return op<TransposeOp>({v}, {c.named("perm", c.i64s(perm))});
}

Value NNBuilder::slice(Value v, int64_t axis, int64_t start, int64_t end,
                       int64_t step) {
  if (failed || !v)
    return failed = true, Value();
  SmallVector<int64_t> starts, ends, steps;
  for (int64_t d = 0; d < rank(v); ++d) {
    bool sliced = d == axis;
    starts.push_back(sliced ? start : 0);
    ends.push_back(sliced ? end : shape(v)[d]);
    steps.push_back(sliced ? step : 1);
  }
  return op<SliceOp>({v}, {c.named("starts", c.i64s(starts)),
                           c.named("ends", c.i64s(ends)),
                           c.named("steps", c.i64s(steps))});
}

Value NNBuilder::concat(ValueRange values, int64_t axis) {
  if (values.size() == 1)
    return values[0];
  return op<ConcatOp>(values, {c.named("axis", c.b.getI64IntegerAttr(axis))});
}

#define KILN_NN_REDUCE(NAME, OP)                                               \
  Value NNBuilder::NAME(Value v, ArrayRef<int64_t> axes, bool keepdims) {      \
    return op<OP>({v}, {c.named("axes", c.i64s(axes)),                         \
                        c.named("keepdims", c.b.getBoolAttr(keepdims))});      \
  }
KILN_NN_REDUCE(reduceSum, ReduceSumOp)
KILN_NN_REDUCE(reduceMean, ReduceMeanOp)
KILN_NN_REDUCE(reduceMax, ReduceMaxOp)
KILN_NN_REDUCE(reduceMin, ReduceMinOp)
#undef KILN_NN_REDUCE

FailureOr<SmallVector<Value>> NNBuilder::done(ArrayRef<Value> results) {
  // Null entries are outputs the node does not request.
  if (failed)
    return failure();
  return SmallVector<Value>(results.begin(), results.end());
}
