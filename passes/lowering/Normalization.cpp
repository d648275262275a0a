//===- Normalization.cpp - softmax and norms -> linalg.generic ------------===//
//
// Each op becomes a short chain of reductions and parallel generics that the
// fusion passes may merge:
//   softmax      max, e = exp(x - max), sum(e), e / sum
//   log_softmax  max, sum(exp(x - max)), (x - max) - log(sum)
//   batch_norm   per-channel scale * rsqrt(var + eps), then one pass over x
//   layer_norm   mean, variance (two-pass: stable for large means), one pass
// except for static f32 rows, which become one row kernel each
// (NormalizationRows.cpp). Subtracting the max keeps exp from overflowing.
// f16/bf16 statistics are computed in f32.
//
//===----------------------------------------------------------------------===//
#include "passes/lowering/DynamicShapeUtils.h"
#include "passes/lowering/LoweringUtils.h"
#include "passes/lowering/NormalizationRows.h"
#include "passes/lowering/Patterns.h"

#include "dialects/kiln/KilnOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::kiln;

namespace {

BroadcastOperand whole(OpBuilder &b, Value v) {
  unsigned rank = cast<RankedTensorType>(v.getType()).getRank();
  return {v, b.getMultiDimIdentityMap(rank)};
}

/// Zeros shaped like `like` without its dims `dropped`.
Value zeroFilled(OpBuilder &b, Location loc, Value like,
                 ArrayRef<int64_t> dropped, Type type) {
  auto likeType = cast<RankedTensorType>(like.getType());
  return createFilledTensor(
      b, loc, dropDims(likeType.getShape(), dropped),
      runTimeDims(b, loc, like, allDimsExcept(likeType.getRank(), dropped)),
      cast<TypedAttr>(b.getZeroAttr(type)));
}

/// The input's max along `axis`, in the input's own type (exact).
Value createAxisMax(OpBuilder &b, Location loc, Value input, int64_t axis) {
  auto type = cast<RankedTensorType>(input.getType());
  Type elementType = type.getElementType();
  Value init = createFilledTensor(
      b, loc, dropDims(type.getShape(), axis),
      runTimeDims(b, loc, input, allDimsExcept(type.getRank(), axis)),
      getLowestValue(elementType));
  return createReductionGeneric(
      b, loc, whole(b, input), init, axis,
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        return arith::MaximumFOp::create(nb, nl, args[0], args[1]);
      });
}

template <typename OpTy>
LogicalResult checkFloat(OpTy op, ConversionPatternRewriter &rewriter) {
  if (!isa<FloatType>(getElementType(op.getInput())))
    return rewriter.notifyMatchFailure(op, "needs a float element type");
  return success();
}

