//===- Reduction.cpp - kiln.reduce_*, arg_max/min, cumsum -> linalg -------===//
//
// One reduction generic over the input into a tensor without the reduced
// dims, seeded with the reduction's identity; keepdims is then a free
// expand_shape. reduce_mean divides the sum by the element count in a small
// generic over the reduced result. f16/bf16 sums accumulate in f32.
// arg_max/arg_min carry (best value, its index) through one generic with two
// results; cumsum is a reduction over a second copy of its axis.
//
//===----------------------------------------------------------------------===//
#include "passes/lowering/LoweringUtils.h"
#include "passes/lowering/Patterns.h"

#include "dialects/kiln/KilnOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

using namespace mlir;
using namespace mlir::kiln;

namespace {

enum class ReduceKind { Sum, Mean, Max, Min, Prod };

template <typename OpTy, ReduceKind kind>
struct ReduceLowering : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;

  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    auto type = cast<RankedTensorType>(input.getType());
    ArrayRef<int64_t> axes = op.getAxes();
    // No axes: the verifier's shape is the input's, nothing is reduced.
    if (axes.empty()) {
      rewriter.replaceOp(op, input);
      return success();
    }
    Type kilnType = getElementType(op.getInput());
    Type elementType = type.getElementType();
    bool isFloat = isa<FloatType>(elementType);
    bool sums = kind == ReduceKind::Sum || kind == ReduceKind::Mean;
    Type accType = sums ? getAccumulatorType(elementType) : elementType;

    TypedAttr identity;
    switch (kind) {
    case ReduceKind::Sum:
    case ReduceKind::Mean:
      identity = cast<TypedAttr>(rewriter.getZeroAttr(accType));
      break;
    case ReduceKind::Prod:
      identity = isFloat ? TypedAttr(rewriter.getFloatAttr(accType, 1.0))
                         : TypedAttr(rewriter.getIntegerAttr(accType, 1));
      break;
    case ReduceKind::Max:
      identity = getLowestValue(kilnType);
      break;
    case ReduceKind::Min:
      identity = getHighestValue(kilnType);
      break;
    }

    SmallVector<int64_t> reducedShape = dropDims(type.getShape(), axes);
    Value init = createFilledTensor(
        rewriter, loc, reducedShape,
        runTimeDims(rewriter, loc, input, allDimsExcept(type.getRank(), axes)),
        identity);
    BroadcastOperand whole = {input,
                              rewriter.getMultiDimIdentityMap(type.getRank())};
    Value result = createReductionGeneric(
        rewriter, loc, whole, init, axes,
        [&](OpBuilder &b, Location l, ValueRange args) -> Value {
          Value x = args[0], acc = args[1];
          switch (kind) {
          case ReduceKind::Sum:
          case ReduceKind::Mean:
            x = convertScalar(b, l, x, elementType, accType);
            if (isFloat)
              return arith::AddFOp::create(b, l, x, acc);
            return arith::AddIOp::create(b, l, x, acc);
          case ReduceKind::Prod:
            if (isFloat)
              return arith::MulFOp::create(b, l, x, acc);
            return arith::MulIOp::create(b, l, x, acc);
          case ReduceKind::Max:
            return createMax(b, l, x, acc, kilnType);
          case ReduceKind::Min:
            return createMin(b, l, x, acc, kilnType);
          }
          llvm_unreachable("unknown reduction");
        });

