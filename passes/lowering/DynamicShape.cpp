//===- DynamicShape.cpp - ops whose result shape is a run-time value ------===//
//
//   dynamic_reshape  the ONNX shape read with tensor.extract, 0 and -1
//                    resolved with arith, checked with cf.assert, then
//                    tensor.reshape (a view after bufferization)
//   dynamic_unsqueeze/dynamic_squeeze  the axes read and normalized, the
//                    result extents selected from the input's, then a
//                    tensor.reshape the same way
//   assert           the 0-d condition read with tensor.extract, then the
//                    cf.assert of the other checks
//
// Each check is a `cf.assert` whose message names the ONNX node; the CPU
// backend turns it into an error returned by the run (kiln-runtime-services).
//
//===----------------------------------------------------------------------===//
#include "passes/lowering/DynamicShapeUtils.h"
#include "passes/lowering/Patterns.h"

#include "dialects/kiln/KilnOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::kiln;

namespace {

struct DynamicReshapeLowering : OpConversionPattern<kiln::DynamicReshapeOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(kiln::DynamicReshapeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    IndexMath m(rewriter, loc);
    Value input = adaptor.getInput();
    int64_t inRank = cast<RankedTensorType>(input.getType()).getRank();
    auto resultType = cast<RankedTensorType>(
        getTypeConverter()->convertType(op.getResult().getType()));
    int64_t rank = resultType.getRank();

    Value total = m.c(1);
    for (int64_t d = 0; d < inRank; ++d)
      total = m.mul(total, m.dim(input, d));

    SmallVector<Value> dims;
    Value inferCount = m.c(0), known = m.c(1), noNegative = m.t(true),
          copiesExist = m.t(true);
    for (int64_t i = 0; i < rank; ++i) {
      Value v = m.extract(adaptor.getShape(), i);
      if (!op.getAllowZero()) {
        Value isZero = m.eq(v, m.c(0));
        if (i < inRank)
          v = m.select(isZero, m.dim(input, i), v);
        else
          copiesExist = m.andi(copiesExist, m.noti(isZero));
      }
      Value isInfer = m.eq(v, m.c(-1));
      inferCount = m.add(inferCount, m.select(isInfer, m.c(1), m.c(0)));
      noNegative = m.andi(noNegative, m.sge(v, m.c(-1)));
      known = m.mul(known, m.select(isInfer, m.c(1), v));
      dims.push_back(v);
    }
    emitRuntimeCheck(rewriter, loc, noNegative,
                     "Reshape: the shape has a negative dim other than -1");
    emitRuntimeCheck(rewriter, loc, m.sle(inferCount, m.c(1)),
                     "Reshape: the shape has more than one -1");
    if (!op.getAllowZero() && rank > inRank)
      emitRuntimeCheck(rewriter, loc, copiesExist,
                       "Reshape: the shape copies (0) a dim the input does "
                       "not have");
    // -1 takes what is left; a zero product leaves it 0 and the count check
    // below reports the mismatch unless the input is empty too.
    Value knownIsZero = m.eq(known, m.c(0));
    Value inferred =
        m.select(knownIsZero, m.c(0),
                 m.divu(total, m.select(knownIsZero, m.c(1), known)));
    Value count = m.c(1);
    for (Value &d : dims) {
      d = m.select(m.eq(d, m.c(-1)), inferred, d);
      count = m.mul(count, d);
    }
    emitRuntimeCheck(rewriter, loc, m.eq(count, total),
                     "Reshape: the shape's element count differs from the "
                     "input's");
    Value shape = tensor::FromElementsOp::create(
        rewriter, loc, RankedTensorType::get({rank}, rewriter.getIndexType()),
        dims);
    rewriter.replaceOpWithNewOp<tensor::ReshapeOp>(op, resultType, input,
                                                   shape);
    return success();
  }
};

/// Reads `axes` (K elements), normalizes each against `rank`, checks range
/// and repetition (messages prefixed with `opName`), and returns for each
/// of the `rank` positions whether it is one of the axes (i1).
SmallVector<Value> readAxes(OpBuilder &b, Location loc, IndexMath &m,
                            Value axes, int64_t rank, StringRef opName) {
  int64_t count = cast<RankedTensorType>(axes.getType()).getDimSize(0);
  Value inRange = m.t(true);
  SmallVector<Value> normalized;
  for (int64_t j = 0; j < count; ++j) {
    Value a = m.extract(axes, j);
    a = m.select(m.slt(a, m.c(0)), m.add(a, m.c(rank)), a);
    inRange = m.andi(inRange, m.andi(m.sge(a, m.c(0)), m.slt(a, m.c(rank))));
    normalized.push_back(a);
  }
  emitRuntimeCheck(b, loc, inRange,
                   opName + ": an axis is out of range for rank " +
                       Twine(rank));
  SmallVector<Value> isAxis;
  Value hits = m.c(0);
  for (int64_t p = 0; p < rank; ++p) {
    Value hit = m.t(false);
    for (Value a : normalized)
      hit = arith::OrIOp::create(b, loc, hit, m.eq(a, m.c(p)));
    hits = m.add(hits, m.select(hit, m.c(1), m.c(0)));
    isAxis.push_back(hit);
  }
  emitRuntimeCheck(b, loc, m.eq(hits, m.c(count)),
                   opName + ": an axis is repeated");
  return isAxis;
}

