//===- ImportQuant.cpp - Quantize/dequantize and integer contractions -----===//
//
// Linear quantization is composed of kiln ops: dequantization is
// (x - zero_point) * scale in the scale's float type, quantization rounds
// half to even and saturates to the integer type. The integer contractions
// (MatMulInteger, ConvInteger, QLinear*) contract zero-point-corrected i32
// operands exactly, then requantize as the ONNX reference does.
//
//===----------------------------------------------------------------------===//

#include "compiler/import/onnx/ImportNNBuilder.h"

#include "onnx/onnx.pb.h"

#include <fmt/format.h>

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::onnx_import;

namespace {
using Results = FailureOr<SmallVector<Value>>;

/// Saturation bounds of an integer element type (8/16/32-bit, iN or uiN).
std::optional<std::pair<double, double>> integerRange(Type t) {
  auto it = dyn_cast<IntegerType>(t);
  if (!it || it.getWidth() < 2 || it.getWidth() > 32)
    return std::nullopt;
  unsigned w = it.getWidth();
  if (it.isUnsigned())
    return std::make_pair(0.0, std::ldexp(1.0, w) - 1);
  return std::make_pair(-std::ldexp(1.0, w - 1), std::ldexp(1.0, w - 1) - 1);
}

/// A per-axis parameter [C] laid along `axis` of a rank-`rank` tensor;
/// scalars and single elements broadcast as they are.
Value alongAxis(NNBuilder &e, Value v, int64_t axis, int64_t rank) {
  if (!v || e.rank(v) != 1 || e.shape(v)[0] == 1 || rank < 2)
    return v;
  SmallVector<int64_t> shape(rank, 1);
  shape[axis] = e.shape(v)[0];
  return e.reshape(v, shape);
}

/// saturate(v) as `to`, v a float tensor of whole numbers. NaN (x / scale
/// with an infinite scale, which onnxruntime's calibration writes for
/// ranges reaching -inf) saturates to the lowest value, as onnxruntime's
/// kernels give it; a plain cast of NaN would be undefined.
Value saturate(NNBuilder &e, Value v, Type to) {
  auto range = integerRange(to);
  if (!range)
    return e.failed = true, Value();
  Value defined = e.select(e.equal(v, v), v, e.k(v, range->first));
  return e.cast(e.clip(defined, range->first, range->second), to);
}

/// saturate(round_half_even(v)) as `to`, where v is a float tensor.
Value requantize(NNBuilder &e, Value v, Type to) {
  return saturate(e, e.round(v), to);
}

Results importDequantizeLinear(NodeContext &c) {
  if (c.attrInt("block_size", 0) != 0)
    return c.unsupported("blocked quantization (block_size)");
  Value x = c.input(0), scale = c.input(1), zeroPoint = c.input(2);
  if (!x || !scale)
    return c.fail("needs x and x_scale");
  NNBuilder e(c);
  int64_t rank = e.rank(x);
  // The axis only matters for per-axis (1-D) parameters.
  auto axis = c.normalizeAxis(c.attrInt("axis", 1), rank);
  if (!axis && e.rank(scale) == 1 && e.shape(scale)[0] > 1)
    return c.fail("axis out of range");
  axis = axis.value_or(0);
  Type floatType = e.elementType(scale);
  if (!isa<FloatType>(floatType) || !isa<IntegerType>(e.elementType(x)))
    return c.unsupported("non-integer (e.g. float8) quantized types");
  Value centered = e.cast(x, floatType);
  if (zeroPoint)
    centered = e.sub(centered,
                     alongAxis(e, e.cast(zeroPoint, floatType), *axis, rank));
  return e.done({e.mul(centered, alongAxis(e, scale, *axis, rank))});
}

Results importQuantizeLinear(NodeContext &c) {
  if (c.attrInt("block_size", 0) != 0)
    return c.unsupported("blocked quantization (block_size)");
  Value x = c.input(0), scale = c.input(1), zeroPoint = c.input(2);
  if (!x || !scale)
    return c.fail("needs x and y_scale");
  NNBuilder e(c);
  int64_t rank = e.rank(x);
  // The axis only matters for per-axis (1-D) parameters.
  auto axis = c.normalizeAxis(c.attrInt("axis", 1), rank);
  if (!axis && e.rank(scale) == 1 && e.shape(scale)[0] > 1)
    return c.fail("axis out of range");
  axis = axis.value_or(0);
  Type to = IntegerType::get(c.ctx(), 8, IntegerType::Unsigned);
  if (zeroPoint)
    to = e.elementType(zeroPoint);
  else if (int64_t dtype = c.attrInt("output_dtype", 0))
    to = elementTypeFor(c.ctx(), (int32_t)dtype);
  if (!to || !integerRange(to))
    return c.unsupported("quantization to a non-integer (e.g. float8) type");
  Type xType = e.elementType(x);
  Value q = e.round(e.div(x, alongAxis(e, scale, *axis, rank)));
  if (zeroPoint)
    q = e.add(q, alongAxis(e, e.cast(zeroPoint, xType), *axis, rank));
  return e.done({saturate(e, q, to)});
}

/// The uint8 range [0, 255] stretched over [min(x, 0), max(x, 0)].
Results importDynamicQuantizeLinear(NodeContext &c) {
  Value x = c.input(0);
  NNBuilder e(c);
  Type u8 = IntegerType::get(c.ctx(), 8, IntegerType::Unsigned);
  SmallVector<int64_t> all = dimRange(0, e.rank(x));
  Value zero = e.k(x, 0);
  Value low = e.min(e.reduceMin(x, all, false), zero);
  Value high = e.max(e.reduceMax(x, all, false), zero);
  Value scale = e.div(e.sub(high, low), e.k(x, 255));
  Value zeroPoint = e.clip(e.round(e.sub(zero, e.div(low, scale))), 0, 255);
  Value y = requantize(e, e.add(e.round(e.div(x, scale)), zeroPoint), u8);
  return e.done({y, scale, e.cast(zeroPoint, u8)});
}

/// cast(v, i32) - cast(zeroPoint, i32), the zero point laid along `axis`.
Value centeredI32(NNBuilder &e, Value v, Value zeroPoint, int64_t axis) {
  Type i32 = IntegerType::get(e.c.ctx(), 32);
  Value centered = e.cast(v, i32);
  if (!zeroPoint || !centered)
    return centered;
  return e.sub(centered, alongAxis(e, e.cast(zeroPoint, i32), axis, e.rank(v)));
}

/// Integer matmul of zero-point-corrected operands (rank >= 2); a per-row
/// A zero point is laid along A's rows, a per-column B zero point broadcasts
/// as is.
Value integerMatMul(NNBuilder &e, Value a, Value aZero, Value b, Value bZero) {
  return e.matmul(centeredI32(e, a, aZero, e.rank(a) - 2),
                  centeredI32(e, b, bZero, e.rank(b) - 1));
}

/// What keeps an integer matmul of inputs `a` and `b` from being built.
std::string checkMatMulOperands(NodeContext &c, size_t a, size_t b) {
  if (!c.hasInput(a) || !c.hasInput(b))
    return "needs both matrix operands";
  if (c.type(c.input(a)).getRank() < 2 || c.type(c.input(b)).getRank() < 2)
    return "1-D operands";
  return "";
}

Results importMatMulInteger(NodeContext &c) {
  std::string problem = checkMatMulOperands(c, 0, 1);
  if (!problem.empty())
    return c.unsupported(problem);
  NNBuilder e(c);
  return e.done(
      {integerMatMul(e, c.input(0), c.input(2), c.input(1), c.input(3))});
}

Results importConvInteger(NodeContext &c) {
  if (!c.hasInput(0) || !c.hasInput(1))
    return c.fail("needs x and w");
  NNBuilder e(c);
  Value x = centeredI32(e, c.input(0), c.input(2), 1);
  Value w = centeredI32(e, c.input(1), c.input(3), 0);
  if (e.failed)
    return failure();
  auto y = buildConv(c, x, w, Value());
  if (failed(y))
    return failure();
  return e.done({*y});
}

/// Requantizes an i32 accumulator `acc` with multiplier `scale` (already
/// shaped to broadcast) to y_zero_point's type: rint(acc * scale + zero).
Value requantizeAccumulator(NNBuilder &e, Value acc, Value scale, Value yZero) {
  Type f32 = Float32Type::get(e.c.ctx());
  Value v = e.mul(e.cast(acc, f32), e.cast(scale, f32));
  Type to = IntegerType::get(e.c.ctx(), 8, IntegerType::Unsigned);
  if (yZero) {
    v = e.add(v, e.cast(yZero, f32));
    to = e.elementType(yZero);
  }
  return requantize(e, v, to);
}

Results importQLinearMatMul(NodeContext &c) {
  for (size_t i : {0, 1, 3, 4, 6})
    if (!c.hasInput(i))
      return c.fail("needs a, a_scale, b, b_scale and y_scale");
  std::string problem = checkMatMulOperands(c, 0, 3);
  if (!problem.empty())
    return c.unsupported(problem);
  NNBuilder e(c);
  Value a = c.input(0), b = c.input(3);
  Value acc = integerMatMul(e, a, c.input(2), b, c.input(5));
  Value scale = e.div(e.mul(alongAxis(e, c.input(1), e.rank(a) - 2, e.rank(a)),
                            alongAxis(e, c.input(4), e.rank(b) - 1, e.rank(b))),
                      c.input(6));
  return e.done({requantizeAccumulator(e, acc, scale, c.input(7))});
}

Results importQLinearConv(NodeContext &c) {
  for (size_t i : {0, 1, 3, 4, 6})
    if (!c.hasInput(i))
      return c.fail("needs x, x_scale, w, w_scale and y_scale");
  NNBuilder e(c);
  Value x = centeredI32(e, c.input(0), c.input(2), 1);
  Value w = centeredI32(e, c.input(3), c.input(5), 0);
  if (e.failed)
    return failure();
  auto acc = buildConv(c, x, w, c.input(8));
  if (failed(acc))
    return failure();
  // The per-output-channel weight scale lies along the result's axis 1.
  int64_t rank = e.rank(*acc);
  Value scale =
      e.div(e.mul(c.input(1), alongAxis(e, c.input(4), 1, rank)), c.input(6));
  return e.done({requantizeAccumulator(e, *acc, scale, c.input(7))});
}
} // namespace

void mlir::kiln::onnx_import::registerQuantHandlers(
    llvm::StringMap<OpHandler> &t) {
  t["DequantizeLinear"] = importDequantizeLinear;
  t["QuantizeLinear"] = importQuantizeLinear;
  t["DynamicQuantizeLinear"] = importDynamicQuantizeLinear;
  t["MatMulInteger"] = importMatMulInteger;
  t["ConvInteger"] = importConvInteger;
  t["QLinearMatMul"] = importQLinearMatMul;
  t["QLinearConv"] = importQLinearConv;
}
