//===- ExpandF16Conversions.cpp - f16 <-> f32 without compiler-rt ---------===//
//
// x86 CPUs without F16C convert half floats through compiler-rt's
// __extendhfsf2 / __truncsfhf2, which an artifact cannot import. This pass
// spells the conversions out in integer arithmetic (round to nearest even,
// subnormals, infinities and NaN preserved), so f16 models also build for
// baseline x86-64. With F16C (soft=false) only f64 -> f16 is rewritten: x86
// has no instruction for it before AVX512-FP16 and LLVM calls
// __truncdfhf2. f64 <-> f16 goes through f32; the narrowing rounds to odd
// into f32 first, so the f32 -> f16 rounding is the correctly rounded one.
//
//===----------------------------------------------------------------------===//
#include "backends/cpu/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_EXPANDF16CONVERSIONS
#include "backends/cpu/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;

namespace {
/// Builds integer arithmetic on scalars or vectors of one shape alike.
class BitBuilder {
public:
  BitBuilder(PatternRewriter &rewriter, Location loc, Type shapeOf)
      : b(rewriter), loc(loc), shape(dyn_cast<VectorType>(shapeOf)) {}

  Type type(Type element) {
    return shape ? Type(shape.clone(element)) : element;
  }
  Value i32(int64_t value) { return constant(b.getI32Type(), value); }
  Value f32(float value) {
    Type t = type(b.getF32Type());
    auto attr = b.getF32FloatAttr(value);
    return arith::ConstantOp::create(
        b, loc, t,
        shape ? cast<TypedAttr>(DenseElementsAttr::get(cast<ShapedType>(t),
                                                       Attribute(attr)))
              : cast<TypedAttr>(attr));
  }
  Value bitcast(Value v, Type element) {
    return arith::BitcastOp::create(b, loc, type(element), v);
  }
  Value andi(Value x, int64_t mask) {
    return arith::AndIOp::create(b, loc, x, i32(mask));
  }
  Value ori(Value x, Value y) { return arith::OrIOp::create(b, loc, x, y); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value shl(Value x, int64_t n) {
    return arith::ShLIOp::create(b, loc, x, i32(n));
  }
  Value shr(Value x, int64_t n) {
    return arith::ShRUIOp::create(b, loc, x, i32(n));
  }
  Value ori(Value x, int64_t mask) {
    return arith::OrIOp::create(b, loc, x, i32(mask));
  }
  Value cmp(arith::CmpIPredicate pred, Value x, int64_t y) {
    return arith::CmpIOp::create(b, loc, pred, x, i32(y));
  }
  Value select(Value cond, Value x, Value y) {
    return arith::SelectOp::create(b, loc, cond, x, y);
  }

  PatternRewriter &b;
  Location loc;

private:
  Value constant(Type element, int64_t value) {
    Type t = type(element);
    auto attr = IntegerAttr::get(element, value);
    return arith::ConstantOp::create(
        b, loc, t,
        shape ? cast<TypedAttr>(DenseElementsAttr::get(cast<ShapedType>(t),
                                                       Attribute(attr)))
              : cast<TypedAttr>(attr));
  }
  VectorType shape;
};

/// f16 -> f32: rebias the exponent of normals, scale subnormals exactly.
Value extendHalf(BitBuilder &bb, Value half) {
  Type i32 = bb.b.getI32Type();
  Value u = arith::ExtUIOp::create(bb.b, bb.loc, bb.type(i32),
                                   bb.bitcast(half, bb.b.getI16Type()));
  Value sign = bb.shl(bb.andi(u, 0x8000), 16);
  Value exponent = bb.andi(bb.shr(u, 10), 0x1f);
  Value mantissa = bb.andi(u, 0x3ff);
  Value normal = bb.ori(bb.shl(bb.add(exponent, bb.i32(127 - 15)), 23),
                        bb.shl(mantissa, 13));
  Value special = bb.ori(bb.i32(0x7f800000), bb.shl(mantissa, 13));
  // Subnormal (and zero): mantissa * 2^-24, exact in f32.
  Value scaled = arith::MulFOp::create(
      bb.b, bb.loc,
      arith::SIToFPOp::create(bb.b, bb.loc, bb.type(bb.b.getF32Type()),
                              mantissa),
      bb.f32(0x1p-24f));
  Value subnormal = bb.bitcast(scaled, i32);
  Value magnitude =
      bb.select(bb.cmp(arith::CmpIPredicate::eq, exponent, 0), subnormal,
                bb.select(bb.cmp(arith::CmpIPredicate::eq, exponent, 0x1f),
                          special, normal));
  return bb.bitcast(bb.ori(magnitude, sign), bb.b.getF32Type());
}

/// f32 -> f16, round to nearest even.
Value truncateToHalf(BitBuilder &bb, Value single) {
  Type i32 = bb.b.getI32Type();
  Value u = bb.bitcast(single, i32);
  Value sign = bb.andi(bb.shr(u, 16), 0x8000);
  Value magnitude = bb.andi(u, 0x7fffffff);
  // Results below 2^-14 are subnormal: adding 0.5 lines the f32 ulp up
  // with the f16 subnormal step (2^-24) and lets the FPU round.
  Value shifted = arith::AddFOp::create(
      bb.b, bb.loc, bb.bitcast(magnitude, bb.b.getF32Type()), bb.f32(0.5f));
  Value subnormal = arith::SubIOp::create(
      bb.b, bb.loc, bb.bitcast(shifted, i32), bb.i32(0x3f000000));
  // Normals: rebias, round the 13 dropped bits to nearest even, shift.
  Value odd = bb.andi(bb.shr(magnitude, 13), 1);
  Value rebiased = bb.add(magnitude, bb.i32(int32_t(0xc8000fff)));
  Value normal = bb.shr(bb.add(rebiased, odd), 13);
  Value bits = bb.select(
      bb.cmp(arith::CmpIPredicate::ugt, magnitude, 0x7f800000),
      bb.i32(0x7e00), // NaN
      bb.select(
          bb.cmp(arith::CmpIPredicate::uge, magnitude, 0x477ff000),
          bb.i32(0x7c00), // rounds to infinity
          bb.select(bb.cmp(arith::CmpIPredicate::ult, magnitude, 0x38800000),
                    subnormal, normal)));
  Value half = arith::TruncIOp::create(bb.b, bb.loc, bb.type(bb.b.getI16Type()),
                                       bb.ori(bits, sign));
  return bb.bitcast(half, bb.b.getF16Type());
}

/// f64 -> f32 rounded to odd: a result that is inexact gets its lowest
/// mantissa bit set, which keeps the information that a rounding to fewer
/// bits (f16's 11) needs to round correctly.
Value narrowToOdd(BitBuilder &bb, Value x) {
  Type f32 = bb.b.getF32Type(), i32 = bb.b.getI32Type();
  Value single = arith::TruncFOp::create(bb.b, bb.loc, bb.type(f32), x);
  Value back = arith::ExtFOp::create(bb.b, bb.loc, x.getType(), single);
  Value inexact =
      arith::CmpFOp::create(bb.b, bb.loc, arith::CmpFPredicate::ONE, back, x);
  Value bits = bb.bitcast(single, i32);
  // Overflow to infinity stays infinity (the f16 result is infinite too).
  Value finite =
      bb.cmp(arith::CmpIPredicate::ne, bb.andi(bits, 0x7fffffff), 0x7f800000);
  Value odd = arith::AndIOp::create(bb.b, bb.loc, inexact, finite);
  return bb.bitcast(bb.select(odd, bb.ori(bits, 1), bits), f32);
}

struct ExpandExtF : public OpRewritePattern<arith::ExtFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::ExtFOp op,
                                PatternRewriter &rewriter) const override {
    Type from = getElementTypeOrSelf(op.getIn().getType());
    Type to = getElementTypeOrSelf(op.getType());
    if (!from.isF16() || !(to.isF32() || to.isF64()))
      return rewriter.notifyMatchFailure(op, "not an extension of f16");
    BitBuilder bb(rewriter, op.getLoc(), op.getType());
    Value result = extendHalf(bb, op.getIn());
    if (to.isF64())
      result =
          arith::ExtFOp::create(rewriter, op.getLoc(), op.getType(), result);
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct ExpandTruncF : public OpRewritePattern<arith::TruncFOp> {
  ExpandTruncF(MLIRContext *ctx, bool soft)
      : OpRewritePattern(ctx), soft(soft) {}
  LogicalResult matchAndRewrite(arith::TruncFOp op,
                                PatternRewriter &rewriter) const override {
    Type from = getElementTypeOrSelf(op.getIn().getType());
    Type to = getElementTypeOrSelf(op.getType());
    if (!to.isF16() || !(from.isF32() || from.isF64()))
      return rewriter.notifyMatchFailure(op, "not a truncation to f16");
    if (!soft && !from.isF64())
      return rewriter.notifyMatchFailure(op, "the CPU converts f32 -> f16");
    if (op.getRoundingmodeAttr() &&
        *op.getRoundingmode() != arith::RoundingMode::to_nearest_even)
      return rewriter.notifyMatchFailure(op, "non-default rounding");
    BitBuilder bb(rewriter, op.getLoc(), op.getType());
    Value single = from.isF64() ? narrowToOdd(bb, op.getIn()) : op.getIn();
    rewriter.replaceOp(op, soft
                               ? truncateToHalf(bb, single)
                               : arith::TruncFOp::create(rewriter, op.getLoc(),
                                                         op.getType(), single));
    return success();
  }

private:
  bool soft;
};

struct ExpandF16ConversionsPass
    : public kiln::impl::ExpandF16ConversionsBase<ExpandF16ConversionsPass> {
  using Base::Base;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    kiln::populateExpandF16ConversionsPatterns(patterns, soft);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace

void kiln::populateExpandF16ConversionsPatterns(RewritePatternSet &patterns,
                                                bool soft) {
  if (soft)
    patterns.add<ExpandExtF>(patterns.getContext());
  patterns.add<ExpandTruncF>(patterns.getContext(), soft);
}
