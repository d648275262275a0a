//===- IndexingResizeTaps.cpp - kiln.resize tap tables at run time --------===//
//
// When a model computes Resize's scales or roi at run time (kiln.resize
// with `params`), or resizes a dim whose extent is known only at run time,
// the tap tables IndexingResize.cpp builds as constants are computed by the
// artifact instead: per resized dim, one small linalg.generic over the
// output coordinates per table, each running ONNX's coordinate arithmetic
// in f64 on the scale and roi (read from `params` or constant) and the
// input and output extents (constant or run-time):
//
//   x      = source coordinate of output o (transformation mode)
//   whole  = floor(x), or x - 1 when x is whole; r = x - whole
//   nearest: index = whole + (x whole or the rounding mode picks up)
//   linear : index[t] = whole + t,     weight = {1 - r, r}
//   cubic  : index[t] = whole - 1 + t, weight = cubic(a, r)
//
// Indices are clamped into the dim (ONNX's edge padding); exclude_outside
// zeroes the taps outside and renormalizes; tf_crop_and_resize adds an
// `inside` table. These match the constant tables for every coordinate the
// ONNX reference resizes.
//
//===----------------------------------------------------------------------===//
#include "passes/lowering/IndexingCommon.h"
#include "passes/lowering/LoweringUtils.h"
#include "passes/lowering/ScalarOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

using namespace mlir;
using namespace mlir::kiln;

