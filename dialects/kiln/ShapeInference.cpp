//===- ShapeInference.cpp - Result types of kiln ops ----------------------===//
//
// Every kiln op infers its result type from its operands and attributes.
// The same functions verify ops: a mismatch between the written and the
// inferred type is a verifier error, and a malformed op (bad axis, shapes that
// do not broadcast) fails inference with a message at the op's location,
// which the importer turns into an error naming the ONNX node. The ops with
// run-time extents are in DynamicShapeOps.cpp.
//
//===----------------------------------------------------------------------===//

#include "dialects/kiln/KilnOps.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::kiln;

namespace {
RankedTensorType rankedType(Value v) {
  return cast<RankedTensorType>(v.getType());
}

std::string shapeString(ArrayRef<int64_t> shape) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "[";
  llvm::interleaveComma(shape, os, [&](int64_t d) {
    if (ShapedType::isDynamic(d))
      os << "?";
    else
      os << d;
  });
  os << "]";
  return s;
}

LogicalResult inferBroadcast(std::optional<Location> loc, ValueRange operands,
                             Type elementType,
                             SmallVectorImpl<Type> &inferred) {
  SmallVector<int64_t> shape;
  for (Value v : operands) {
    auto type = rankedType(v);
    auto next = broadcastShapes(shape, type.getShape());
    if (failed(next))
      return emitOptionalError(loc, "shapes ", shapeString(shape), " and ",
                               shapeString(type.getShape()),
                               " do not broadcast");
    shape = *next;
  }
  inferred.push_back(RankedTensorType::get(shape, elementType));
  return success();
}

LogicalResult checkSameElementType(std::optional<Location> loc, Value a,
                                   Value b) {
  if (rankedType(a).getElementType() != rankedType(b).getElementType())
    return emitOptionalError(
        loc, "element types differ: ", rankedType(a).getElementType(), " vs ",
        rankedType(b).getElementType());
  return success();
}
} // namespace

FailureOr<SmallVector<int64_t>>
mlir::kiln::broadcastShapes(ArrayRef<int64_t> a, ArrayRef<int64_t> b) {
  size_t rank = std::max(a.size(), b.size());
  SmallVector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    // A run-time extent broadcasts as the other side's: with a static
    // extent other than 1 it must equal it (the lowering checks), with 1 or
    // another run-time extent it stays run-time.
    bool dynA = ShapedType::isDynamic(da), dynB = ShapedType::isDynamic(db);
    if (dynA || dynB) {
      if (dynA && dynB)
        out[i] = da;
      else if (dynA)
        out[i] = db == 1 ? da : db;
      else
        out[i] = da == 1 ? db : da;
      continue;
    }
    if (da != db && da != 1 && db != 1)
      return failure();
    out[i] = da == 1 ? db : da;
  }
  return out;
}

int64_t mlir::kiln::windowOutputSize(int64_t in, int64_t kernel, int64_t stride,
                                     int64_t dilation, int64_t padBegin,
                                     int64_t padEnd, bool ceilMode) {
  int64_t span = dilation * (kernel - 1) + 1;
  int64_t room = in + padBegin + padEnd - span;
  if (room < 0)
    return 0;
  int64_t out = (ceilMode ? (room + stride - 1) / stride : room / stride) + 1;
  // ONNX/PyTorch: the last window must start inside the input or left pad.
  if (ceilMode && (out - 1) * stride >= in + padBegin)
    --out;
  return out;
}