/// softmax and log_softmax share the max and the sum of exponentials.
template <typename OpTy, bool isLog>
struct SoftmaxLowering : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;

  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (failed(checkFloat(op, rewriter)))
      return failure();
    Location loc = op.getLoc();
    Value x = adaptor.getInput();
    auto type = cast<RankedTensorType>(x.getType());
    Type elementType = type.getElementType();
    Type accType = getAccumulatorType(elementType);
    int64_t axis = op.getAxis();
    FailureOr<Value> rows = buildSoftmaxRows(rewriter, loc, x, axis, isLog);
    if (succeeded(rows)) {
      rewriter.replaceOp(op, *rows);
      return success();
    }
    unsigned rank = type.getRank();
    BroadcastOperand max = {createAxisMax(rewriter, loc, x, axis),
                            dropDimsMap(rewriter.getContext(), rank, axis)};

    // x - max, in the accumulator type.
    auto shifted = [&](OpBuilder &b, Location l, Value v, Value m) -> Value {
      Value wide = convertScalar(b, l, v, elementType, accType);
      Value wideMax = convertScalar(b, l, m, elementType, accType);
      return arith::SubFOp::create(b, l, wide, wideMax);
    };

    if (isLog) {
      Value sum = createReductionGeneric(
          rewriter, loc, {whole(rewriter, x), max},
          zeroFilled(rewriter, loc, x, axis, accType), axis,
          [&](OpBuilder &b, Location l, ValueRange args) -> Value {
            Value e =
                math::ExpOp::create(b, l, shifted(b, l, args[0], args[1]));
            return arith::AddFOp::create(b, l, args[2], e);
          });
      BroadcastOperand sumOperand = {sum, max.map};
      Value result = createParallelGeneric(
          rewriter, loc, type, {whole(rewriter, x), max, sumOperand},
          [&](OpBuilder &b, Location l, ValueRange args) {
            // One order whatever the compiler's order of arguments.
            Value logSum = math::LogOp::create(b, l, args[2]);
            Value r = arith::SubFOp::create(
                b, l, shifted(b, l, args[0], args[1]), logSum);
            return convertScalar(b, l, r, accType, elementType);
          });
      rewriter.replaceOp(op, result);
      return success();
    }

    Value exps = createParallelGeneric(
        rewriter, loc, type.clone(accType), {whole(rewriter, x), max},
        [&](OpBuilder &b, Location l, ValueRange args) -> Value {
          return math::ExpOp::create(b, l, shifted(b, l, args[0], args[1]));
        });
    Value sum = createReductionGeneric(
        rewriter, loc, whole(rewriter, exps),
        zeroFilled(rewriter, loc, x, axis, accType), axis,
        [&](OpBuilder &b, Location l, ValueRange args) -> Value {
          return arith::AddFOp::create(b, l, args[0], args[1]);
        });
    BroadcastOperand sumOperand = {sum, max.map};
    Value result = createParallelGeneric(
        rewriter, loc, type, {whole(rewriter, exps), sumOperand},
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value r = arith::DivFOp::create(b, l, args[0], args[1]);
          return convertScalar(b, l, r, accType, elementType);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct BatchNormLowering : OpConversionPattern<kiln::BatchNormOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(kiln::BatchNormOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (failed(checkFloat(op, rewriter)))
      return failure();
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(adaptor.getInput().getType());
    Type elementType = type.getElementType();
    Type accType = getAccumulatorType(elementType);
    double epsilon = op.getEpsilon().convertToDouble();
    // Parameters may have their own float type (ONNX BatchNormalization-15
    // allows it); everything is computed in the accumulator type.
    auto wide = [&](OpBuilder &b, Location l, Value v) {
      return convertScalar(b, l, v, v.getType(), accType);
    };

    // The per-channel parameters broadcast to the input's channels (checked
    // when either extent is known only at run time).
    auto channelType = RankedTensorType::get({type.getDimSize(1)}, accType);
    Value channels =
        type.isDynamicDim(1)
            ? tensor::DimOp::create(rewriter, loc, adaptor.getInput(), 1)
            : Value();
    RunTimeBroadcast params =
        broadcastRunTimeExtents(rewriter, loc, channelType,
                                {adaptor.getScale(), adaptor.getBias(),
                                 adaptor.getMean(), adaptor.getVariance()},
                                /*trailing=*/0, ValueRange{channels});
    Value scale = params.inputs[0], bias = params.inputs[1],
          mean = params.inputs[2], variance = params.inputs[3];
    // The parameters are read per channel: a static extent of 1 (which the
    // broadcast above takes as broadcastable) must be the channel count.
    // ONNX gives them shape (C), so one entry against more channels is an
    // error, not a broadcast (onnxruntime rejects it too).
    auto oneEntry = [](Value v) {
      auto t = cast<RankedTensorType>(v.getType());
      return !t.isDynamicDim(0) && t.getDimSize(0) == 1;
    };
    if (channels &&
        llvm::any_of(ValueRange{scale, bias, mean, variance}, oneEntry))
      emitRuntimeCheck(rewriter, loc,
                       arith::CmpIOp::create(
                           rewriter, loc, arith::CmpIPredicate::eq, channels,
                           arith::ConstantIndexOp::create(rewriter, loc, 1)),
                       "BatchNormalization: the parameters have 1 entry and "
                       "the input more channels");
    // Per channel: scale / sqrt(var + eps), computed once, not per element.
    Value factor = createElementwiseGeneric(
        rewriter, loc, channelType, ValueRange{scale, variance},
        [&](OpBuilder &b, Location l, ValueRange args) -> Value {
          Value eps = createScalarConstant(b, l, accType, epsilon);
          Value var = arith::AddFOp::create(b, l, wide(b, l, args[1]), eps);
          return arith::MulFOp::create(b, l, wide(b, l, args[0]),
                                       math::RsqrtOp::create(b, l, var));
        });

    AffineMap channel = mapOfDims(rewriter.getContext(), type.getRank(), {1});
    Value result = createParallelGeneric(
        rewriter, loc, type,
        {whole(rewriter, adaptor.getInput()),
         {mean, channel},
         {factor, channel},
         {bias, channel}},
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value centered = arith::SubFOp::create(b, l, wide(b, l, args[0]),
                                                 wide(b, l, args[1]));
          Value scaled = arith::MulFOp::create(b, l, centered, args[2]);
          Value r = arith::AddFOp::create(b, l, scaled, wide(b, l, args[3]));
          return convertScalar(b, l, r, accType, elementType);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct LayerNormLowering : OpConversionPattern<kiln::LayerNormOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(kiln::LayerNormOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (failed(checkFloat(op, rewriter)))
      return failure();
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Value x = adaptor.getInput();
    auto type = cast<RankedTensorType>(x.getType());
    Type elementType = type.getElementType();
    Type accType = getAccumulatorType(elementType);
    int64_t axis = op.getAxis(), rank = type.getRank();
    double epsilon = op.getEpsilon().convertToDouble();
    FailureOr<Value> rows = buildLayerNormRows(
        rewriter, loc, x, adaptor.getScale(), adaptor.getBias(), axis, epsilon);
    if (succeeded(rows)) {
      rewriter.replaceOp(op, *rows);
      return success();
    }

    SmallVector<int64_t> normalized;
    for (int64_t d = axis; d < rank; ++d)
      normalized.push_back(d);
    // A run-time count when a normalized extent is known only at run time
    // (else a constant in each generic that divides).
    bool runTime = llvm::any_of(
        normalized, [&](int64_t d) { return type.isDynamicDim(d); });
    Value runTimeCount =
        runTime ? createElementCount(rewriter, loc, x, normalized, accType)
                : Value();
    ArrayRef<int64_t> outerShape = type.getShape().take_front(axis);
    auto outerType = RankedTensorType::get(outerShape, accType);
    AffineMap outerMap = dropDimsMap(ctx, rank, normalized);
    auto wide = [&](OpBuilder &b, Location l, Value v) {
      return convertScalar(b, l, v, v.getType(), accType);
    };
    auto divideByCount = [&](OpBuilder &b, Location l, Value v) -> Value {
      Value count = runTimeCount
                        ? runTimeCount
                        : createElementCount(b, l, x, normalized, accType);
      return arith::DivFOp::create(b, l, v, count);
    };

    Value sum = createReductionGeneric(
        rewriter, loc, whole(rewriter, x),
        zeroFilled(rewriter, loc, x, normalized, accType), normalized,
        [&](OpBuilder &b, Location l, ValueRange args) -> Value {
          return arith::AddFOp::create(b, l, args[1], wide(b, l, args[0]));
        });
    Value mean = createElementwiseGeneric(
        rewriter, loc, outerType, sum,
        [&](OpBuilder &b, Location l, ValueRange args) {
          return divideByCount(b, l, args[0]);
        });
    Value squares = createReductionGeneric(
        rewriter, loc, {whole(rewriter, x), {mean, outerMap}},
        zeroFilled(rewriter, loc, x, normalized, accType), normalized,
        [&](OpBuilder &b, Location l, ValueRange args) -> Value {
          Value d = arith::SubFOp::create(b, l, wide(b, l, args[0]), args[1]);
          return arith::AddFOp::create(b, l, args[2],
                                       arith::MulFOp::create(b, l, d, d));
        });
    Value rstd = createElementwiseGeneric(
        rewriter, loc, outerType, squares,
        [&](OpBuilder &b, Location l, ValueRange args) -> Value {
          Value eps = createScalarConstant(b, l, accType, epsilon);
          Value var = divideByCount(b, l, args[0]);
          return math::RsqrtOp::create(b, l,
                                       arith::AddFOp::create(b, l, var, eps));
        });

    // Scale and bias broadcast to the input's extents (checked when those
    // of either are known only at run time).
    Value bias = adaptor.getBias();
    SmallVector<Value> params{adaptor.getScale()}, extents;
    if (bias)
      params.push_back(bias);
    for (int64_t d = 0; d < rank; ++d)
      extents.push_back(type.isDynamicDim(d)
                            ? tensor::DimOp::create(rewriter, loc, x, d)
                            : Value());
    RunTimeBroadcast broadcast = broadcastRunTimeExtents(
        rewriter, loc, type, params, /*trailing=*/0, extents);
    SmallVector<BroadcastOperand> operands = {
        whole(rewriter, x),
        {mean, outerMap},
        {rstd, outerMap},
        alignForBroadcast(rewriter, loc, broadcast.inputs[0], type.getShape())};
    if (bias)
      operands.push_back(alignForBroadcast(rewriter, loc, broadcast.inputs[1],
                                           type.getShape()));
    Value result = createParallelGeneric(
        rewriter, loc, type, operands,
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value d = arith::SubFOp::create(b, l, wide(b, l, args[0]), args[1]);
          Value n = arith::MulFOp::create(b, l, d, args[2]);
          Value r = arith::MulFOp::create(b, l, n, wide(b, l, args[3]));
          if (bias)
            r = arith::AddFOp::create(b, l, r, wide(b, l, args[4]));
          return convertScalar(b, l, r, accType, elementType);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void mlir::kiln::populateKilnNormalizationToLinalgPatterns(
    RewritePatternSet &patterns, TypeConverter &converter) {
  patterns.add<SoftmaxLowering<kiln::SoftmaxOp, false>,
               SoftmaxLowering<kiln::LogSoftmaxOp, true>, BatchNormLowering,
               LayerNormLowering>(converter, patterns.getContext());
}
