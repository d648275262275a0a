//===- IndexingGridSample.cpp - kiln.grid_sample -> linalg.generic --------===//
//
// One all-parallel linalg.generic over the result [N, C, O1..Ok]. Its body
// reads the k grid coordinates of its output position with tensor.extract,
// and per spatial dim:
//
//   1. maps the normalized coordinate to the input's index space
//      (align_corners: -1/1 are the corner centers, else their outer edges);
//   2. nearest mode rounds it (ties to even);
//   3. border padding clamps a coordinate outside the borders into the
//      input, reflection mirrors it at the borders (the borders are the
//      corner centers with align_corners, half an element outside without);
//   4. takes the taps: the rounded coordinate (nearest), floor and floor + 1
//      with linear weights, or floor - 1 .. floor + 2 with Keys' cubic
//      weights (a = -0.75);
//   5. makes each tap a valid index: zeros padding clamps it and remembers
//      whether it was inside (reads outside give 0), border clamps it,
//      reflection mirrors it at the borders.
//
// The result element is the sum over all tap combinations of the product of
// the dims' weights times the input element read with tensor.extract. All
// coordinate arithmetic is in floats (f32, or f64 for f64 data), so grid
// values far outside [-1, 1] or NaN never become out-of-range indices.
//
//===----------------------------------------------------------------------===//
#include "passes/lowering/IndexingCommon.h"
#include "passes/lowering/LoweringUtils.h"

#include "dialects/kiln/KilnOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::kiln;

namespace {

/// Scalar float arithmetic at one location, in one type.
struct FloatMath {
  OpBuilder &b;
  Location l;
  Type type;

  Value k(double v) { return createScalarConstant(b, l, type, v); }
  Value add(Value x, Value y) { return arith::AddFOp::create(b, l, x, y); }
  Value sub(Value x, Value y) { return arith::SubFOp::create(b, l, x, y); }
  Value mul(Value x, Value y) { return arith::MulFOp::create(b, l, x, y); }
  Value div(Value x, Value y) { return arith::DivFOp::create(b, l, x, y); }
  Value floor(Value x) { return math::FloorOp::create(b, l, x); }
  Value cmp(arith::CmpFPredicate p, Value x, Value y) {
    return arith::CmpFOp::create(b, l, p, x, y);
  }
  Value lt(Value x, Value y) { return cmp(arith::CmpFPredicate::OLT, x, y); }
  Value gt(Value x, Value y) { return cmp(arith::CmpFPredicate::OGT, x, y); }
  Value select(Value c, Value x, Value y) {
    return arith::SelectOp::create(b, l, c, x, y);
  }
  /// NaN-ignoring clamp: a NaN coordinate becomes `lo`.
  Value clamp(Value x, double lo, double hi) {
    x = arith::MaxNumFOp::create(b, l, x, k(lo));
    return arith::MinNumFOp::create(b, l, x, k(hi));
  }
  /// Mirrors `x` at `lo` and `hi` until it lies between them.
  Value reflect(Value x, double lo, double hi) {
    if (hi <= lo)
      return k(lo);
    Value low = k(lo), high = k(hi);
    Value below = lt(x, low), above = gt(x, high);
    Value distance = select(below, sub(low, x), sub(x, high));
    Value folds = floor(div(distance, k(hi - lo)));
    Value rest = sub(distance, mul(folds, k(hi - lo)));
    Value half = mul(folds, k(0.5));
    Value even = cmp(arith::CmpFPredicate::OEQ, floor(half), half);
    // An even number of folds leaves x mirrored once at the near border.
    Value fromLow =
        arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, below, even);
    Value mirrored = select(fromLow, add(low, rest), sub(high, rest));
    Value outside = arith::OrIOp::create(b, l, below, above);
    return select(outside, mirrored, x);
  }
};

/// Keys' cubic convolution weights of the taps at floor - 1 .. floor + 2 for
/// the fraction `t` of the coordinate.
SmallVector<Value> cubicWeights(FloatMath &m, Value t) {
  const double a = -0.75;
  auto outer = [&](Value s) { // |s| in [1, 2]
    Value v = m.sub(m.mul(m.k(a), s), m.k(5 * a));
    v = m.add(m.mul(v, s), m.k(8 * a));
    return m.sub(m.mul(v, s), m.k(4 * a));
  };
  auto inner = [&](Value s) { // |s| in [0, 1]
    Value v = m.sub(m.mul(m.k(a + 2), s), m.k(a + 3));
    return m.add(m.mul(m.mul(v, s), s), m.k(1));
  };
  Value one = m.k(1);
  return {outer(m.add(t, one)), inner(t), inner(m.sub(one, t)),
          outer(m.sub(m.k(2), t))};
}

/// The taps of one spatial dim at one output position.
struct Taps {
  SmallVector<Value> index;  // index type, inside the input
  SmallVector<Value> weight; // empty for nearest
  SmallVector<Value> inside; // i1 per tap, zeros padding only
};