int64_t mlir::kiln::sliceSize(int64_t start, int64_t end, int64_t step) {
  if (step > 0)
    return end > start ? (end - start + step - 1) / step : 0;
  return start > end ? (start - end - step - 1) / -step : 0;
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

#define KILN_BINARY_INFER(OP)                                                  \
  LogicalResult OP::inferReturnTypes(MLIRContext *, std::optional<Location> l, \
                                     Adaptor a, SmallVectorImpl<Type> &out) {  \
    if (failed(checkSameElementType(l, a.getLhs(), a.getRhs())))               \
      return failure();                                                        \
    return inferBroadcast(l, {a.getLhs(), a.getRhs()},                         \
                          rankedType(a.getLhs()).getElementType(), out);       \
  }
KILN_BINARY_INFER(AddOp)
KILN_BINARY_INFER(SubOp)
KILN_BINARY_INFER(MulOp)
KILN_BINARY_INFER(DivOp)
KILN_BINARY_INFER(MaxOp)
KILN_BINARY_INFER(MinOp)
KILN_BINARY_INFER(ModOp)
#undef KILN_BINARY_INFER

// Logical/bitwise ops and shifts: integers (i1 included) only.
#define KILN_INT_BINARY_INFER(OP)                                              \
  LogicalResult OP::inferReturnTypes(MLIRContext *, std::optional<Location> l, \
                                     Adaptor a, SmallVectorImpl<Type> &out) {  \
    if (failed(checkSameElementType(l, a.getLhs(), a.getRhs())))               \
      return failure();                                                        \
    Type type = rankedType(a.getLhs()).getElementType();                       \
    if (!isa<IntegerType>(type))                                               \
      return emitOptionalError(l, "needs integer operands, got ", type);       \
    return inferBroadcast(l, {a.getLhs(), a.getRhs()}, type, out);             \
  }
KILN_INT_BINARY_INFER(AndOp)
KILN_INT_BINARY_INFER(OrOp)
KILN_INT_BINARY_INFER(XorOp)
KILN_INT_BINARY_INFER(ShiftLeftOp)
KILN_INT_BINARY_INFER(ShiftRightOp)
#undef KILN_INT_BINARY_INFER

// Pow allows a different exponent type (ONNX Pow has two type parameters).
LogicalResult PowOp::inferReturnTypes(MLIRContext *, std::optional<Location> l,
                                      Adaptor a, SmallVectorImpl<Type> &out) {
  return inferBroadcast(l, {a.getLhs(), a.getRhs()},
                        rankedType(a.getLhs()).getElementType(), out);
}

#define KILN_COMPARE_INFER(OP)                                                 \
  LogicalResult OP::inferReturnTypes(MLIRContext *ctx,                         \
                                     std::optional<Location> l, Adaptor a,     \
                                     SmallVectorImpl<Type> &out) {             \
    if (failed(checkSameElementType(l, a.getLhs(), a.getRhs())))               \
      return failure();                                                        \
    return inferBroadcast(l, {a.getLhs(), a.getRhs()},                         \
                          IntegerType::get(ctx, 1), out);                      \
  }
KILN_COMPARE_INFER(EqualOp)
KILN_COMPARE_INFER(LessOp)
KILN_COMPARE_INFER(GreaterOp)
KILN_COMPARE_INFER(LessEqualOp)
KILN_COMPARE_INFER(GreaterEqualOp)
#undef KILN_COMPARE_INFER

#define KILN_SAME_TYPE_INFER(OP)                                               \
  LogicalResult OP::inferReturnTypes(MLIRContext *, std::optional<Location>,   \
                                     Adaptor a, SmallVectorImpl<Type> &out) {  \
    out.push_back(a.getInput().getType());                                     \
    return success();                                                          \
  }
KILN_SAME_TYPE_INFER(SqrtOp)
KILN_SAME_TYPE_INFER(ExpOp)
KILN_SAME_TYPE_INFER(LogOp)
KILN_SAME_TYPE_INFER(NegOp)
KILN_SAME_TYPE_INFER(AbsOp)
KILN_SAME_TYPE_INFER(ReciprocalOp)
KILN_SAME_TYPE_INFER(ReluOp)
KILN_SAME_TYPE_INFER(SigmoidOp)
KILN_SAME_TYPE_INFER(TanhOp)
KILN_SAME_TYPE_INFER(ErfOp)
KILN_SAME_TYPE_INFER(LeakyReluOp)
KILN_SAME_TYPE_INFER(GeluOp)
KILN_SAME_TYPE_INFER(ClipOp)
KILN_SAME_TYPE_INFER(SoftmaxOp)
KILN_SAME_TYPE_INFER(LogSoftmaxOp)
#undef KILN_SAME_TYPE_INFER

LogicalResult NotOp::inferReturnTypes(MLIRContext *, std::optional<Location> l,
                                      Adaptor a, SmallVectorImpl<Type> &out) {
  Type type = rankedType(a.getInput()).getElementType();
  if (!isa<IntegerType>(type))
    return emitOptionalError(l, "needs an integer operand, got ", type);
  out.push_back(a.getInput().getType());
  return success();
}

#define KILN_FLOAT_UNARY_INFER(OP)                                             \
  LogicalResult OP::inferReturnTypes(MLIRContext *, std::optional<Location> l, \
                                     Adaptor a, SmallVectorImpl<Type> &out) {  \
    Type type = rankedType(a.getInput()).getElementType();                     \
    if (!isa<FloatType>(type))                                                 \
      return emitOptionalError(l, "needs a float operand, got ", type);        \
    out.push_back(a.getInput().getType());                                     \
    return success();                                                          \
  }
KILN_FLOAT_UNARY_INFER(SinOp)
KILN_FLOAT_UNARY_INFER(CosOp)
KILN_FLOAT_UNARY_INFER(TanOp)
KILN_FLOAT_UNARY_INFER(AsinOp)
KILN_FLOAT_UNARY_INFER(AcosOp)
KILN_FLOAT_UNARY_INFER(AtanOp)
KILN_FLOAT_UNARY_INFER(SinhOp)
KILN_FLOAT_UNARY_INFER(CoshOp)
KILN_FLOAT_UNARY_INFER(AsinhOp)
KILN_FLOAT_UNARY_INFER(AcoshOp)
KILN_FLOAT_UNARY_INFER(AtanhOp)
KILN_FLOAT_UNARY_INFER(CeilOp)
KILN_FLOAT_UNARY_INFER(FloorOp)
KILN_FLOAT_UNARY_INFER(RoundOp)
#undef KILN_FLOAT_UNARY_INFER

LogicalResult CastOp::inferReturnTypes(MLIRContext *, std::optional<Location>,
                                       Adaptor a, SmallVectorImpl<Type> &out) {
  out.push_back(rankedType(a.getInput()).clone(a.getTo()));
  return success();
}

LogicalResult WhereOp::inferReturnTypes(MLIRContext *,
                                        std::optional<Location> l, Adaptor a,
                                        SmallVectorImpl<Type> &out) {
  if (!rankedType(a.getCondition()).getElementType().isInteger(1))
    return emitOptionalError(l, "condition must be a tensor of i1");
  if (failed(checkSameElementType(l, a.getX(), a.getY())))
    return failure();
  return inferBroadcast(l, {a.getCondition(), a.getX(), a.getY()},
                        rankedType(a.getX()).getElementType(), out);
}

LogicalResult ConstantOp::inferReturnTypes(MLIRContext *,
                                           std::optional<Location> l, Adaptor a,
                                           SmallVectorImpl<Type> &out) {
  auto type = dyn_cast<RankedTensorType>(a.getValue().getType());
  if (!type)
    return emitOptionalError(l, "constant must be a ranked tensor");
  out.push_back(type);
  return success();
}

//===----------------------------------------------------------------------===//
// Normalization
//===----------------------------------------------------------------------===//

LogicalResult BatchNormOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> l,
                                            Adaptor a,
                                            SmallVectorImpl<Type> &out) {
  auto type = rankedType(a.getInput());
  if (type.getRank() < 2)
    return emitOptionalError(l, "input must have rank >= 2, got ",
                             type.getRank());
  int64_t channels = type.getDimSize(1);
  for (Value param :
       {a.getScale(), a.getBias(), a.getMean(), a.getVariance()}) {
    // An extent known only at run time on either side is checked then.
    auto p = rankedType(param);
    if (p.getRank() != 1 ||
        (p.getDimSize(0) != channels && !ShapedType::isDynamic(channels) &&
         !p.isDynamicDim(0)))
      return emitOptionalError(l, "per-channel operands must be ",
                               shapeString({channels}), ", got ",
                               shapeString(p.getShape()));
  }
  out.push_back(type);
  return success();
}