namespace {

/// The extents of a dim as f64, and the scale and roi bounds.
struct DimParams {
  Value scale, roiStart, roiEnd, in, out;
};

/// ONNX's source coordinate of output `x` (f64), as sourceCoordinate in
/// IndexingResize.cpp; `outside` is set for tf_crop_and_resize.
Value sourceCoordinate(ScalarOps &f, const ResizeTapParams &p, Value x,
                       const DimParams &s, Value &outside) {
  using P = arith::CmpFPredicate;
  Value scale = s.scale, inF = s.in, out = s.out;
  Value width = f.mulf(scale, inF), inLast = f.subf(inF, f.f64(1));
  Value widthIsOne = f.cmpf(P::OEQ, width, f.f64(1));
  Value halfPixel =
      f.addf(f.divf(f.addf(x, f.f64(0.5)), scale), f.f64(0.5 - 1));
  StringRef t = p.transform;
  if (t == "align_corners")
    return f.select(widthIsOne, f.f64(0),
                    f.divf(f.mulf(x, inLast), f.subf(width, f.f64(1))));
  if (t == "asymmetric")
    return f.divf(x, scale);
  if (t == "pytorch_half_pixel")
    return f.select(widthIsOne, f.f64(-0.5), halfPixel);
  if (t == "tf_half_pixel_for_nn") // a dim of scale 1 kept (keepsDim)
    return f.select(f.cmpf(P::OEQ, scale, f.f64(1)), x,
                    f.divf(f.addf(x, f.f64(0.5)), scale));
  if (t == "half_pixel_symmetric") {
    Value adjustment = f.divf(out, width);
    return f.addf(f.mulf(f.mulf(inF, f.f64(0.5)), f.subf(f.f64(1), adjustment)),
                  halfPixel);
  }
  if (t == "tf_crop_and_resize") {
    Value span = f.subf(s.roiEnd, s.roiStart);
    Value v = f.select(
        f.cmpf(P::OEQ, out, f.f64(1)), f.divf(f.mulf(span, inLast), f.f64(2)),
        f.divf(f.mulf(f.mulf(x, span), inLast), f.subf(width, f.f64(1))));
    v = f.addf(v, f.mulf(s.roiStart, inLast));
    outside = f.ori(f.cmpf(P::OLT, v, f.f64(0)), f.cmpf(P::OGT, v, inLast));
    return v;
  }
  return halfPixel;
}

enum class Part { Index, Weight, Inside };

/// One table of a dim: tap `tap`'s source index (i64), its weight
/// (`accType`), or the inside flag (i1), for every output coordinate.
Value buildTable(OpBuilder &b, Location loc, const ResizeTapParams &p,
                 const DimParams &s, Value outExtent, Part part, int64_t tap,
                 Type accType) {
  Type type = part == Part::Index    ? Type(b.getI64Type())
              : part == Part::Weight ? accType
                                     : Type(b.getI1Type());
  std::optional<int64_t> out = getConstantIntValue(outExtent);
  auto resultType =
      RankedTensorType::get({out ? *out : ShapedType::kDynamic}, type);
  SmallVector<Value> dynamicSizes;
  if (!out)
    dynamicSizes.push_back(outExtent);
  auto body = [&](OpBuilder &nb, Location l, ValueRange) -> Value {
    using P = arith::CmpFPredicate;
    ScalarOps f{nb, l};
    Value o = linalg::IndexOp::create(nb, l, 0);
    Value oi = arith::IndexCastOp::create(nb, l, nb.getI64Type(), o);
    Value x = arith::SIToFPOp::create(nb, l, nb.getF64Type(), oi);
    Value outside;
    x = sourceCoordinate(f, p, x, s, outside);
    if (part == Part::Inside)
      return f.noti(outside);
    Value floor = math::FloorOp::create(nb, l, x);
    Value whole = f.cmpf(P::OEQ, x, floor);
    Value base = f.select(whole, f.subf(x, f.f64(1)), floor);
    Value r = f.subf(x, base);
    auto clampIndex = [&](Value source) -> Value {
      Value c = arith::MaximumFOp::create(nb, l, source, f.f64(0));
      c = arith::MinimumFOp::create(nb, l, c, f.subf(s.in, f.f64(1)));
      return arith::FPToSIOp::create(nb, l, nb.getI64Type(), c);
    };
    if (p.mode == "nearest") {
      StringRef m = p.nearestMode;
      Value up = m == "floor"               ? f.flag(false)
                 : m == "ceil"              ? f.flag(true)
                 : m == "round_prefer_ceil" ? f.cmpf(P::OGE, r, f.f64(0.5))
                                            : f.cmpf(P::OGT, r, f.f64(0.5));
      up = f.ori(up, whole);
      return clampIndex(f.addf(base, f.select(up, f.f64(1), f.f64(0))));
    }
    int64_t n = p.mode == "cubic" ? 4 : 2;
    Value first = n == 4 ? f.subf(base, f.f64(1)) : base;
    if (part == Part::Index)
      return clampIndex(f.addf(first, f.f64(tap)));
    SmallVector<Value> coeffs;
    if (n == 2) {
      coeffs = {f.subf(f.f64(1), r), r};
    } else {
      Value a = f.f64(p.cubicA), s = f.subf(f.f64(1), r);
      // ((a*(v+1) - 5a)*(v+1) + 8a)*(v+1) - 4a and ((a+2)*v - (a+3))*v*v + 1
      auto outer = [&](Value v) {
        Value v1 = f.addf(v, f.f64(1));
        Value e = f.subf(f.mulf(a, v1), f.mulf(f.f64(5), a));
        e = f.addf(f.mulf(e, v1), f.mulf(f.f64(8), a));
        return f.subf(f.mulf(e, v1), f.mulf(f.f64(4), a));
      };
      auto inner = [&](Value v) {
        Value e = f.subf(f.mulf(f.addf(a, f.f64(2)), v), f.addf(a, f.f64(3)));
        return f.addf(f.mulf(f.mulf(e, v), v), f.f64(1));
      };
      coeffs = {outer(r), inner(r), inner(s), outer(s)};
    }
    if (p.excludeOutside) {
      Value sum = f.f64(0);
      for (int64_t t = 0; t < n; ++t) {
        Value source = f.addf(first, f.f64(t));
        Value in0 = f.andi(f.cmpf(P::OGE, source, f.f64(0)),
                           f.cmpf(P::OLT, source, s.in));
        coeffs[t] = f.select(in0, coeffs[t], f.f64(0));
        sum = f.addf(sum, coeffs[t]);
      }
      Value nonzero = f.cmpf(P::ONE, sum, f.f64(0));
      coeffs[tap] = f.select(nonzero, f.divf(coeffs[tap], sum), coeffs[tap]);
    }
    Value w = coeffs[tap];
    if (accType != w.getType())
      w = arith::TruncFOp::create(nb, l, accType, w);
    return w;
  };
  return createParallelGeneric(b, loc, resultType, {}, dynamicSizes, body);
}

} // namespace

RunTimeTaps mlir::kiln::buildRunTimeTaps(OpBuilder &b, Location loc,
                                         const ResizeTapParams &p,
                                         const RunTimeDim &dim, Type accType) {
  auto asF64 = [&](Value extent) -> Value {
    if (auto c = getConstantIntValue(extent))
      return arith::ConstantOp::create(b, loc, b.getF64FloatAttr(*c));
    Value i = arith::IndexCastOp::create(b, loc, b.getI64Type(), extent);
    return arith::SIToFPOp::create(b, loc, b.getF64Type(), i);
  };
  DimParams s{dim.scale, dim.roiStart, dim.roiEnd, asF64(dim.in),
              asF64(dim.out)};
  RunTimeTaps taps;
  int64_t n = p.mode == "nearest" ? 1 : p.mode == "cubic" ? 4 : 2;
  for (int64_t t = 0; t < n; ++t)
    taps.index.push_back(
        buildTable(b, loc, p, s, dim.out, Part::Index, t, accType));
  for (int64_t t = 0; p.mode != "nearest" && t < n; ++t)
    taps.weight.push_back(
        buildTable(b, loc, p, s, dim.out, Part::Weight, t, accType));
  if (p.transform == "tf_crop_and_resize")
    taps.inside = buildTable(b, loc, p, s, dim.out, Part::Inside, 0, accType);
  return taps;
}
