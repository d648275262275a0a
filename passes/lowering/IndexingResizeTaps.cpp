//===- IndexingResizeTaps.cpp - kiln.resize tap tables at run time --------===//
//
// When a model computes Resize's scales or roi at run time (kiln.resize
// with `params`), the tap tables IndexingResize.cpp builds as constants are
// computed by the artifact instead: per resized dim, one small
// linalg.generic over the output coordinates per table, each running ONNX's
// coordinate arithmetic in f64 on the scale and roi read from `params`:
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

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::kiln;

namespace {

/// f64 arithmetic in one generic body.
struct F64 {
  OpBuilder &b;
  Location l;
  Value k(double v) {
    return arith::ConstantOp::create(b, l, b.getF64FloatAttr(v));
  }
  Value add(Value x, Value y) { return arith::AddFOp::create(b, l, x, y); }
  Value sub(Value x, Value y) { return arith::SubFOp::create(b, l, x, y); }
  Value mul(Value x, Value y) { return arith::MulFOp::create(b, l, x, y); }
  Value div(Value x, Value y) { return arith::DivFOp::create(b, l, x, y); }
  Value cmp(arith::CmpFPredicate p, Value x, Value y) {
    return arith::CmpFOp::create(b, l, p, x, y);
  }
  Value select(Value c, Value x, Value y) {
    return arith::SelectOp::create(b, l, c, x, y);
  }
};

/// ONNX's source coordinate of output `x` (f64), as sourceCoordinate in
/// IndexingResize.cpp; `outside` is set for tf_crop_and_resize.
Value sourceCoordinate(F64 &f, const ResizeTapParams &p, Value x, int64_t in,
                       int64_t out, Value scale, Value roiStart, Value roiEnd,
                       Value &outside) {
  using P = arith::CmpFPredicate;
  Value inF = f.k(in), width = f.mul(scale, inF);
  Value widthIsOne = f.cmp(P::OEQ, width, f.k(1));
  Value halfPixel = f.add(f.div(f.add(x, f.k(0.5)), scale), f.k(0.5 - 1));
  StringRef t = p.transform;
  if (t == "align_corners")
    return f.select(widthIsOne, f.k(0),
                    f.div(f.mul(x, f.k(in - 1)), f.sub(width, f.k(1))));
  if (t == "asymmetric")
    return f.div(x, scale);
  if (t == "pytorch_half_pixel")
    return f.select(widthIsOne, f.k(-0.5), halfPixel);
  if (t == "tf_half_pixel_for_nn")
    return f.div(f.add(x, f.k(0.5)), scale);
  if (t == "half_pixel_symmetric") {
    Value adjustment = f.div(f.k(out), width);
    return f.add(f.mul(f.k(in / 2.0), f.sub(f.k(1), adjustment)), halfPixel);
  }
  if (t == "tf_crop_and_resize") {
    Value span = f.sub(roiEnd, roiStart);
    Value v = out == 1 ? f.div(f.mul(span, f.k(in - 1)), f.k(2))
                       : f.div(f.mul(f.mul(x, span), f.k(in - 1)),
                               f.sub(width, f.k(1)));
    v = f.add(v, f.mul(roiStart, f.k(in - 1)));
    outside = arith::OrIOp::create(f.b, f.l, f.cmp(P::OLT, v, f.k(0)),
                                   f.cmp(P::OGT, v, f.k(in - 1)));
    return v;
  }
  return halfPixel;
}

enum class Part { Index, Weight, Inside };

/// One table of dim `dim`: tap `tap`'s source index (i64), its weight
/// (`accType`), or the inside flag (i1), for every output coordinate.
Value buildTable(OpBuilder &b, Location loc, const ResizeTapParams &p,
                 Value params, int64_t dim, int64_t rank, int64_t in,
                 int64_t out, Part part, int64_t tap, Type accType) {
  auto read = [&](int64_t i) -> Value {
    Value at = arith::ConstantIndexOp::create(b, loc, i);
    return tensor::ExtractOp::create(b, loc, params, at);
  };
  Value scale = read(dim), roiStart = read(rank + dim),
        roiEnd = read(2 * rank + dim);
  Type type = part == Part::Index    ? Type(b.getI64Type())
              : part == Part::Weight ? accType
                                     : Type(b.getI1Type());
  auto resultType = RankedTensorType::get({out}, type);
  auto body = [&](OpBuilder &nb, Location l, ValueRange) -> Value {
    using P = arith::CmpFPredicate;
    F64 f{nb, l};
    Value o = linalg::IndexOp::create(nb, l, 0);
    Value oi = arith::IndexCastOp::create(nb, l, nb.getI64Type(), o);
    Value x = arith::SIToFPOp::create(nb, l, nb.getF64Type(), oi);
    Value outside;
    x = sourceCoordinate(f, p, x, in, out, scale, roiStart, roiEnd, outside);
    if (part == Part::Inside)
      return arith::XOrIOp::create(
          nb, l, outside,
          arith::ConstantOp::create(nb, l, nb.getBoolAttr(true)));
    Value floor = math::FloorOp::create(nb, l, x);
    Value whole = f.cmp(P::OEQ, x, floor);
    Value base = f.select(whole, f.sub(x, f.k(1)), floor);
    Value r = f.sub(x, base);
    auto clampIndex = [&](Value source) -> Value {
      Value c = arith::MaximumFOp::create(nb, l, source, f.k(0));
      c = arith::MinimumFOp::create(nb, l, c, f.k(in - 1));
      return arith::FPToSIOp::create(nb, l, nb.getI64Type(), c);
    };
    if (p.mode == "nearest") {
      StringRef m = p.nearestMode;
      Value up =
          m == "floor"
              ? Value(arith::ConstantOp::create(nb, l, nb.getBoolAttr(false)))
          : m == "ceil"
              ? Value(arith::ConstantOp::create(nb, l, nb.getBoolAttr(true)))
          : m == "round_prefer_ceil" ? f.cmp(P::OGE, r, f.k(0.5))
                                     : f.cmp(P::OGT, r, f.k(0.5));
      up = arith::OrIOp::create(nb, l, up, whole);
      return clampIndex(f.add(base, f.select(up, f.k(1), f.k(0))));
    }
    int64_t n = p.mode == "cubic" ? 4 : 2;
    Value first = n == 4 ? f.sub(base, f.k(1)) : base;
    if (part == Part::Index)
      return clampIndex(f.add(first, f.k(tap)));
    SmallVector<Value> coeffs;
    if (n == 2) {
      coeffs = {f.sub(f.k(1), r), r};
    } else {
      Value a = f.k(p.cubicA), s = f.sub(f.k(1), r);
      // ((a*(v+1) - 5a)*(v+1) + 8a)*(v+1) - 4a and ((a+2)*v - (a+3))*v*v + 1
      auto outer = [&](Value v) {
        Value v1 = f.add(v, f.k(1));
        Value e = f.sub(f.mul(a, v1), f.mul(f.k(5), a));
        e = f.add(f.mul(e, v1), f.mul(f.k(8), a));
        return f.sub(f.mul(e, v1), f.mul(f.k(4), a));
      };
      auto inner = [&](Value v) {
        Value e = f.sub(f.mul(f.add(a, f.k(2)), v), f.add(a, f.k(3)));
        return f.add(f.mul(f.mul(e, v), v), f.k(1));
      };
      coeffs = {outer(r), inner(r), inner(s), outer(s)};
    }
    if (p.excludeOutside) {
      Value sum = f.k(0);
      for (int64_t t = 0; t < n; ++t) {
        Value source = f.add(first, f.k(t));
        Value in0 = arith::AndIOp::create(nb, l, f.cmp(P::OGE, source, f.k(0)),
                                          f.cmp(P::OLT, source, f.k(in)));
        coeffs[t] = f.select(in0, coeffs[t], f.k(0));
        sum = f.add(sum, coeffs[t]);
      }
      Value nonzero = f.cmp(P::ONE, sum, f.k(0));
      coeffs[tap] = f.select(nonzero, f.div(coeffs[tap], sum), coeffs[tap]);
    }
    Value w = coeffs[tap];
    if (accType != w.getType())
      w = arith::TruncFOp::create(nb, l, accType, w);
    return w;
  };
  return createParallelGeneric(b, loc, resultType, {}, body);
}

} // namespace

RunTimeTaps mlir::kiln::buildRunTimeTaps(OpBuilder &b, Location loc,
                                         const ResizeTapParams &p, Value params,
                                         int64_t dim, int64_t rank, int64_t in,
                                         int64_t out, Type accType) {
  RunTimeTaps taps;
  int64_t n = p.mode == "nearest" ? 1 : p.mode == "cubic" ? 4 : 2;
  for (int64_t t = 0; t < n; ++t)
    taps.index.push_back(buildTable(b, loc, p, params, dim, rank, in, out,
                                    Part::Index, t, accType));
  for (int64_t t = 0; p.mode != "nearest" && t < n; ++t)
    taps.weight.push_back(buildTable(b, loc, p, params, dim, rank, in, out,
                                     Part::Weight, t, accType));
  if (p.transform == "tf_crop_and_resize")
    taps.inside = buildTable(b, loc, p, params, dim, rank, in, out,
                             Part::Inside, 0, accType);
  return taps;
}