LogicalResult LayerNormOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> l,
                                            Adaptor a,
                                            SmallVectorImpl<Type> &out) {
  auto type = rankedType(a.getInput());
  int64_t axis = a.getAxis();
  if (axis < 0 || axis >= type.getRank())
    return emitOptionalError(l, "axis ", axis, " out of range for rank ",
                             type.getRank());
  ArrayRef<int64_t> normalized = type.getShape().drop_front(axis);
  for (Value param : {a.getScale(), a.getBias()}) {
    if (!param)
      continue;
    // A run-time normalized extent takes a static parameter extent (the
    // lowering checks them when the model runs).
    auto b = broadcastShapes(normalized, rankedType(param).getShape());
    bool fits = succeeded(b) && b->size() == normalized.size();
    for (size_t i = 0; fits && i < normalized.size(); ++i)
      fits = (*b)[i] == normalized[i] || ShapedType::isDynamic(normalized[i]);
    if (!fits)
      return emitOptionalError(
          l, "scale/bias ", shapeString(rankedType(param).getShape()),
          " do not broadcast to ", shapeString(normalized));
  }
  out.push_back(type);
  return success();
}

//===----------------------------------------------------------------------===//
// Contractions and windows
//===----------------------------------------------------------------------===//

LogicalResult MatMulOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> l, Adaptor a,
                                         SmallVectorImpl<Type> &out) {
  auto lhs = rankedType(a.getLhs()), rhs = rankedType(a.getRhs());
  if (failed(checkSameElementType(l, a.getLhs(), a.getRhs())))
    return failure();
  if (lhs.getRank() < 2 || rhs.getRank() < 2)
    return emitOptionalError(l, "operands must have rank >= 2");
  int64_t m = lhs.getShape().end()[-2], k = lhs.getShape().back();
  int64_t k2 = rhs.getShape().end()[-2], n = rhs.getShape().back();
  // A run-time contracted extent is checked against the other when the
  // model runs.
  if (k != k2 && !ShapedType::isDynamic(k) && !ShapedType::isDynamic(k2))
    return emitOptionalError(
        l, "contracted dims differ: ", shapeString(lhs.getShape()), " @ ",
        shapeString(rhs.getShape()));
  auto batch =
      broadcastShapes(lhs.getShape().drop_back(2), rhs.getShape().drop_back(2));
  if (failed(batch))
    return emitOptionalError(
        l, "batch dims do not broadcast: ", shapeString(lhs.getShape()), " @ ",
        shapeString(rhs.getShape()));
  SmallVector<int64_t> shape = *batch;
  shape.append({m, n});
  out.push_back(RankedTensorType::get(shape, lhs.getElementType()));
  return success();
}

