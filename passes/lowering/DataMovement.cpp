//===- DataMovement.cpp - reshape, transpose, concat, slice, gather, expand
//===//
//
//   reshape    collapse_shape/expand_shape through the finest common grouping
//   transpose  linalg.transpose
//   concat     tensor.empty + one tensor.insert_slice per input
//   slice      tensor.extract_slice (positive steps); a generic whose input
//              map walks backwards (start + step * i) when a step is negative
//   gather     generic over the result, tensor.extract from the data in the
//              body; indices wrap once if negative, then clamp into range
//   expand     broadcasting generic
//
//===----------------------------------------------------------------------===//
#include "passes/lowering/DynamicShapeUtils.h"
#include "passes/lowering/LoweringUtils.h"
#include "passes/lowering/Patterns.h"

#include "dialects/kiln/KilnOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::kiln;

namespace {

SmallVector<OpFoldResult> indexAttrs(OpBuilder &b, ArrayRef<int64_t> values) {
  SmallVector<OpFoldResult> result;
  for (int64_t v : values)
    result.push_back(b.getIndexAttr(v));
  return result;
}

RankedTensorType convertedType(const TypeConverter *converter, Value v) {
  return cast<RankedTensorType>(converter->convertType(v.getType()));
}

struct ReshapeLowering : OpConversionPattern<kiln::ReshapeOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(kiln::ReshapeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, createReshape(rewriter, op.getLoc(),
                                         adaptor.getInput(), op.getShape()));
    return success();
  }
};

struct TransposeLowering : OpConversionPattern<kiln::TransposeOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(kiln::TransposeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = convertedType(getTypeConverter(), op.getResult());
    // Result dim d is input dim perm[d].
    SmallVector<Value> sizes;
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (type.isDynamicDim(d))
        sizes.push_back(tensor::DimOp::create(
            rewriter, op.getLoc(), adaptor.getInput(), op.getPerm()[d]));
    Value init = createEmptyTensor(rewriter, op.getLoc(), type, sizes);
    rewriter.replaceOp(op, linalg::TransposeOp::create(rewriter, op.getLoc(),
                                                       adaptor.getInput(), init,
                                                       op.getPerm())
                               .getResult());
    return success();
  }
};

/// Concat with run-time extents: offsets along `axis` and the other
/// extents (those of the first input) computed with tensor.dim.
Value concatRunTime(OpBuilder &b, Location loc, RankedTensorType type,
                    int64_t axis, ValueRange inputs) {
  IndexMath m(b, loc);
  int64_t rank = type.getRank();
  SmallVector<Value> sizes;
  Value total = m.c(0);
  for (Value input : inputs)
    total = m.add(total, m.dim(input, axis));
  for (int64_t d = 0; d < rank; ++d)
    if (type.isDynamicDim(d))
      sizes.push_back(d == axis ? total : m.dim(inputs.front(), d));
  // Off the axis, the inputs' run-time extents must be the result's.
  for (int64_t d = 0; d < rank; ++d) {
    if (d == axis)
      continue;
    Value extent = type.isDynamicDim(d) ? m.dim(inputs.front(), d)
                                        : m.c(type.getDimSize(d));
    Value same = m.t(true);
    for (Value input : type.isDynamicDim(d) ? inputs.drop_front() : inputs)
      if (cast<RankedTensorType>(input.getType()).isDynamicDim(d))
        same = m.andi(same, m.eq(m.dim(input, d), extent));
    if (!matchPattern(same, m_One()))
      emitRuntimeCheck(b, loc, same,
                       "Concat: the inputs differ in dim " + Twine(d) +
                           " (only the axis, " + Twine(axis) + ", may differ)");
  }
  Value result = createEmptyTensor(b, loc, type, sizes);
  Value offset = m.c(0);
  for (Value input : inputs) {
    SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0)),
        strides(rank, b.getIndexAttr(1));
    SmallVector<OpFoldResult> extents = tensor::getMixedSizes(b, loc, input);
    offsets[axis] = offset;
    result = tensor::InsertSliceOp::create(b, loc, input, result, offsets,
                                           extents, strides);
    offset = m.add(offset, m.dim(input, axis));
  }
  return result;
}

