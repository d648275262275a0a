//===- Elementwise.cpp - Elementwise kiln ops -> linalg.generic -----------===//
//
// Every elementwise op (binary with numpy broadcasting, comparisons, unary
// math, activations, clip, cast, where) becomes one all-parallel
// linalg.generic; broadcast operands drop their unit dims so the indexing
// maps stay projected permutations. The scalar body picks float, signed or
// unsigned arith from the kiln element type, which the adaptor's signless
// operands no longer carry.
//
//===----------------------------------------------------------------------===//
#include "passes/lowering/LoweringUtils.h"
#include "passes/lowering/Patterns.h"

#include "dialects/kiln/KilnOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "llvm/ADT/APSInt.h"

#include <cmath>

using namespace mlir;
using namespace mlir::kiln;

namespace {

template <typename OpTy>
using ScalarFn = Value (*)(OpTy op, OpBuilder &b, Location loc,
                           ValueRange args);

/// One elementwise kiln op -> one broadcasting linalg.generic whose body is
/// built by `scalarFn`.
template <typename OpTy>
class ElementwiseLowering : public OpConversionPattern<OpTy> {
public:
  ElementwiseLowering(const TypeConverter &converter, MLIRContext *ctx,
                      ScalarFn<OpTy> scalarFn, bool floatOnly)
      : OpConversionPattern<OpTy>(converter, ctx), scalarFn(scalarFn),
        floatOnly(floatOnly) {}

  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (floatOnly && !isa<FloatType>(getElementType(op->getOperand(0))))
      return rewriter.notifyMatchFailure(op, "needs a float element type");
    auto resultType = dyn_cast_if_present<RankedTensorType>(
        this->getTypeConverter()->convertType(op.getType()));
    if (!resultType)
      return rewriter.notifyMatchFailure(op, "unsupported result type");
    // Transcendentals on f16/bf16 are computed in f32 and rounded once:
    // their constants and intermediate results need the precision.
    Type elementType = getElementType(op->getOperand(0));
    Type computeType = floatOnly ? getAccumulatorType(elementType) : Type();
    Value result = createElementwiseGeneric(
        rewriter, op.getLoc(), resultType, adaptor.getOperands(),
        [&](OpBuilder &b, Location loc, ValueRange args) {
          if (!computeType || computeType == elementType)
            return scalarFn(op, b, loc, args);
          SmallVector<Value> wide;
          for (Value arg : args)
            wide.push_back(
                convertScalar(b, loc, arg, arg.getType(), computeType));
          Value r = scalarFn(op, b, loc, wide);
          return convertScalar(b, loc, r, computeType, elementType);
        });
    rewriter.replaceOp(op, result);
    return success();
  }

private:
  ScalarFn<OpTy> scalarFn;
  bool floatOnly;
};

template <typename OpTy>
void addElementwise(RewritePatternSet &patterns, TypeConverter &converter,
                    ScalarFn<OpTy> fn, bool floatOnly = false) {
  patterns.add<ElementwiseLowering<OpTy>>(converter, patterns.getContext(), fn,
                                          floatOnly);
}

Type lhsType(Operation *op) { return getElementType(op->getOperand(0)); }

/// Picks the float, signed or unsigned variant of a binary arith op.
template <typename FloatOp, typename SignedOp, typename UnsignedOp = SignedOp>
Value createArith(OpBuilder &b, Location loc, Type kilnType, Value lhs,
                  Value rhs) {
  if (isa<FloatType>(kilnType))
    return FloatOp::create(b, loc, lhs, rhs);
  if (isUnsignedLike(kilnType))
    return UnsignedOp::create(b, loc, lhs, rhs);
  return SignedOp::create(b, loc, lhs, rhs);
}

Value createCompare(OpBuilder &b, Location loc, Type kilnType,
                    arith::CmpFPredicate floatPred,
                    arith::CmpIPredicate signedPred,
                    arith::CmpIPredicate unsignedPred, Value lhs, Value rhs) {
  if (isa<FloatType>(kilnType))
    return arith::CmpFOp::create(b, loc, floatPred, lhs, rhs);
  return arith::CmpIOp::create(
      b, loc, isUnsignedLike(kilnType) ? unsignedPred : signedPred, lhs, rhs);
}