LogicalResult QuantizedMatMulOp::inferReturnTypes(MLIRContext *ctx,
                                                  std::optional<Location> l,
                                                  Adaptor a,
                                                  SmallVectorImpl<Type> &out) {
  auto lhs = rankedType(a.getLhs()), rhs = rankedType(a.getRhs());
  auto byte = [](Type t, bool signedOnly) {
    auto i = dyn_cast<IntegerType>(t);
    return i && i.getWidth() == 8 && (!signedOnly || !i.isUnsigned());
  };
  if (!byte(lhs.getElementType(), false) || !byte(rhs.getElementType(), true))
    return emitOptionalError(l, "operands must be 8-bit integers, the rhs "
                                "signed");
  if (lhs.getRank() < 2 || rhs.getRank() != 2)
    return emitOptionalError(l, "lhs must have rank >= 2 and rhs rank 2");
  if (lhs.getShape().back() != rhs.getShape()[0])
    return emitOptionalError(
        l, "contracted dims differ: ", shapeString(lhs.getShape()), " @ ",
        shapeString(rhs.getShape()));
  int64_t zeroPoint = a.getLhsZeroPoint();
  bool isUnsigned = cast<IntegerType>(lhs.getElementType()).isUnsigned();
  if (zeroPoint < (isUnsigned ? 0 : -128) ||
      zeroPoint > (isUnsigned ? 255 : 127))
    return emitOptionalError(l, "lhs_zero_point ", zeroPoint,
                             " is outside the lhs element type");
  SmallVector<int64_t> shape(lhs.getShape().drop_back());
  shape.push_back(rhs.getShape()[1]);
  out.push_back(RankedTensorType::get(shape, Float32Type::get(ctx)));
  return success();
}

