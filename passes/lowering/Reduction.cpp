//===- Reduction.cpp - kiln.reduce_* -> linalg.generic --------------------===//
//
// One reduction generic over the input into a tensor without the reduced
// dims, seeded with the reduction's identity; keepdims is then a free
// expand_shape. reduce_mean divides the sum by the element count in a small
// generic over the reduced result. f16/bf16 sums accumulate in f32.
//
//===----------------------------------------------------------------------===//
#include "passes/lowering/LoweringUtils.h"
#include "passes/lowering/Patterns.h"

#include "dialects/kiln/KilnOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"

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
    Value init = createFilledTensor(rewriter, loc, reducedShape, identity);
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
      int64_t count = 1;
      for (int64_t axis : axes)
        count *= type.getDimSize(axis);
      result = createElementwiseGeneric(
          rewriter, loc, reducedType, result,
          [&](OpBuilder &b, Location l, ValueRange args) -> Value {
            Value n = createScalarConstant(b, l, accType, count);
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

} // namespace

void mlir::kiln::populateKilnReductionToLinalgPatterns(
    RewritePatternSet &patterns, TypeConverter &converter) {
  patterns.add<ReduceLowering<kiln::ReduceSumOp, ReduceKind::Sum>,
               ReduceLowering<kiln::ReduceMeanOp, ReduceKind::Mean>,
               ReduceLowering<kiln::ReduceMaxOp, ReduceKind::Max>,
               ReduceLowering<kiln::ReduceMinOp, ReduceKind::Min>,
               ReduceLowering<kiln::ReduceProdOp, ReduceKind::Prod>>(
      converter, patterns.getContext());
}
