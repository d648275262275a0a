//===- ImportDFT.cpp - DFT as matmuls with constant twiddle matrices ------===//
//
// DFT of a signal [batch, ..., N, ..., 1 or 2] (the last dim holds the real
// part, or real and imaginary parts) along `axis`, with a constant dft_length
// L (zero padding or truncation of the signal) and `onesided`. With the
// signal dim moved last, each output frequency k is a matmul with constant
// [N, K] matrices of cos(2 pi k n / L) and sin(2 pi k n / L) (rows n >= L
// zero):
//
//   forward  (x_r + i x_i)(cos - i sin):  y_r = x_r C + x_i S
//                                         y_i = x_i C - x_r S
//   inverse  sin negated, and the result divided by L.
//
// Other dims may be run-time extents (STFT's batch and frames): each
// complex part is then a gather of one index. A run-time N with a constant
// L is first fitted to L rows (truncated, or zero rows past N). STFT is in
// ImportSTFT.cpp.
//
//===----------------------------------------------------------------------===//

#include "compiler/import/onnx/ImportIndexing.h"
#include "compiler/import/onnx/ImportNNBuilder.h"
#include "compiler/import/onnx/SymbolicShapes.h"

#include "onnx/onnx.pb.h"

#include <cmath>
#include <fmt/format.h>
#include <fmt/ranges.h>

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::onnx_import;

namespace {
using Results = FailureOr<SmallVector<Value>>;

/// `x` with its run-time extent N along `axis` made `length`: rows past N
/// are zeros (a gather of [0, length), clamped by kiln.gather, times
/// iota < N), rows past `length` are dropped.
FailureOr<Value> fitToLength(NodeContext &c, Value x, int64_t axis,
                             int64_t length) {
  // The twiddles would be refused past this anyway: no table of a hostile
  // length first.
  if (length > kMaxDFTTwiddles) {
    c.error = fmt::format("a dft_length of {} needs twiddle matrices of "
                          "more than 2^26 entries",
                          length);
    return failure();
  }
  NNBuilder e(c);
  OpBuilder &b = c.b;
  Type i64 = b.getI64Type();
  int64_t rank = e.rank(x);
  // An empty signal has no row for the gather to clamp to.
  SymInt n = dimOf(c, x, axis);
  Value extent = materialize(c, {n}, RankedTensorType::get({}, i64));
  AssertOp::create(b, c.loc, e.greater(extent, e.k(extent, 0)),
                   b.getStringAttr(fmt::format(
                       "DFT: the signal along axis {} is empty", axis)));
  SmallVector<int64_t> rows(length);
  for (int64_t i = 0; i < length; ++i)
    rows[i] = i;
  Value positions = i64Tensor(c, {length}, rows);
  Value taken = e.op<GatherOp>({x, positions},
                               {c.named("axis", c.b.getI64IntegerAttr(axis))});
  SmallVector<int64_t> column(rank, 1);
  column[axis] = length;
  Value inside =
      e.cast(e.less(e.reshape(positions, column), extent), e.elementType(x));
  Value fitted = e.mul(taken, inside);
  if (e.failed)
    return failure();
  return fitted;
}

Results importDFT(NodeContext &c) {
  Value x = c.input(0);
  if (!x)
    return c.fail("needs an input");
  auto type = c.type(x);
  int64_t rank = type.getRank();
  Type et = type.getElementType();
  if (rank < 2 || !isa<FloatType>(et) ||
      (type.getDimSize(rank - 1) != 1 && type.getDimSize(rank - 1) != 2))
    return c.fail("input must be floats [batch, ..., 1 or 2]");
  if (c.opset >= 20)
    return c.unsupported("opset 20 DFT (axis as an input)");
  auto axis = c.normalizeAxis(c.attrInt("axis", 1), rank - 1);
  if (!axis || *axis == 0)
    return c.fail("axis must be a signal dim (not the batch or complex dim)");
  bool inverse = c.attrInt("inverse", 0) != 0;
  bool onesided = c.attrInt("onesided", 0) != 0;
  bool complexInput = type.getDimSize(rank - 1) == 2;
  if (onesided && (inverse || complexInput))
    return c.fail("onesided needs a real forward transform");
  int64_t n = type.getDimSize(*axis), length = n;
  if (c.hasInput(1)) {
    auto l = c.constantInts(1);
    if (!l || l->size() != 1)
      return c.needsConstant(1);
    length = (*l)[0];
    if (length < 1)
      return c.fail("dft_length must be positive");
  }
  if (ShapedType::isDynamic(n)) {
    if (!c.hasInput(1))
      return c.unsupported("DFT along a run-time axis needs a constant "
                           "dft_length (or a static signal extent: give it "
                           "with --input-shape)");
    auto fitted = fitToLength(c, x, *axis, length);
    if (failed(fitted))
      return failure();
    x = *fitted;
  }
  return one(buildDFT(c, x, *axis, length, onesided, inverse));
}

} // namespace