namespace {
/// Checks the per-spatial-dim window attributes and computes the spatial
/// output sizes of a window op whose input has spatial sizes `in`.
LogicalResult inferWindow(std::optional<Location> l, int64_t rank,
                          ArrayRef<int64_t> in, ArrayRef<int64_t> kernel,
                          ArrayRef<int64_t> strides, ArrayRef<int64_t> pads,
                          ArrayRef<int64_t> dilations, bool ceilMode,
                          SmallVectorImpl<int64_t> &spatial) {
  int64_t n = in.size();
  if (n < 1)
    return emitOptionalError(l, "input must have rank >= 3, got ", rank);
  if ((int64_t)kernel.size() != n || (int64_t)strides.size() != n ||
      (int64_t)dilations.size() != n || (int64_t)pads.size() != 2 * n)
    return emitOptionalError(l, "expected ", n,
                             " kernel dims, strides and dilations and ", 2 * n,
                             " pads for a rank-", rank, " input");
  for (int64_t i = 0; i < n; ++i) {
    if (strides[i] < 1 || dilations[i] < 1 || kernel[i] < 1 || pads[i] < 0 ||
        pads[n + i] < 0)
      return emitOptionalError(l, "window attributes must be positive "
                                  "(pads non-negative)");
    // A run-time extent gives a run-time result extent (the lowering
    // computes it, and checks that the window fits).
    if (ShapedType::isDynamic(in[i])) {
      if (ceilMode) // its extra window would depend on the extent
        return emitOptionalError(l, "ceil_mode over a run-time extent (dim ",
                                 i + 2, ")");
      spatial.push_back(ShapedType::kDynamic);
      continue;
    }
    int64_t size = windowOutputSize(in[i], kernel[i], strides[i], dilations[i],
                                    pads[i], pads[n + i], ceilMode);
    if (size < 1)
      return emitOptionalError(l, "window larger than padded input in dim ",
                               i + 2);
    spatial.push_back(size);
  }
  return success();
}

/// Spatial sizes of an NC[D]HW input, or of an NHWC one (`channelsLast`,
/// rank 4 only).
FailureOr<ArrayRef<int64_t>> spatialDims(std::optional<Location> l,
                                         RankedTensorType input,
                                         bool channelsLast) {
  if (!channelsLast)
    return input.getShape().drop_front(std::min<int64_t>(2, input.getRank()));
  if (input.getRank() != 4)
    return emitOptionalError(l,
                             "channels_last needs a rank-4 (NHWC) input, "
                             "got rank ",
                             input.getRank());
  return input.getShape().slice(1, 2);
}
} // namespace