Value constantLike(OpBuilder &b, Location loc, Value like, double value) {
  return createScalarConstant(b, loc, like.getType(), value);
}

/// ONNX Pow has independent base and exponent types; the result has the
/// base's type.
Value createPow(OpBuilder &b, Location loc, Type baseType, Type expType,
                Value base, Value exponent) {
  if (isa<FloatType>(baseType)) {
    // Integral exponents become floats: powf handles negative bases with
    // integral exponents exactly like pow(double, int).
    Value e = convertScalar(b, loc, exponent, expType, baseType);
    return math::PowFOp::create(b, loc, base, e);
  }
  if (isa<IntegerType>(expType)) {
    Value e = convertScalar(b, loc, exponent, expType, baseType);
    return math::IPowIOp::create(b, loc, base, e);
  }
  // Integer base, float exponent: compute in the exponent's float type.
  Value x = convertScalar(b, loc, base, baseType, expType);
  Value r = math::PowFOp::create(b, loc, x, exponent);
  return convertScalar(b, loc, r, expType, baseType);
}

/// Clip bound for an integer type: rounded inward and saturated to the type's
/// range, so clip(u8, min=-5) is a no-op bound of 0.
Value createIntBound(OpBuilder &b, Location loc, double bound, Type kilnType,
                     bool isLowerBound) {
  unsigned width = cast<IntegerType>(kilnType).getWidth();
  llvm::APSInt value(width, /*isUnsigned=*/isUnsignedLike(kilnType));
  bool exact;
  llvm::APFloat(bound).convertToInteger(value,
                                        isLowerBound
                                            ? llvm::APFloat::rmTowardPositive
                                            : llvm::APFloat::rmTowardNegative,
                                        &exact);
  return arith::ConstantOp::create(
      b, loc, b.getIntegerAttr(b.getIntegerType(width), value));
}

Value createClip(kiln::ClipOp op, OpBuilder &b, Location loc, ValueRange a) {
  Type type = lhsType(op);
  Value x = a[0];
  auto bound = [&](double v, bool lower) -> Value {
    if (isa<FloatType>(type))
      return constantLike(b, loc, x, v);
    return createIntBound(b, loc, v, type, lower);
  };
  // max first, then min: with min > max every element becomes max (ONNX).
  if (auto min = op.getMin())
    x = createMax(b, loc, x, bound(min->convertToDouble(), true), type);
  if (auto max = op.getMax())
    x = createMin(b, loc, x, bound(max->convertToDouble(), false), type);
  return x;
}

/// ONNX Mod: C fmod when `fmod` is set (and for unsigned ints, where both
/// rules agree), otherwise the remainder takes the divisor's sign.
Value createMod(kiln::ModOp op, OpBuilder &b, Location loc, ValueRange a) {
  Type type = lhsType(op);
  Value x = a[0], y = a[1];
  if (isUnsignedLike(type))
    return arith::RemUIOp::create(b, loc, x, y);
  bool isFloat = isa<FloatType>(type);
  Value r = isFloat ? Value(arith::RemFOp::create(b, loc, x, y))
                    : Value(arith::RemSIOp::create(b, loc, x, y));
  if (op.getFmod())
    return r;
  Value zero = constantLike(b, loc, r, 0);
  Value nonZero, signsDiffer;
  if (isFloat) {
    nonZero = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::ONE, r, zero);
    Value rNeg =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, r, zero);
    Value yNeg =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, y, zero);
    signsDiffer = arith::XOrIOp::create(b, loc, rNeg, yNeg);
  } else {
    nonZero = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, r, zero);
    // The sign bit of r ^ y is set exactly when their signs differ.
    signsDiffer =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                              arith::XOrIOp::create(b, loc, r, y), zero);
  }
  Value adjust = arith::AndIOp::create(b, loc, nonZero, signsDiffer);
  Value shifted = createArith<arith::AddFOp, arith::AddIOp>(b, loc, type, r, y);
  return arith::SelectOp::create(b, loc, adjust, shifted, r);
}