FailureOr<Value> mlir::kiln::onnx_import::buildDFT(NodeContext &c, Value x,
                                                   int64_t axis, int64_t length,
                                                   bool onesided,
                                                   bool inverse) {
  auto type = c.type(x);
  int64_t rank = type.getRank();
  Type et = type.getElementType();
  bool complexInput = type.getDimSize(rank - 1) == 2;
  int64_t n = type.getDimSize(axis);
  if (ShapedType::isDynamic(n) || length < 1) {
    c.error = "needs a static signal extent along its axis (give it with "
              "--input-shape)";
    return failure();
  }
  int64_t bins = onesided ? length / 2 + 1 : length;
  if (n > kMaxDFTTwiddles / bins) {
    c.error = "a signal of " + std::to_string(n) + " samples into " +
              std::to_string(bins) +
              " bins needs twiddle matrices of more than 2^26 entries";
    return failure();
  }

  // Twiddle matrices [N, K]; signal rows past L are truncated away.
  SmallVector<float> cosines(n * bins, 0.0f), sines(n * bins, 0.0f);
  double sign = inverse ? -1.0 : 1.0;
  for (int64_t i = 0; i < std::min(n, length); ++i)
    for (int64_t k = 0; k < bins; ++k) {
      double angle = 2 * M_PI * (double)((i * k) % length) / (double)length;
      cosines[i * bins + k] = (float)std::cos(angle);
      sines[i * bins + k] = (float)(sign * std::sin(angle));
    }
  auto matrix = [&](ArrayRef<float> values) {
    auto f32 = RankedTensorType::get({n, bins}, c.b.getF32Type());
    Value m =
        c.constant(cast<ElementsAttr>(DenseElementsAttr::get(f32, values)));
    return m;
  };
  NNBuilder e(c);
  Value cosM = e.cast(matrix(cosines), et), sinM = e.cast(matrix(sines), et);

  // Signal dims only, with the transformed one moved last.
  SmallVector<int64_t> perm;
  for (int64_t d = 0; d < rank - 1; ++d)
    if (d != axis)
      perm.push_back(d);
  perm.push_back(axis);
  SmallVector<int64_t> back(rank - 1);
  for (int64_t d = 0; d < rank - 1; ++d)
    back[perm[d]] = d;
  SmallVector<int64_t> signalShape(type.getShape().drop_back());
  bool runTime = !type.hasStaticShape();
  auto part = [&](int64_t i) {
    if (!runTime)
      return e.transpose(e.reshape(e.slice(x, rank - 1, i, i + 1), signalShape),
                         perm);
    // Run-time extents elsewhere: a gather of one index drops the dim.
    Value at = c.scalar(c.b.getI64Type(), (double)i);
    return e.transpose(
        e.op<GatherOp>({x, at},
                       {c.named("axis", c.b.getI64IntegerAttr(rank - 1))}),
        perm);
  };
  Value real = part(0);
  Value yr = e.matmul(real, cosM);
  Value yi = e.neg(e.matmul(real, sinM));
  if (complexInput) {
    Value imag = part(1);
    yr = e.add(yr, e.matmul(imag, sinM));
    yi = e.add(yi, e.matmul(imag, cosM));
  }
  if (inverse) {
    yr = e.div(yr, e.k(yr, (double)length));
    yi = e.div(yi, e.k(yi, (double)length));
  }
  SmallVector<int64_t> outShape(signalShape);
  outShape[axis] = bins;
  outShape.push_back(1);
  auto restore = [&](Value v) -> Value {
    if (!runTime)
      return e.reshape(e.transpose(v, back), outShape);
    Value t = e.transpose(v, back);
    if (e.failed)
      return Value();
    SymInts dims;
    for (int64_t d = 0; d < rank - 1; ++d)
      dims.push_back(dimOf(c, t, d));
    dims.push_back(c.b.getI64IntegerAttr(1));
    auto r = reshapeSymbolic(c, t, dims, /*allowZero=*/true);
    return failed(r) ? (e.failed = true, Value()) : *r;
  };
  Value y = e.concat({restore(yr), restore(yi)}, rank - 1);
  if (e.failed)
    return failure();
  return y;
}

void mlir::kiln::onnx_import::registerDFTHandlers(
    llvm::StringMap<OpHandler> &t) {
  t["DFT"] = importDFT;
  t["STFT"] = importSTFT;
}