LogicalResult ConvOp::inferReturnTypes(MLIRContext *, std::optional<Location> l,
                                       Adaptor a, SmallVectorImpl<Type> &out) {
  auto input = rankedType(a.getInput()), weight = rankedType(a.getWeight());
  // The integer core of a dequantized convolution: 8-bit operands, f32 sums.
  bool quantized = a.getInputZeroPoint().has_value();
  if (quantized) {
    if (!input.getElementType().isInteger(8) ||
        !weight.getElementType().isSignlessInteger(8))
      return emitOptionalError(l,
                               "a convolution with input_zero_point takes "
                               "8-bit integer input and int8 weight, not ",
                               input.getElementType(), " and ",
                               weight.getElementType());
    if (a.getBias() || a.getGroup() != 1 || input.getRank() != 4)
      return emitOptionalError(l, "a convolution with input_zero_point is "
                                  "2-D, of group 1, without bias");
  } else if (failed(checkSameElementType(l, a.getInput(), a.getWeight()))) {
    return failure();
  }
  if (weight.getRank() != input.getRank())
    return emitOptionalError(l, "weight rank ", weight.getRank(),
                             " differs from input rank ", input.getRank());
  bool channelsLast = a.getChannelsLast();
  auto in = spatialDims(l, input, channelsLast);
  if (failed(in))
    return failure();
  // NC[D]HW input with FC[D]HW weight, or NHWC input with HWCF weight.
  int64_t group = a.getGroup();
  int64_t channels = input.getDimSize(channelsLast ? 3 : 1);
  int64_t filters = weight.getDimSize(channelsLast ? 3 : 0);
  int64_t perGroup = weight.getDimSize(channelsLast ? 2 : 1);
  ArrayRef<int64_t> kernel = channelsLast ? weight.getShape().take_front(2)
                                          : weight.getShape().drop_front(2);
  if (group < 1 || channels != perGroup * group || filters % group != 0)
    return emitOptionalError(l, "input channels ", channels, ", weight ",
                             shapeString(weight.getShape()), " and group ",
                             group, " do not match");
  if (a.getBias()) {
    auto bias = rankedType(a.getBias());
    if (bias.getRank() != 1 || bias.getDimSize(0) != filters)
      return emitOptionalError(l, "bias must be [", filters, "]");
  }
  SmallVector<int64_t> spatial;
  if (failed(inferWindow(l, input.getRank(), *in, kernel, a.getStrides(),
                         a.getPads(), a.getDilations(),
                         /*ceilMode=*/false, spatial)))
    return failure();
  SmallVector<int64_t> shape = {input.getDimSize(0)};
  if (!channelsLast)
    shape.push_back(filters);
  llvm::append_range(shape, spatial);
  if (channelsLast)
    shape.push_back(filters);
  if (quantized)
    out.push_back(
        RankedTensorType::get(shape, Float32Type::get(input.getContext())));
  else
    out.push_back(input.clone(shape));
  return success();
}

#define KILN_POOL_INFER(OP)                                                    \
  LogicalResult OP::inferReturnTypes(MLIRContext *, std::optional<Location> l, \
                                     Adaptor a, SmallVectorImpl<Type> &out) {  \
    auto input = rankedType(a.getInput());                                     \
    bool channelsLast = a.getChannelsLast();                                   \
    auto in = spatialDims(l, input, channelsLast);                             \
    if (failed(in))                                                            \
      return failure();                                                        \
    SmallVector<int64_t> spatial;                                              \
    if (failed(inferWindow(l, input.getRank(), *in, a.getKernelShape(),        \
                           a.getStrides(), a.getPads(), a.getDilations(),      \
                           a.getCeilMode(), spatial)))                         \
      return failure();                                                        \
    SmallVector<int64_t> shape = {input.getDimSize(0)};                        \
    if (!channelsLast)                                                         \
      shape.push_back(input.getDimSize(1));                                    \
    llvm::append_range(shape, spatial);                                        \
    if (channelsLast)                                                          \
      shape.push_back(input.getDimSize(3));                                    \
    out.push_back(input.clone(shape));                                         \
    return success();                                                          \
  }
KILN_POOL_INFER(MaxPoolOp)
KILN_POOL_INFER(AvgPoolOp)
#undef KILN_POOL_INFER

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

#define KILN_REDUCE_INFER(OP)                                                  \
  LogicalResult OP::inferReturnTypes(MLIRContext *, std::optional<Location> l, \
                                     Adaptor a, SmallVectorImpl<Type> &out) {  \
    auto input = rankedType(a.getInput());                                     \
    ArrayRef<int64_t> axes = a.getAxes();                                      \
    for (size_t i = 0; i < axes.size(); ++i)                                   \
      if (axes[i] < 0 || axes[i] >= input.getRank() ||                         \
          (i > 0 && axes[i] <= axes[i - 1]))                                   \
        return emitOptionalError(l, "axes must be sorted, unique and in [0, ", \
                                 input.getRank(), ")");                        \
    SmallVector<int64_t> shape;                                                \
    for (int64_t d = 0; d < input.getRank(); ++d) {                            \
      if (!llvm::is_contained(axes, d))                                        \
        shape.push_back(input.getDimSize(d));                                  \
      else if (a.getKeepdims())                                                \
        shape.push_back(1);                                                    \
    }                                                                          \
    out.push_back(input.clone(shape));                                         \
    return success();                                                          \
  }