struct ConcatLowering : OpConversionPattern<kiln::ConcatOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(kiln::ConcatOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = convertedType(getTypeConverter(), op.getResult());
    int64_t axis = op.getAxis();
    if (!type.hasStaticShape()) {
      rewriter.replaceOp(
          op, concatRunTime(rewriter, loc, type, axis, adaptor.getInputs()));
      return success();
    }
    Value result = createEmptyTensor(rewriter, loc, type.getShape(),
                                     type.getElementType());
    SmallVector<int64_t> offsets(type.getRank(), 0);
    SmallVector<int64_t> strides(type.getRank(), 1);
    for (Value input : adaptor.getInputs()) {
      auto inputType = cast<RankedTensorType>(input.getType());
      if (inputType.getNumElements() == 0)
        continue;
      result = tensor::InsertSliceOp::create(
          rewriter, loc, input, result, indexAttrs(rewriter, offsets),
          indexAttrs(rewriter, inputType.getShape()),
          indexAttrs(rewriter, strides));
      offsets[axis] += inputType.getDimSize(axis);
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct SliceLowering : OpConversionPattern<kiln::SliceOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(kiln::SliceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = convertedType(getTypeConverter(), op.getResult());
    ArrayRef<int64_t> starts = op.getStarts(), steps = op.getSteps();
    if (type.hasStaticShape() && type.getNumElements() == 0) {
      rewriter.replaceOp(op, createEmptyTensor(rewriter, loc, type.getShape(),
                                               type.getElementType()));
      return success();
    }
    if (llvm::all_of(steps, [](int64_t s) { return s > 0; })) {
      // Run-time dims are taken whole.
      SmallVector<OpFoldResult> sizes;
      for (int64_t d = 0; d < type.getRank(); ++d)
        sizes.push_back(
            type.isDynamicDim(d)
                ? OpFoldResult(tensor::DimOp::create(rewriter, loc,
                                                     adaptor.getInput(), d))
                : OpFoldResult(rewriter.getIndexAttr(type.getDimSize(d))));
      rewriter.replaceOp(op, tensor::ExtractSliceOp::create(
                                 rewriter, loc, type, adaptor.getInput(),
                                 indexAttrs(rewriter, starts), sizes,
                                 indexAttrs(rewriter, steps)));
      return success();
    }
    // Result element i reads input element start + step * i in every dim;
    // negative coefficients are fine in an indexing map.
    MLIRContext *ctx = rewriter.getContext();
    SmallVector<AffineExpr> exprs;
    for (int64_t d = 0; d < type.getRank(); ++d)
      exprs.push_back(getAffineDimExpr(d, ctx) * steps[d] + starts[d]);
    BroadcastOperand input = {adaptor.getInput(),
                              AffineMap::get(type.getRank(), 0, exprs, ctx)};
    rewriter.replaceOp(
        op, createParallelGeneric(rewriter, loc, type, input,
                                  [](OpBuilder &, Location, ValueRange args) {
                                    return args[0];
                                  }));
    return success();
  }
};

struct GatherLowering : OpConversionPattern<kiln::GatherOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(kiln::GatherOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    auto type = convertedType(getTypeConverter(), op.getResult());
    Value data = adaptor.getData();
    auto dataType = cast<RankedTensorType>(data.getType());
    int64_t axis = op.getAxis();
    int64_t indexRank =
        cast<RankedTensorType>(op.getIndices().getType()).getRank();
    int64_t axisSize = dataType.getDimSize(axis);
    bool unsignedIndices = isUnsignedLike(getElementType(op.getIndices()));

    // Result dims: data[:axis], indices..., data[axis+1:].
    SmallVector<int64_t> indexDims;
    for (int64_t d = axis; d < axis + indexRank; ++d)
      indexDims.push_back(d);
    BroadcastOperand indices = {adaptor.getIndices(),
                                mapOfDims(ctx, type.getRank(), indexDims)};
    // Result extents: data's before and after the axis, the indices' in
    // between; the axis extent bounds the indices.
    SmallVector<Value> sizes;
    for (int64_t d = 0; d < type.getRank(); ++d) {
      if (!type.isDynamicDim(d))
        continue;
      if (d >= axis && d < axis + indexRank)
        sizes.push_back(tensor::DimOp::create(rewriter, loc,
                                              adaptor.getIndices(), d - axis));
      else
        sizes.push_back(tensor::DimOp::create(
            rewriter, loc, data, d < axis ? d : d - indexRank + 1));
    }
    Value axisExtent =
        ShapedType::isDynamic(axisSize)
            ? Value(tensor::DimOp::create(rewriter, loc, data, axis))
            : Value();
    auto body = [&](OpBuilder &b, Location l, ValueRange args) -> Value {
      Value index = unsignedIndices ? Value(arith::IndexCastUIOp::create(
                                          b, l, b.getIndexType(), args[0]))
                                    : Value(arith::IndexCastOp::create(
                                          b, l, b.getIndexType(), args[0]));
      if (!unsignedIndices) {
        Value size =
            axisExtent ? axisExtent
                       : Value(arith::ConstantIndexOp::create(b, l, axisSize));
        Value zero = arith::ConstantIndexOp::create(b, l, 0);
        Value negative =
            arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, index, zero);
        index = arith::SelectOp::create(
            b, l, negative, arith::AddIOp::create(b, l, index, size), index);
        index = arith::MaxSIOp::create(b, l, index, zero);
      }
      Value last =
          axisExtent
              ? Value(arith::SubIOp::create(
                    b, l, axisExtent, arith::ConstantIndexOp::create(b, l, 1)))
              : Value(arith::ConstantIndexOp::create(b, l, axisSize - 1));
      // Unsigned: an index with its top bit set is huge, not negative.
      index = unsignedIndices
                  ? Value(arith::MinUIOp::create(b, l, index, last))
                  : Value(arith::MinSIOp::create(b, l, index, last));

      SmallVector<Value> coords;
      for (int64_t d = 0; d < axis; ++d)
        coords.push_back(linalg::IndexOp::create(b, l, d));
      coords.push_back(index);
      for (int64_t d = axis + indexRank; d < type.getRank(); ++d)
        coords.push_back(linalg::IndexOp::create(b, l, d));
      return tensor::ExtractOp::create(b, l, data, coords);
    };
    rewriter.replaceOp(
        op, createParallelGeneric(rewriter, loc, type, indices, sizes, body));
    return success();
  }
};

struct ExpandLowering : OpConversionPattern<kiln::ExpandOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(kiln::ExpandOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = convertedType(getTypeConverter(), op.getResult());
    rewriter.replaceOp(op, createElementwiseGeneric(
                               rewriter, op.getLoc(), type, adaptor.getInput(),
                               [](OpBuilder &, Location, ValueRange args) {
                                 return args[0];
                               }));
    return success();
  }
};

} // namespace

void mlir::kiln::populateKilnDataMovementToLinalgPatterns(
    RewritePatternSet &patterns, TypeConverter &converter) {
  patterns.add<ReshapeLowering, TransposeLowering, ConcatLowering,
               SliceLowering, GatherLowering, ExpandLowering>(
      converter, patterns.getContext());
}