/// Shifts by the bit width or more are poison in arith; ONNX (like numpy on
/// unsigned values) expects 0.
template <bool isLeft>
Value createShift(Operation *, OpBuilder &b, Location loc, ValueRange a) {
  Value x = a[0], amount = a[1];
  Value shifted = isLeft ? Value(arith::ShLIOp::create(b, loc, x, amount))
                         : Value(arith::ShRUIOp::create(b, loc, x, amount));
  unsigned width = x.getType().getIntOrFloatBitWidth();
  Value inRange = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                        amount, constantLike(b, loc, x, width));
  return arith::SelectOp::create(b, loc, inRange, shifted,
                                 constantLike(b, loc, x, 0));
}

Value createGelu(kiln::GeluOp op, OpBuilder &b, Location loc, ValueRange a) {
  Value x = a[0];
  Value half = constantLike(b, loc, x, 0.5);
  Value one = constantLike(b, loc, x, 1.0);
  Value inner;
  if (op.getTanhApproximation()) {
    // tanh(sqrt(2/pi) * (x + 0.044715 x^3))
    Value c = constantLike(b, loc, x, 0.044715);
    Value k = constantLike(b, loc, x, std::sqrt(2.0 / M_PI));
    Value x3 =
        arith::MulFOp::create(b, loc, x, arith::MulFOp::create(b, loc, x, x));
    Value poly =
        arith::AddFOp::create(b, loc, x, arith::MulFOp::create(b, loc, c, x3));
    inner =
        math::TanhOp::create(b, loc, arith::MulFOp::create(b, loc, k, poly));
  } else {
    // erf(x / sqrt(2))
    Value k = constantLike(b, loc, x, M_SQRT1_2);
    inner = math::ErfOp::create(b, loc, arith::MulFOp::create(b, loc, x, k));
  }
  Value cdf = arith::MulFOp::create(b, loc, half,
                                    arith::AddFOp::create(b, loc, one, inner));
  return arith::MulFOp::create(b, loc, x, cdf);
}

/// A float-only op that is one math op (computed in f32 for f16/bf16).
template <typename OpTy, typename MathOp>
void addFloatUnary(RewritePatternSet &patterns, TypeConverter &converter) {
  addElementwise<OpTy>(
      patterns, converter,
      [](OpTy, OpBuilder &b, Location l, ValueRange a) -> Value {
        return MathOp::create(b, l, a[0]);
      },
      /*floatOnly=*/true);
}

/// Logical (i1) or bitwise (wider ints) binary op: the same arith op.
template <typename OpTy, typename ArithOp>
void addBitwise(RewritePatternSet &patterns, TypeConverter &converter) {
  addElementwise<OpTy>(
      patterns, converter,
      [](OpTy, OpBuilder &b, Location l, ValueRange a) -> Value {
        return ArithOp::create(b, l, a[0], a[1]);
      });
}

void populateMathAndLogicPatterns(RewritePatternSet &p, TypeConverter &c) {
  addElementwise<ModOp>(p, c, createMod);
  addBitwise<AndOp, arith::AndIOp>(p, c);
  addBitwise<OrOp, arith::OrIOp>(p, c);
  addBitwise<XorOp, arith::XOrIOp>(p, c);
  addElementwise<NotOp>(
      p, c, [](NotOp, OpBuilder &b, Location l, ValueRange a) -> Value {
        auto type = cast<IntegerType>(a[0].getType());
        Value ones = arith::ConstantOp::create(
            b, l, b.getIntegerAttr(type, APInt::getAllOnes(type.getWidth())));
        return arith::XOrIOp::create(b, l, a[0], ones);
      });
  addElementwise<ShiftLeftOp>(
      p, c, [](ShiftLeftOp op, OpBuilder &b, Location l, ValueRange a) {
        return createShift<true>(op, b, l, a);
      });
  addElementwise<ShiftRightOp>(
      p, c, [](ShiftRightOp op, OpBuilder &b, Location l, ValueRange a) {
        return createShift<false>(op, b, l, a);
      });
  addElementwise<LessEqualOp>(
      p, c, [](LessEqualOp op, OpBuilder &b, Location l, ValueRange a) {
        return createCompare(b, l, lhsType(op), arith::CmpFPredicate::OLE,
                             arith::CmpIPredicate::sle,
                             arith::CmpIPredicate::ule, a[0], a[1]);
      });
  addElementwise<GreaterEqualOp>(
      p, c, [](GreaterEqualOp op, OpBuilder &b, Location l, ValueRange a) {
        return createCompare(b, l, lhsType(op), arith::CmpFPredicate::OGE,
                             arith::CmpIPredicate::sge,
                             arith::CmpIPredicate::uge, a[0], a[1]);
      });

  addFloatUnary<SinOp, math::SinOp>(p, c);
  addFloatUnary<CosOp, math::CosOp>(p, c);
  addFloatUnary<TanOp, math::TanOp>(p, c);
  addFloatUnary<AsinOp, math::AsinOp>(p, c);
  addFloatUnary<AcosOp, math::AcosOp>(p, c);
  addFloatUnary<AtanOp, math::AtanOp>(p, c);
  addFloatUnary<SinhOp, math::SinhOp>(p, c);
  addFloatUnary<CoshOp, math::CoshOp>(p, c);
  addFloatUnary<AsinhOp, math::AsinhOp>(p, c);
  addFloatUnary<AcoshOp, math::AcoshOp>(p, c);
  addFloatUnary<AtanhOp, math::AtanhOp>(p, c);
  addFloatUnary<CeilOp, math::CeilOp>(p, c);
  addFloatUnary<FloorOp, math::FloorOp>(p, c);
  addFloatUnary<RoundOp, math::RoundEvenOp>(p, c);
}

} // namespace