KILN_REDUCE_INFER(ReduceSumOp)
KILN_REDUCE_INFER(ReduceMeanOp)
KILN_REDUCE_INFER(ReduceMaxOp)
KILN_REDUCE_INFER(ReduceMinOp)
KILN_REDUCE_INFER(ReduceProdOp)
#undef KILN_REDUCE_INFER

#define KILN_ARG_REDUCE_INFER(OP)                                              \
  LogicalResult OP::inferReturnTypes(MLIRContext *ctx,                         \
                                     std::optional<Location> l, Adaptor a,     \
                                     SmallVectorImpl<Type> &out) {             \
    auto input = rankedType(a.getInput());                                     \
    int64_t axis = a.getAxis();                                                \
    if (axis < 0 || axis >= input.getRank())                                   \
      return emitOptionalError(l, "axis ", axis, " out of range for rank ",    \
                               input.getRank());                               \
    if (input.getDimSize(axis) == 0)                                           \
      return emitOptionalError(l, "cannot take the index along empty axis ",   \
                               axis);                                          \
    SmallVector<int64_t> shape(input.getShape());                              \
    if (a.getKeepdims())                                                       \
      shape[axis] = 1;                                                         \
    else                                                                       \
      shape.erase(shape.begin() + axis);                                       \
    out.push_back(RankedTensorType::get(shape, IntegerType::get(ctx, 64)));    \
    return success();                                                          \
  }
KILN_ARG_REDUCE_INFER(ArgMaxOp)
KILN_ARG_REDUCE_INFER(ArgMinOp)
#undef KILN_ARG_REDUCE_INFER

LogicalResult CumSumOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> l, Adaptor a,
                                         SmallVectorImpl<Type> &out) {
  auto input = rankedType(a.getInput());
  int64_t axis = a.getAxis(); // I64Attr reads back as uint64_t
  if (axis < 0 || axis >= input.getRank())
    return emitOptionalError(l, "axis ", axis, " out of range for rank ",
                             input.getRank());
  out.push_back(input);
  return success();
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> l, Adaptor a,
                                          SmallVectorImpl<Type> &out) {
  auto input = rankedType(a.getInput());
  ArrayRef<int64_t> shape = a.getShape();
  int64_t count = 1;
  for (int64_t d : shape) {
    if (d < 0)
      return emitOptionalError(l, "shape ", shapeString(shape),
                               " has a negative dim");
    count *= d;
  }
  if (count != input.getNumElements())
    return emitOptionalError(
        l, "cannot reshape ", shapeString(input.getShape()), " (",
        input.getNumElements(), " elements) to ", shapeString(shape));
  out.push_back(input.clone(shape));
  return success();
}

LogicalResult TransposeOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> l,
                                            Adaptor a,
                                            SmallVectorImpl<Type> &out) {
  auto input = rankedType(a.getInput());
  ArrayRef<int64_t> perm = a.getPerm();
  SmallVector<bool> seen(input.getRank(), false);
  SmallVector<int64_t> shape;
  for (int64_t p : perm) {
    if ((int64_t)perm.size() != input.getRank() || p < 0 ||
        p >= input.getRank() || seen[p])
      return emitOptionalError(l, "perm ", shapeString(perm),
                               " is not a permutation of rank ",
                               input.getRank());
    seen[p] = true;
    shape.push_back(input.getDimSize(p));
  }
  if ((int64_t)perm.size() != input.getRank())
    return emitOptionalError(l, "perm ", shapeString(perm),
                             " is not a permutation of rank ", input.getRank());
  out.push_back(input.clone(shape));
  return success();
}

