//===- ImportWindows.cpp - Window functions, MelWeightMatrix --------------===//
//
// The window functions of a length given as a (run-time) scalar:
//   n = Range(0, size, 1), x = 2 pi n / N   (N = size if periodic, else
//   size - 1)
//   Hann      0.5 - 0.5 cos(x)
//   Hamming   25/46 - 21/46 cos(x)
//   Blackman  0.42 - 0.5 cos(x) + 0.08 cos(2x)
// computed in f64 and cast to `output_datatype`. The length is a run-time
// extent (kiln.dynamic_range), so the output leaves through the dynamic
// output record unless the size is a constant that folds.
//
// MelWeightMatrix [dft_length / 2 + 1, num_mel_bins]: triangular filters
// between mel-spaced band edges, as ONNX's reference computes them in f64:
//   edge[t] = floor((dft_length + 1) * hz(mel_lo + t * step) / sample_rate)
//   step    = (mel_hi - mel_lo) / (num_mel_bins + 2)
//   w[j, i] = (up - j) / (up - mid)   for mid <= j < up  (edges i, i+1, i+2)
//             (j - lo) / (mid - lo)   for lo <= j <= mid (1 at j = mid when
//                                                          lo = mid)
// The sample rate and band edges may be run-time values; the two extents
// come from constant inputs or from the declared result shape (checked when
// the model runs).
//
//===----------------------------------------------------------------------===//
#include "compiler/import/onnx/ImportIndexing.h"
#include "compiler/import/onnx/ImportNNBuilder.h"

#include "onnx/onnx.pb.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>

using namespace mlir;
using namespace mlir::kiln::onnx_import;
namespace k = mlir::kiln;