void mlir::kiln::populateKilnElementwiseToLinalgPatterns(
    RewritePatternSet &patterns, TypeConverter &converter) {
  using namespace kiln;
  auto &p = patterns;
  auto &c = converter;

  // Arithmetic.
  addElementwise<AddOp>(p, c,
                        [](AddOp op, OpBuilder &b, Location l, ValueRange a) {
                          return createArith<arith::AddFOp, arith::AddIOp>(
                              b, l, lhsType(op), a[0], a[1]);
                        });
  addElementwise<SubOp>(p, c,
                        [](SubOp op, OpBuilder &b, Location l, ValueRange a) {
                          return createArith<arith::SubFOp, arith::SubIOp>(
                              b, l, lhsType(op), a[0], a[1]);
                        });
  addElementwise<MulOp>(p, c,
                        [](MulOp op, OpBuilder &b, Location l, ValueRange a) {
                          return createArith<arith::MulFOp, arith::MulIOp>(
                              b, l, lhsType(op), a[0], a[1]);
                        });
  addElementwise<DivOp>(
      p, c, [](DivOp op, OpBuilder &b, Location l, ValueRange a) {
        return createArith<arith::DivFOp, arith::DivSIOp, arith::DivUIOp>(
            b, l, lhsType(op), a[0], a[1]);
      });
  addElementwise<PowOp>(
      p, c, [](PowOp op, OpBuilder &b, Location l, ValueRange a) {
        return createPow(b, l, lhsType(op), getElementType(op.getRhs()), a[0],
                         a[1]);
      });
  addElementwise<MaxOp>(p, c,
                        [](MaxOp op, OpBuilder &b, Location l, ValueRange a) {
                          return createMax(b, l, a[0], a[1], lhsType(op));
                        });
  addElementwise<MinOp>(p, c,
                        [](MinOp op, OpBuilder &b, Location l, ValueRange a) {
                          return createMin(b, l, a[0], a[1], lhsType(op));
                        });

  // Comparisons: ordered float predicates, so NaN compares false.
  addElementwise<EqualOp>(
      p, c, [](EqualOp op, OpBuilder &b, Location l, ValueRange a) {
        return createCompare(b, l, lhsType(op), arith::CmpFPredicate::OEQ,
                             arith::CmpIPredicate::eq, arith::CmpIPredicate::eq,
                             a[0], a[1]);
      });
  addElementwise<LessOp>(
      p, c, [](LessOp op, OpBuilder &b, Location l, ValueRange a) {
        return createCompare(b, l, lhsType(op), arith::CmpFPredicate::OLT,
                             arith::CmpIPredicate::slt,
                             arith::CmpIPredicate::ult, a[0], a[1]);
      });
  addElementwise<GreaterOp>(
      p, c, [](GreaterOp op, OpBuilder &b, Location l, ValueRange a) {
        return createCompare(b, l, lhsType(op), arith::CmpFPredicate::OGT,
                             arith::CmpIPredicate::sgt,
                             arith::CmpIPredicate::ugt, a[0], a[1]);
      });

  // Float-only unary math.
  addElementwise<SqrtOp>(
      p, c,
      [](SqrtOp, OpBuilder &b, Location l, ValueRange a) -> Value {
        return math::SqrtOp::create(b, l, a[0]);
      },
      /*floatOnly=*/true);
  addElementwise<ExpOp>(
      p, c,
      [](ExpOp, OpBuilder &b, Location l, ValueRange a) -> Value {
        return math::ExpOp::create(b, l, a[0]);
      },
      true);
  addElementwise<LogOp>(
      p, c,
      [](LogOp, OpBuilder &b, Location l, ValueRange a) -> Value {
        return math::LogOp::create(b, l, a[0]);
      },
      true);
  addElementwise<TanhOp>(
      p, c,
      [](TanhOp, OpBuilder &b, Location l, ValueRange a) -> Value {
        return math::TanhOp::create(b, l, a[0]);
      },
      true);
  addElementwise<ErfOp>(
      p, c,
      [](ErfOp, OpBuilder &b, Location l, ValueRange a) -> Value {
        return math::ErfOp::create(b, l, a[0]);
      },
      true);
  addElementwise<ReciprocalOp>(
      p, c,
      [](ReciprocalOp, OpBuilder &b, Location l, ValueRange a) -> Value {
        return arith::DivFOp::create(b, l, constantLike(b, l, a[0], 1.0), a[0]);
      },
      true);
  addElementwise<SigmoidOp>(
      p, c,
      [](SigmoidOp, OpBuilder &b, Location l, ValueRange a) -> Value {
        // 1 / (1 + exp(-x)): exp overflows to +inf for very negative x,
        // giving exactly 0, never NaN.
        Value one = constantLike(b, l, a[0], 1.0);
        Value e = math::ExpOp::create(b, l, arith::NegFOp::create(b, l, a[0]));
        return arith::DivFOp::create(b, l, one,
                                     arith::AddFOp::create(b, l, one, e));
      },
      true);
  addElementwise<LeakyReluOp>(
      p, c,
      [](LeakyReluOp op, OpBuilder &b, Location l, ValueRange a) -> Value {
        Value x = a[0];
        Value zero = constantLike(b, l, x, 0.0);
        Value alpha = constantLike(b, l, x, op.getAlpha().convertToDouble());
        Value negative =
            arith::CmpFOp::create(b, l, arith::CmpFPredicate::OLT, x, zero);
        return arith::SelectOp::create(
            b, l, negative, arith::MulFOp::create(b, l, alpha, x), x);
      },
      true);
  addElementwise<GeluOp>(p, c, createGelu, true);

  // Unary ops defined for integers too.
  addElementwise<NegOp>(
      p, c, [](NegOp op, OpBuilder &b, Location l, ValueRange a) -> Value {
        if (isa<FloatType>(lhsType(op)))
          return arith::NegFOp::create(b, l, a[0]);
        return arith::SubIOp::create(b, l, constantLike(b, l, a[0], 0), a[0]);
      });
  addElementwise<AbsOp>(
      p, c, [](AbsOp op, OpBuilder &b, Location l, ValueRange a) -> Value {
        Type type = lhsType(op);
        if (isa<FloatType>(type))
          return math::AbsFOp::create(b, l, a[0]);
        if (isUnsignedLike(type))
          return a[0];
        return math::AbsIOp::create(b, l, a[0]);
      });
  addElementwise<ReluOp>(
      p, c, [](ReluOp op, OpBuilder &b, Location l, ValueRange a) {
        return createMax(b, l, a[0], constantLike(b, l, a[0], 0), lhsType(op));
      });
  addElementwise<ClipOp>(p, c, createClip);

  addElementwise<CastOp>(
      p, c, [](CastOp op, OpBuilder &b, Location l, ValueRange a) {
        return convertScalar(b, l, a[0], lhsType(op), op.getTo());
      });
  addElementwise<WhereOp>(
      p, c, [](WhereOp, OpBuilder &b, Location l, ValueRange a) -> Value {
        return arith::SelectOp::create(b, l, a[0], a[1], a[2]);
      });
  populateMathAndLogicPatterns(p, c);
}