    auto reducedType = RankedTensorType::get(reducedShape, elementType);
    if (kind == ReduceKind::Mean) {
      // (Over run-time extents, the count is computed at run time; an
      // empty reduction divides by zero as ONNX's reference does.)
      bool runTime = llvm::any_of(
          axes, [&](int64_t axis) { return type.isDynamicDim(axis); });
      Value runTimeCount =
          runTime ? createElementCount(rewriter, loc, input, axes, accType)
                  : Value();
      // An integer division by an empty extent's 0 would trap: divide by 1
      // (the sum is 0 then).
      if (runTimeCount && !isFloat) {
        Value zero = createScalarConstant(rewriter, loc, accType, 0);
        Value one = createScalarConstant(rewriter, loc, accType, 1);
        runTimeCount = arith::SelectOp::create(
            rewriter, loc,
            arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq,
                                  runTimeCount, zero),
            one, runTimeCount);
      }
      result = createElementwiseGeneric(
          rewriter, loc, reducedType, result,
          [&](OpBuilder &b, Location l, ValueRange args) -> Value {
            Value n = runTimeCount
                          ? runTimeCount
                          : createElementCount(b, l, input, axes, accType);
            Value mean;
            if (isFloat)
              mean = arith::DivFOp::create(b, l, args[0], n);
            else if (isUnsignedLike(kilnType))
              mean = arith::DivUIOp::create(b, l, args[0], n);
            else
              mean = arith::DivSIOp::create(b, l, args[0], n);
            return convertScalar(b, l, mean, accType, elementType);
          });
    } else {
      result = convertTensor(rewriter, loc, result, accType, elementType);
    }
    rewriter.replaceOp(
        op, createReshape(rewriter, loc, result, op.getType().getShape()));
    return success();
  }
};

/// Index of the max/min along one axis. The update rule also breaks ties by
/// index, so the result does not depend on the order the loop visits the
/// axis in.
template <typename OpTy, bool isMax>
struct ArgReduceLowering : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;

  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    auto type = cast<RankedTensorType>(input.getType());
    Type kilnType = getElementType(op.getInput());
    int64_t axis = op.getAxis();
    bool selectLast = op.getSelectLastIndex();
    unsigned rank = type.getRank();
    MLIRContext *ctx = rewriter.getContext();
    Type indexType = rewriter.getI64Type();

    SmallVector<int64_t> reducedShape = dropDims(type.getShape(), axis);
    SmallVector<Value> reducedSizes =
        runTimeDims(rewriter, loc, input, allDimsExcept(rank, axis));
    Value bestInit = createFilledTensor(
        rewriter, loc, reducedShape, reducedSizes,
        isMax ? getLowestValue(kilnType) : getHighestValue(kilnType));
    Value indexInit =
        createFilledTensor(rewriter, loc, reducedShape, reducedSizes,
                           rewriter.getI64IntegerAttr(0));
    AffineMap reducedMap = dropDimsMap(ctx, rank, axis);
    SmallVector<utils::IteratorType> iterators = parallelIterators(rank);
    iterators[axis] = utils::IteratorType::reduction;
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{bestInit.getType(), indexInit.getType()},
        input, ValueRange{bestInit, indexInit},
        ArrayRef<AffineMap>{rewriter.getMultiDimIdentityMap(rank), reducedMap,
                            reducedMap},
        iterators, [&](OpBuilder &b, Location l, ValueRange args) {
          Value x = args[0], best = args[1], bestIndex = args[2];
          Value index = arith::IndexCastOp::create(
              b, l, indexType, linalg::IndexOp::create(b, l, axis));
          Value better, tie;
          if (isa<FloatType>(kilnType)) {
            better = arith::CmpFOp::create(b, l,
                                           isMax ? arith::CmpFPredicate::OGT
                                                 : arith::CmpFPredicate::OLT,
                                           x, best);
            tie =
                arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ, x, best);
          } else {
            bool isU = isUnsignedLike(kilnType);
            auto pred = isMax ? (isU ? arith::CmpIPredicate::ugt
                                     : arith::CmpIPredicate::sgt)
                              : (isU ? arith::CmpIPredicate::ult
                                     : arith::CmpIPredicate::slt);
            better = arith::CmpIOp::create(b, l, pred, x, best);
            tie =
                arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, x, best);
          }
          Value tieWins =
              arith::CmpIOp::create(b, l,
                                    selectLast ? arith::CmpIPredicate::sgt
                                               : arith::CmpIPredicate::slt,
                                    index, bestIndex);
          Value take = arith::OrIOp::create(
              b, l, better, arith::AndIOp::create(b, l, tie, tieWins));
          linalg::YieldOp::create(
              b, l,
              ValueRange{
                  arith::SelectOp::create(b, l, take, x, best),
                  arith::SelectOp::create(b, l, take, index, bestIndex)});
        });
    rewriter.replaceOp(op, createReshape(rewriter, loc, generic.getResult(1),
                                         op.getType().getShape()));
    return success();
  }
};