namespace {
enum class Window { Hann, Hamming, Blackman };

/// c0 - c1 cos(x) + c2 cos(2x) for the window's coefficients.
Results importWindow(NodeContext &c, Window window) {
  Type outType =
      elementTypeFor(c.ctx(), int32_t(c.attrInt("output_datatype", 1)));
  if (!outType || !isa<FloatType>(outType))
    return c.fail("output_datatype must be a floating-point type");
  auto sizeType = c.type(c.input(0));
  if (sizeType.getRank() != 0 || !isa<IntegerType>(sizeType.getElementType()))
    return c.fail("size must be an integer scalar");
  bool periodic = c.attrInt("periodic", 1) != 0;
  Type f64 = c.b.getF64Type();
  auto to = [&](Value v, Type type) {
    return c.make<k::CastOp>(v, {c.named("to", TypeAttr::get(type))});
  };
  FailureOr<Value> size = to(c.input(0), f64);
  if (failed(size))
    return failure();
  FailureOr<Value> n = c.make<k::DynamicRangeOp>(
      {c.scalar(f64, 0.0), *size, c.scalar(f64, 1.0)});
  FailureOr<Value> denominator =
      periodic ? size : c.make<k::SubOp>({*size, c.scalar(f64, 1.0)});
  if (failed(n) || failed(denominator))
    return failure();
  FailureOr<Value> angle = c.make<k::MulOp>({*n, c.scalar(f64, 2 * M_PI)});
  if (succeeded(angle))
    angle = c.make<k::DivOp>({*angle, *denominator});
  if (failed(angle))
    return failure();
  double c0 = 0.5, c1 = 0.5, c2 = 0.0;
  if (window == Window::Hamming)
    c0 = 25.0 / 46.0, c1 = 21.0 / 46.0;
  if (window == Window::Blackman)
    c0 = 0.42, c1 = 0.5, c2 = 0.08;
  FailureOr<Value> cosine = c.make<k::CosOp>(*angle);
  FailureOr<Value> term = succeeded(cosine)
                              ? c.make<k::MulOp>({*cosine, c.scalar(f64, c1)})
                              : cosine;
  FailureOr<Value> w =
      succeeded(term) ? c.make<k::SubOp>({c.scalar(f64, c0), *term}) : term;
  if (succeeded(w) && c2 != 0.0) {
    FailureOr<Value> twice = c.make<k::MulOp>({*angle, c.scalar(f64, 2.0)});
    FailureOr<Value> cos2 = succeeded(twice) ? c.make<k::CosOp>(*twice) : twice;
    FailureOr<Value> term2 =
        succeeded(cos2) ? c.make<k::MulOp>({*cos2, c.scalar(f64, c2)}) : cos2;
    w = succeeded(term2) ? c.make<k::AddOp>({*w, *term2}) : term2;
  }
  if (failed(w))
    return failure();
  return one(to(*w, outType));
}
Results importMelWeightMatrix(NodeContext &c) {
  Type outType =
      elementTypeFor(c.ctx(), int32_t(c.attrInt("output_datatype", 1)));
  if (!outType || !isa<FloatType>(outType))
    return c.fail("output_datatype must be a floating-point type");
  for (size_t i = 0; i < 5; ++i)
    if (!c.hasInput(i) || c.type(c.input(i)).getNumElements() != 1)
      return c.fail(fmt::format("input {} must hold one value", i));
  auto declared = c.declaredShape(0);
  if (declared && declared->size() != 2)
    declared.reset();
  // The extents: constant inputs, else the declared shape.
  auto mels = c.constantInts(0), dft = c.constantInts(1);
  int64_t m, s;
  if (mels)
    m = (*mels)[0];
  else if (declared)
    m = (*declared)[1];
  else
    return c.needsConstant(0);
  if (dft)
    s = (*dft)[0] / 2 + 1;
  else if (declared)
    s = (*declared)[0];
  else
    return c.needsConstant(1);
  if (m < 1 || s < 1)
    return c.fail("num_mel_bins and dft_length must be positive");
  NNBuilder e(c);
  Type f64 = c.b.getF64Type(), i64 = c.b.getI64Type();
  Value melsIn = e.scalarOf(c.input(0), i64),
        dftIn = e.scalarOf(c.input(1), i64);
  Value rate = e.scalarOf(c.input(2), f64), lo = e.scalarOf(c.input(3), f64),
        hi = e.scalarOf(c.input(4), f64);
  if (e.failed)
    return failure();
  if (!mels || !dft) {
    Value ok = e.op<k::AndOp>(
        {e.equal(melsIn, e.k(melsIn, (double)m)),
         e.equal(e.add(e.div(dftIn, e.k(dftIn, 2)), e.k(dftIn, 1)),
                 e.k(dftIn, (double)s))});
    if (e.failed)
      return failure();
    k::AssertOp::create(
        c.b, c.loc, ok,
        c.b.getStringAttr(fmt::format(
            "MelWeightMatrix: num_mel_bins must be {} and dft_length / 2 + 1 "
            "must be {}, as the model declares '{}' as [{}, {}]",
            m, s, c.node.output(0), s, m)));
  }
  // mel(f) = 2595 log10(1 + f / 700), hz(mel) = 700 (10^(mel / 2595) - 1).
  double ln10 = std::log(10.0);
  auto mel = [&](Value f) {
    return e.div(
        e.mul(e.k(f, 2595), e.log(e.add(e.div(f, e.k(f, 700)), e.k(f, 1)))),
        e.k(f, ln10));
  };
  Value melLo = mel(lo);
  Value step = e.div(e.sub(mel(hi), melLo), e.k(melLo, (double)(m + 2)));
  auto edges = [&](int64_t offset) {
    SmallVector<double> t;
    for (int64_t i = 0; i < m; ++i)
      t.push_back((double)(i + offset));
    auto type = RankedTensorType::get({1, m}, f64);
    Value index = c.constant(DenseElementsAttr::get(type, ArrayRef(t)));
    Value hz = e.mul(e.k(melLo, 700),
                     e.sub(e.exp(e.mul(e.div(e.add(e.mul(index, step), melLo),
                                             e.k(melLo, 2595)),
                                       e.k(melLo, ln10))),
                           e.k(melLo, 1)));
    Value scaled = e.mul(e.cast(e.add(dftIn, e.k(dftIn, 1)), f64), hz);
    return e.op<k::FloorOp>({e.div(scaled, rate)});
  };
  Value low = edges(0), mid = edges(1), up = edges(2);
  SmallVector<double> rows;
  for (int64_t j = 0; j < s; ++j)
    rows.push_back((double)j);
  Value j = c.constant(DenseElementsAttr::get(
      RankedTensorType::get({s, 1}, f64), ArrayRef(rows)));
  Value zero = e.k(j, 0), one = e.k(j, 1);
  Value rising = e.sub(mid, low), falling = e.sub(up, mid);
  Value onRise = e.op<k::AndOp>(
      {e.op<k::NotOp>({e.less(j, low)}), e.op<k::NotOp>({e.greater(j, mid)})});
  Value riseValue = e.select(
      e.equal(rising, zero), e.select(e.equal(j, mid), one, zero),
      e.select(onRise, e.div(e.sub(j, low), e.max(rising, one)), zero));
  Value onFall = e.op<k::AndOp>(
      {e.greater(falling, zero),
       e.op<k::AndOp>({e.op<k::NotOp>({e.less(j, mid)}), e.less(j, up)})});
  Value w =
      e.select(onFall, e.div(e.sub(up, j), e.max(falling, one)), riseValue);
  return e.done({e.cast(w, outType)});
}
} // namespace

void mlir::kiln::onnx_import::registerWindowHandlers(
    llvm::StringMap<OpHandler> &t) {
  t["MelWeightMatrix"] = importMelWeightMatrix;
  t["HannWindow"] = [](NodeContext &c) {
    return importWindow(c, Window::Hann);
  };
  t["HammingWindow"] = [](NodeContext &c) {
    return importWindow(c, Window::Hamming);
  };
  t["BlackmanWindow"] = [](NodeContext &c) {
    return importWindow(c, Window::Blackman);
  };
}