LogicalResult ConcatOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> l, Adaptor a,
                                         SmallVectorImpl<Type> &out) {
  if (a.getInputs().empty())
    return emitOptionalError(l, "needs at least one input");
  auto first = rankedType(a.getInputs().front());
  int64_t axis = a.getAxis();
  if (axis < 0 || axis >= first.getRank())
    return emitOptionalError(l, "axis ", axis, " out of range for rank ",
                             first.getRank());
  SmallVector<int64_t> shape(first.getShape());
  shape[axis] = 0;
  for (Value v : a.getInputs()) {
    auto type = rankedType(v);
    if (type.getRank() != first.getRank() ||
        type.getElementType() != first.getElementType())
      return emitOptionalError(l, "inputs differ in rank or element type");
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (d != axis && type.getDimSize(d) != first.getDimSize(d))
        return emitOptionalError(l, "inputs differ in dim ", d, ": ",
                                 shapeString(first.getShape()), " vs ",
                                 shapeString(type.getShape()));
    // A run-time extent along the axis makes the sum one too.
    if (ShapedType::isDynamic(type.getDimSize(axis)) ||
        ShapedType::isDynamic(shape[axis]))
      shape[axis] = ShapedType::kDynamic;
    else
      shape[axis] += type.getDimSize(axis);
  }
  out.push_back(first.clone(shape));
  return success();
}

LogicalResult SliceOp::inferReturnTypes(MLIRContext *,
                                        std::optional<Location> l, Adaptor a,
                                        SmallVectorImpl<Type> &out) {
  auto input = rankedType(a.getInput());
  ArrayRef<int64_t> starts = a.getStarts(), ends = a.getEnds(),
                    steps = a.getSteps();
  int64_t rank = input.getRank();
  if ((int64_t)starts.size() != rank || (int64_t)ends.size() != rank ||
      (int64_t)steps.size() != rank)
    return emitOptionalError(l, "needs one start, end and step per dim");
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t dim = input.getDimSize(d);
    // A run-time dim is only taken whole: start 0, end `?`, step 1.
    if (ShapedType::isDynamic(dim)) {
      if (starts[d] != 0 || !ShapedType::isDynamic(ends[d]) || steps[d] != 1)
        return emitOptionalError(l, "run-time dim ", d,
                                 " can only be sliced whole");
      shape.push_back(ShapedType::kDynamic);
      continue;
    }
    // An empty dim admits only empty slices (start == end).
    bool ok = steps[d] > 0
                  ? 0 <= starts[d] && starts[d] <= ends[d] && ends[d] <= dim
                  : steps[d] < 0 && -1 <= ends[d] && ends[d] <= starts[d] &&
                        (dim == 0 ? starts[d] == ends[d] : starts[d] < dim);
    if (!ok)
      return emitOptionalError(l, "slice bounds not normalized in dim ", d,
                               ": start ", starts[d], ", end ", ends[d],
                               ", step ", steps[d], ", size ", dim);
    shape.push_back(sliceSize(starts[d], ends[d], steps[d]));
  }
  out.push_back(input.clone(shape));
  return success();
}

LogicalResult GatherOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> l, Adaptor a,
                                         SmallVectorImpl<Type> &out) {
  auto data = rankedType(a.getData()), indices = rankedType(a.getIndices());
  int64_t axis = a.getAxis();
  if (axis < 0 || axis >= data.getRank())
    return emitOptionalError(l, "axis ", axis, " out of range for rank ",
                             data.getRank());
  if (!isa<IntegerType>(indices.getElementType()))
    return emitOptionalError(l, "indices must be integers");
  SmallVector<int64_t> shape(data.getShape().take_front(axis));
  llvm::append_range(shape, indices.getShape());
  llvm::append_range(shape, data.getShape().drop_front(axis + 1));
  out.push_back(data.clone(shape));
  return success();
}

LogicalResult ExpandOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> l, Adaptor a,
                                         SmallVectorImpl<Type> &out) {
  auto input = rankedType(a.getInput());
  auto b = broadcastShapes(input.getShape(), a.getShape());
  if (failed(b) || ArrayRef<int64_t>(*b) != a.getShape())
    return emitOptionalError(l, "cannot expand ", shapeString(input.getShape()),
                             " to ", shapeString(a.getShape()));
  out.push_back(input.clone(a.getShape()));
  return success();
}