/// out[.., i, ..] = sum over k of in[.., k, ..] for the k the flags admit
/// (k <= i; k < i if exclusive; mirrored if reverse). Quadratic in the axis
/// length but one plain generic, which the backend already handles; cumsum
/// axes in models are short (sequence positions, a few thousand at most).
struct CumSumLowering : OpConversionPattern<kiln::CumSumOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(kiln::CumSumOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    auto type = cast<RankedTensorType>(input.getType());
    Type elementType = type.getElementType();
    Type accType = getAccumulatorType(elementType);
    bool isFloat = isa<FloatType>(elementType);
    int64_t axis = op.getAxis(), rank = type.getRank();
    MLIRContext *ctx = rewriter.getContext();

    // Loops d0..d(rank-1) index the result, d(rank) the summed input element.
    SmallVector<AffineExpr> inputExprs;
    for (int64_t d = 0; d < rank; ++d)
      inputExprs.push_back(getAffineDimExpr(d == axis ? rank : d, ctx));
    BroadcastOperand source = {input,
                               AffineMap::get(rank + 1, 0, inputExprs, ctx)};
    Value init = createFilledTensor(
        rewriter, loc, type.getShape(),
        runTimeDims(rewriter, loc, input, allDimsExcept(rank, {})),
        cast<TypedAttr>(rewriter.getZeroAttr(accType)));
    arith::CmpIPredicate admit =
        op.getReverse() ? (op.getExclusive() ? arith::CmpIPredicate::ugt
                                             : arith::CmpIPredicate::uge)
                        : (op.getExclusive() ? arith::CmpIPredicate::ult
                                             : arith::CmpIPredicate::ule);
    Value sum = createReductionGeneric(
        rewriter, loc, source, init, {rank},
        [&](OpBuilder &b, Location l, ValueRange args) -> Value {
          Value x = convertScalar(b, l, args[0], elementType, accType);
          Value i = linalg::IndexOp::create(b, l, axis);
          Value k = linalg::IndexOp::create(b, l, rank);
          Value included = arith::CmpIOp::create(b, l, admit, k, i);
          Value term = arith::SelectOp::create(
              b, l, included, x, createScalarConstant(b, l, accType, 0));
          if (isFloat)
            return arith::AddFOp::create(b, l, args[1], term);
          return arith::AddIOp::create(b, l, args[1], term);
        });
    rewriter.replaceOp(op,
                       convertTensor(rewriter, loc, sum, accType, elementType));
    return success();
  }
};

} // namespace

void mlir::kiln::populateKilnReductionToLinalgPatterns(
    RewritePatternSet &patterns, TypeConverter &converter) {
  patterns.add<ReduceLowering<kiln::ReduceSumOp, ReduceKind::Sum>,
               ReduceLowering<kiln::ReduceMeanOp, ReduceKind::Mean>,
               ReduceLowering<kiln::ReduceMaxOp, ReduceKind::Max>,
               ReduceLowering<kiln::ReduceMinOp, ReduceKind::Min>,
               ReduceLowering<kiln::ReduceProdOp, ReduceKind::Prod>,
               ArgReduceLowering<kiln::ArgMaxOp, true>,
               ArgReduceLowering<kiln::ArgMinOp, false>, CumSumLowering>(
      converter, patterns.getContext());
}