/// `values[index]` for a run-time index known to be in range.
Value selectByIndex(IndexMath &m, Value index, ArrayRef<Value> values) {
  Value result = values.back();
  for (int64_t k = int64_t(values.size()) - 2; k >= 0; --k)
    result = m.select(m.eq(index, m.c(k)), values[k], result);
  return result;
}

Value reshapeTo(OpBuilder &b, Location loc, Type resultType, Value input,
                ArrayRef<Value> dims) {
  Value shape = tensor::FromElementsOp::create(
      b, loc, RankedTensorType::get({int64_t(dims.size())}, b.getIndexType()),
      dims);
  return tensor::ReshapeOp::create(b, loc, resultType, input, shape);
}

struct DynamicUnsqueezeLowering
    : OpConversionPattern<kiln::DynamicUnsqueezeOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(kiln::DynamicUnsqueezeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    IndexMath m(rewriter, loc);
    Value input = adaptor.getInput();
    int64_t inRank = cast<RankedTensorType>(input.getType()).getRank();
    Type resultType = getTypeConverter()->convertType(op.getResult().getType());
    int64_t rank = cast<RankedTensorType>(resultType).getRank();
    SmallVector<Value> isAxis =
        readAxes(rewriter, loc, m, adaptor.getAxes(), rank, "Unsqueeze");
    SmallVector<Value> inputDims;
    for (int64_t d = 0; d < inRank; ++d)
      inputDims.push_back(m.dim(input, d));
    // Result dim p is 1 at an axis, else input dim (p - axes before p).
    SmallVector<Value> dims;
    Value before = m.c(0);
    for (int64_t p = 0; p < rank; ++p) {
      Value source =
          inRank ? selectByIndex(m, m.sub(m.c(p), before), inputDims) : m.c(1);
      dims.push_back(m.select(isAxis[p], m.c(1), source));
      before = m.add(before, m.select(isAxis[p], m.c(1), m.c(0)));
    }
    rewriter.replaceOp(op, reshapeTo(rewriter, loc, resultType, input, dims));
    return success();
  }
};

struct DynamicSqueezeLowering : OpConversionPattern<kiln::DynamicSqueezeOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(kiln::DynamicSqueezeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    IndexMath m(rewriter, loc);
    Value input = adaptor.getInput();
    int64_t inRank = cast<RankedTensorType>(input.getType()).getRank();
    Type resultType = getTypeConverter()->convertType(op.getResult().getType());
    int64_t rank = cast<RankedTensorType>(resultType).getRank();
    SmallVector<Value> isAxis =
        readAxes(rewriter, loc, m, adaptor.getAxes(), inRank, "Squeeze");
    Value onlyOnes = m.t(true);
    SmallVector<Value> inputDims, kept, position;
    Value keptBefore = m.c(0);
    for (int64_t d = 0; d < inRank; ++d) {
      inputDims.push_back(m.dim(input, d));
      onlyOnes = m.andi(onlyOnes,
                        arith::OrIOp::create(rewriter, loc, m.noti(isAxis[d]),
                                             m.eq(inputDims[d], m.c(1))));
      kept.push_back(m.noti(isAxis[d]));
      position.push_back(keptBefore);
      keptBefore = m.add(keptBefore, m.select(kept[d], m.c(1), m.c(0)));
    }
    emitRuntimeCheck(rewriter, loc, onlyOnes,
                     "Squeeze: a squeezed dim is not 1");
    // Result dim q is the q-th input dim that is not squeezed.
    SmallVector<Value> dims;
    for (int64_t q = 0; q < rank; ++q) {
      Value dim = m.c(1);
      for (int64_t d = 0; d < inRank; ++d)
        dim = m.select(m.andi(kept[d], m.eq(position[d], m.c(q))), inputDims[d],
                       dim);
      dims.push_back(dim);
    }
    rewriter.replaceOp(op, reshapeTo(rewriter, loc, resultType, input, dims));
    return success();
  }
};

struct AssertLowering : OpConversionPattern<kiln::AssertOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(kiln::AssertOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value ok = tensor::ExtractOp::create(rewriter, op.getLoc(),
                                         adaptor.getCondition(), ValueRange{});
    emitRuntimeCheck(rewriter, op.getLoc(), ok, op.getMessage());
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void mlir::kiln::populateKilnDynamicShapeToLinalgPatterns(
    RewritePatternSet &patterns, TypeConverter &typeConverter) {
  patterns.add<DynamicReshapeLowering, DynamicUnsqueezeLowering,
               DynamicSqueezeLowering, AssertLowering>(typeConverter,
                                                       patterns.getContext());
}