struct GridSampleLowering : OpConversionPattern<GridSampleOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(GridSampleOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(
        getTypeConverter()->convertType(op.getResult().getType()));
    Value input = adaptor.getInput(), grid = adaptor.getGrid();
    auto inShape = cast<RankedTensorType>(input.getType()).getShape();
    int64_t rank = type.getRank(), spatial = rank - 2;
    for (int64_t d = 2; d < rank; ++d)
      if (inShape[d] == 0 && type.getNumElements() != 0)
        return rewriter.notifyMatchFailure(op, "empty spatial input dim");
    Type elementType = type.getElementType();
    Type gridType = getElementType(grid);
    Type accType = getAccumulatorType(elementType);
    StringRef mode = op.getMode(), padding = op.getPaddingMode();
    bool alignCorners = op.getAlignCorners();

    auto body = [&](OpBuilder &b, Location l, ValueRange) -> Value {
      FloatMath m{b, l, accType};
      SmallVector<Value> out;
      for (int64_t d = 0; d < rank; ++d)
        out.push_back(linalg::IndexOp::create(b, l, d));
      auto toIndex = [&](Value f) {
        Value i = arith::FPToSIOp::create(b, l, b.getI64Type(), f);
        return arith::IndexCastOp::create(b, l, b.getIndexType(), i);
      };

      SmallVector<Taps> taps(spatial);
      for (int64_t j = 0; j < spatial; ++j) {
        double size = (double)inShape[2 + j];
        double lo = alignCorners ? 0.0 : -0.5;
        double hi = alignCorners ? size - 1 : size - 0.5;
        // grid[n, o1..ok, k - 1 - j]: the last dim lists x (innermost) first.
        SmallVector<Value> at{out[0]};
        at.append(out.begin() + 2, out.end());
        at.push_back(arith::ConstantIndexOp::create(b, l, spatial - 1 - j));
        Value g = tensor::ExtractOp::create(b, l, grid, at);
        g = convertScalar(b, l, g, gridType, accType);
        Value x = alignCorners
                      ? m.mul(m.add(g, m.k(1)), m.k((size - 1) / 2))
                      : m.div(m.sub(m.mul(m.add(g, m.k(1)), m.k(size)), m.k(1)),
                              m.k(2));
        if (mode == "nearest")
          x = math::RoundEvenOp::create(b, l, x);
        if (padding == "border")
          x = m.select(
              arith::OrIOp::create(b, l, m.lt(x, m.k(lo)), m.gt(x, m.k(hi))),
              m.clamp(x, 0, size - 1), x);
        else if (padding == "reflection")
          x = m.reflect(x, lo, hi);

        SmallVector<Value> positions;
        if (mode == "nearest") {
          positions.push_back(math::TruncOp::create(b, l, x));
        } else {
          Value base = m.floor(x), t = m.sub(x, base);
          if (mode == "linear") {
            positions = {base, m.add(base, m.k(1))};
            taps[j].weight = {m.sub(m.k(1), t), t};
          } else {
            for (int64_t off = -1; off <= 2; ++off)
              positions.push_back(m.add(base, m.k(off)));
            taps[j].weight = cubicWeights(m, t);
          }
        }
        for (Value p : positions) {
          if (padding == "zeros")
            taps[j].inside.push_back(arith::AndIOp::create(
                b, l, m.cmp(arith::CmpFPredicate::OGE, p, m.k(0)),
                m.cmp(arith::CmpFPredicate::OLE, p, m.k(size - 1))));
          else if (padding == "reflection")
            p = m.reflect(p, lo, hi);
          taps[j].index.push_back(toIndex(m.clamp(p, 0, size - 1)));
        }
      }

      // Sum over every combination of one tap per spatial dim.
      Value zero = m.k(0), sum;
      SmallVector<int64_t> pick(spatial, 0);
      while (true) {
        SmallVector<Value> coords{out[0], out[1]};
        Value weight, inside;
        for (int64_t j = 0; j < spatial; ++j) {
          coords.push_back(taps[j].index[pick[j]]);
          if (!taps[j].weight.empty())
            weight = weight ? m.mul(weight, taps[j].weight[pick[j]])
                            : taps[j].weight[pick[j]];
          if (!taps[j].inside.empty())
            inside = inside ? arith::AndIOp::create(b, l, inside,
                                                    taps[j].inside[pick[j]])
                            : taps[j].inside[pick[j]];
        }
        Value element = tensor::ExtractOp::create(b, l, input, coords);
        element = convertScalar(b, l, element, elementType, accType);
        if (inside)
          element = m.select(inside, element, zero);
        Value term = weight ? m.mul(weight, element) : element;
        sum = sum ? m.add(sum, term) : term;
        int64_t j = spatial - 1;
        while (j >= 0 && ++pick[j] == (int64_t)taps[j].index.size())
          pick[j--] = 0;
        if (j < 0)
          break;
      }
      return convertScalar(b, l, sum, accType, elementType);
    };
    rewriter.replaceOp(op,
                       createParallelGeneric(rewriter, loc, type, {}, body));
    return success();
  }
};

} // namespace

void mlir::kiln::populateKilnGridSampleToLinalgPatterns(
    RewritePatternSet &patterns, TypeConverter &typeConverter) {
  patterns.add<GridSampleLowering>(typeConverter, patterns.getContext());
}
