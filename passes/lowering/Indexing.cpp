//===- Indexing.cpp - kiln indexing ops -> linalg on tensors --------------===//
//
// Gathers and index remappings are one all-parallel linalg.generic over the
// result whose body computes the source position and reads it with
// tensor.extract:
//
//   gather_elements   position of the result element, axis coordinate read
//                     from indices
//   gather_nd         leading coordinates read from the index tuple
//   reverse_sequence  time coordinate mirrored below the batch's length
//   pad               constant: tensor.pad; edge/reflect/wrap: the border
//                     coordinate folded back into the input
//   trilu             select between the element and zero
//
// Scatters and TopK are in IndexingScatter.cpp; resize has its own
// file (IndexingResize.cpp), as does grid_sample (IndexingGridSample.cpp).
//
//===----------------------------------------------------------------------===//
#include "passes/lowering/DynamicShapeUtils.h"
#include "passes/lowering/IndexingCommon.h"
#include "passes/lowering/LoweringUtils.h"
#include "passes/lowering/Patterns.h"

#include "dialects/kiln/KilnOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

using namespace mlir;
using namespace mlir::kiln;

Value mlir::kiln::normalizeIndex(OpBuilder &b, Location l, Value index,
                                 bool isUnsigned, int64_t size) {
  Type indexType = b.getIndexType();
  Value last =
      arith::ConstantIndexOp::create(b, l, std::max<int64_t>(size - 1, 0));
  if (isUnsigned) {
    // An unsigned index with its top bit set is huge, not negative.
    index = arith::IndexCastUIOp::create(b, l, indexType, index);
    return arith::MinUIOp::create(b, l, index, last);
  }
  index = arith::IndexCastOp::create(b, l, indexType, index);
  Value zero = arith::ConstantIndexOp::create(b, l, 0);
  Value sizeValue = arith::ConstantIndexOp::create(b, l, size);
  Value negative =
      arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, index, zero);
  index = arith::SelectOp::create(
      b, l, negative, arith::AddIOp::create(b, l, index, sizeValue), index);
  index = arith::MaxSIOp::create(b, l, index, zero);
  return arith::MinSIOp::create(b, l, index, last);
}

namespace {

RankedTensorType convertedType(const TypeConverter *converter, Value v) {
  return cast<RankedTensorType>(converter->convertType(v.getType()));
}

SmallVector<Value> loopIndices(OpBuilder &b, Location l, int64_t count) {
  SmallVector<Value> indices;
  for (int64_t d = 0; d < count; ++d)
    indices.push_back(linalg::IndexOp::create(b, l, d));
  return indices;
}

struct GatherElementsLowering : OpConversionPattern<GatherElementsOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(GatherElementsOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = convertedType(getTypeConverter(), op.getResult());
    Value data = adaptor.getData();
    int64_t axis = op.getAxis();
    int64_t axisSize = cast<RankedTensorType>(data.getType()).getDimSize(axis);
    bool isUnsigned = isUnsignedLike(getElementType(op.getIndices()));
    BroadcastOperand indices = {
        adaptor.getIndices(), rewriter.getMultiDimIdentityMap(type.getRank())};
    auto body = [&](OpBuilder &b, Location l, ValueRange args) -> Value {
      SmallVector<Value> coords = loopIndices(b, l, type.getRank());
      coords[axis] = normalizeIndex(b, l, args[0], isUnsigned, axisSize);
      return tensor::ExtractOp::create(b, l, data, coords);
    };
    rewriter.replaceOp(
        op, createParallelGeneric(rewriter, op.getLoc(), type, indices, body));
    return success();
  }
};

struct GatherNDLowering : OpConversionPattern<GatherNDOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(GatherNDOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = convertedType(getTypeConverter(), op.getResult());
    Value data = adaptor.getData(), indices = adaptor.getIndices();
    auto dataShape = cast<RankedTensorType>(data.getType()).getShape();
    auto indicesShape = cast<RankedTensorType>(indices.getType()).getShape();
    int64_t batch = op.getBatchDims();
    int64_t tupleDims = indicesShape.size() - 1,
            tupleSize = indicesShape.back();
    bool isUnsigned = isUnsignedLike(getElementType(op.getIndices()));
    // Result dims: indices.shape[:-1] (the first `batch` shared with data),
    // then the data dims after the addressed ones.
    auto body = [&](OpBuilder &b, Location l, ValueRange) -> Value {
      SmallVector<Value> loops = loopIndices(b, l, type.getRank());
      SmallVector<Value> tuple(loops.begin(), loops.begin() + tupleDims);
      SmallVector<Value> coords(loops.begin(), loops.begin() + batch);
      for (int64_t j = 0; j < tupleSize; ++j) {
        tuple.push_back(arith::ConstantIndexOp::create(b, l, j));
        Value index = tensor::ExtractOp::create(b, l, indices, tuple);
        tuple.pop_back();
        coords.push_back(
            normalizeIndex(b, l, index, isUnsigned, dataShape[batch + j]));
      }
      coords.append(loops.begin() + tupleDims, loops.end());
      return tensor::ExtractOp::create(b, l, data, coords);
    };
    rewriter.replaceOp(
        op, createParallelGeneric(rewriter, op.getLoc(), type, {}, body));
    return success();
  }
};

struct TriluLowering : OpConversionPattern<TriluOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(TriluOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = convertedType(getTypeConverter(), op.getResult());
    int64_t rank = type.getRank();
    Value k =
        tensor::ExtractOp::create(rewriter, loc, adaptor.getK(), ValueRange{});
    bool upper = op.getUpper();
    BroadcastOperand input = {adaptor.getInput(),
                              rewriter.getMultiDimIdentityMap(rank)};
    auto body = [&](OpBuilder &b, Location l, ValueRange args) -> Value {
      Value row = linalg::IndexOp::create(b, l, rank - 2);
      Value col = linalg::IndexOp::create(b, l, rank - 1);
      Value offset = arith::IndexCastOp::create(
          b, l, b.getI64Type(), arith::SubIOp::create(b, l, col, row));
      // Upper keeps col - row >= k, lower keeps col - row <= k.
      Value keep = arith::CmpIOp::create(
          b, l, upper ? arith::CmpIPredicate::sge : arith::CmpIPredicate::sle,
          offset, k);
      Value zero = createScalarConstant(b, l, type.getElementType(), 0);
      return arith::SelectOp::create(b, l, keep, args[0], zero);
    };
    rewriter.replaceOp(op,
                       createParallelGeneric(rewriter, loc, type, input, body));
    return success();
  }
};

struct ReverseSequenceLowering : OpConversionPattern<ReverseSequenceOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(ReverseSequenceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = convertedType(getTypeConverter(), op.getResult());
    Value input = adaptor.getInput(), lengths = adaptor.getLengths();
    int64_t batchAxis = op.getBatchAxis(), timeAxis = op.getTimeAxis();
    int64_t steps = type.getDimSize(timeAxis);
    bool isUnsigned = isUnsignedLike(getElementType(op.getLengths()));
    auto body = [&](OpBuilder &b, Location l, ValueRange) -> Value {
      SmallVector<Value> coords = loopIndices(b, l, type.getRank());
      Value length = tensor::ExtractOp::create(b, l, lengths,
                                               ValueRange{coords[batchAxis]});
      // normalizeIndex clamps into [0, steps - 1]; lengths live in
      // [0, steps], so clamp by hand.
      Type indexType = b.getIndexType();
      length =
          isUnsigned
              ? Value(arith::IndexCastUIOp::create(b, l, indexType, length))
              : Value(arith::IndexCastOp::create(b, l, indexType, length));
      length = arith::MaxSIOp::create(b, l, length,
                                      arith::ConstantIndexOp::create(b, l, 0));
      length = arith::MinSIOp::create(
          b, l, length, arith::ConstantIndexOp::create(b, l, steps));
      Value t = coords[timeAxis];
      Value inside =
          arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, t, length);
      Value mirrored = arith::SubIOp::create(
          b, l,
          arith::SubIOp::create(b, l, length,
                                arith::ConstantIndexOp::create(b, l, 1)),
          t);
      coords[timeAxis] = arith::SelectOp::create(b, l, inside, mirrored, t);
      return tensor::ExtractOp::create(b, l, input, coords);
    };
    rewriter.replaceOp(
        op, createParallelGeneric(rewriter, op.getLoc(), type, {}, body));
    return success();
  }
};

/// Folds an out-of-range coordinate `i` (as index) back into [0, size);
/// `size` (index, at least 1) may be a run-time extent.
Value foldIntoRange(OpBuilder &b, Location l, Value i, Value size,
                    StringRef mode) {
  auto constant = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, l, v);
  };
  // Remainder that is never negative.
  auto positiveMod = [&](Value v, Value n) -> Value {
    Value r = arith::RemSIOp::create(b, l, v, n);
    return arith::RemSIOp::create(b, l, arith::AddIOp::create(b, l, r, n), n);
  };
  Value last = arith::SubIOp::create(b, l, size, constant(1));
  if (mode == "edge")
    return arith::MinSIOp::create(
        b, l, arith::MaxSIOp::create(b, l, i, constant(0)), last);
  if (mode == "wrap")
    return positiveMod(i, size);
  // reflect: the sequence 0 1 .. n-1 n-2 .. 1 repeats with period 2(n-1)
  // (a period of 1 for n = 1: always 0).
  Value period = arith::MaxSIOp::create(
      b, l, arith::AddIOp::create(b, l, last, last), constant(1));
  Value m = positiveMod(i, period);
  Value low = arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, m, size);
  return arith::SelectOp::create(b, l, low, m,
                                 arith::SubIOp::create(b, l, period, m));
}

/// A constant pad with `interior` values between elements: the result
/// filled with `value`, the input inserted at the begin pads with strides
/// interior + 1. Run-time extents n give n + (n - 1) * interior + pads.
Value spreadInto(OpBuilder &b, Location loc, RankedTensorType type, Value input,
                 ArrayRef<int64_t> pads, ArrayRef<int64_t> interior,
                 Value value) {
  int64_t rank = type.getRank();
  SmallVector<Value> resultSizes;
  SmallVector<OpFoldResult> offsets, sizes, strides;
  for (int64_t d = 0; d < rank; ++d) {
    OpFoldResult extent = tensor::getMixedSize(b, loc, input, d);
    offsets.push_back(b.getIndexAttr(pads[d]));
    sizes.push_back(extent);
    strides.push_back(b.getIndexAttr(interior[d] + 1));
    if (!type.isDynamicDim(d))
      continue;
    // n + max(n - 1, 0) * interior + begin + end.
    auto index = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    Value n = cast<Value>(extent);
    Value gaps = arith::MaxSIOp::create(
        b, loc, arith::SubIOp::create(b, loc, n, index(1)), index(0));
    Value size = arith::AddIOp::create(
        b, loc, n, arith::MulIOp::create(b, loc, gaps, index(interior[d])));
    resultSizes.push_back(
        arith::AddIOp::create(b, loc, size, index(pads[d] + pads[rank + d])));
  }
  Value init = createEmptyTensor(b, loc, type, resultSizes);
  Value filled = linalg::FillOp::create(b, loc, value, init).getResult(0);
  return tensor::InsertSliceOp::create(b, loc, input, filled, offsets, sizes,
                                       strides);
}

struct PadLowering : OpConversionPattern<PadOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(PadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = convertedType(getTypeConverter(), op.getResult());
    Value input = adaptor.getInput();
    auto inputShape = cast<RankedTensorType>(input.getType()).getShape();
    int64_t rank = type.getRank();
    ArrayRef<int64_t> pads = op.getPads();
    StringRef mode = op.getMode();
    if (mode == "constant" ||
        (type.hasStaticShape() && type.getNumElements() == 0)) {
      SmallVector<OpFoldResult> low, high;
      for (int64_t d = 0; d < rank; ++d) {
        low.push_back(rewriter.getIndexAttr(pads[d]));
        high.push_back(rewriter.getIndexAttr(pads[rank + d]));
      }
      Value value = tensor::ExtractOp::create(rewriter, loc, adaptor.getValue(),
                                              ValueRange{});
      if (auto interior = op.getInterior()) {
        rewriter.replaceOp(
            op, spreadInto(rewriter, loc, type, input, pads, *interior, value));
        return success();
      }
      rewriter.replaceOp(op, tensor::PadOp::create(rewriter, loc, type, input,
                                                   low, high, value));
      return success();
    }
    // Run-time extents: the result's are the input's plus the pads, and
    // the input must hold an element to repeat.
    SmallVector<Value> extents, resultSizes;
    for (int64_t d = 0; d < rank; ++d) {
      extents.push_back(
          ShapedType::isDynamic(inputShape[d])
              ? Value(tensor::DimOp::create(rewriter, loc, input, d))
              : arith::ConstantIndexOp::create(rewriter, loc, inputShape[d]));
      if (!ShapedType::isDynamic(inputShape[d]))
        continue;
      Value extra = arith::ConstantIndexOp::create(rewriter, loc,
                                                   pads[d] + pads[rank + d]);
      resultSizes.push_back(
          arith::AddIOp::create(rewriter, loc, extents[d], extra));
      if (pads[d] == 0 && pads[rank + d] == 0)
        continue; // nothing to repeat: an empty dim stays empty
      Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
      emitRuntimeCheck(rewriter, loc,
                       arith::CmpIOp::create(rewriter, loc,
                                             arith::CmpIPredicate::sgt,
                                             extents[d], zero),
                       "Pad: " + mode + " padding of dim " + Twine(d) +
                           ", whose run-time extent is 0");
    }
    auto body = [&](OpBuilder &b, Location l, ValueRange) -> Value {
      SmallVector<Value> coords = loopIndices(b, l, rank);
      for (int64_t d = 0; d < rank; ++d) {
        if (pads[d] == 0 && pads[rank + d] == 0)
          continue;
        Value shifted = arith::SubIOp::create(
            b, l, coords[d], arith::ConstantIndexOp::create(b, l, pads[d]));
        coords[d] = foldIntoRange(b, l, shifted, extents[d], mode);
      }
      return tensor::ExtractOp::create(b, l, input, coords);
    };
    rewriter.replaceOp(
        op, createParallelGeneric(rewriter, loc, type, {}, resultSizes, body));
    return success();
  }
};

} // namespace

void mlir::kiln::populateKilnIndexingToLinalgPatterns(
    RewritePatternSet &patterns, TypeConverter &typeConverter) {
  patterns.add<GatherElementsLowering, GatherNDLowering, TriluLowering,
               ReverseSequenceLowering, PadLowering>(typeConverter,
                                                     patterns.getContext());
  populateKilnScatterToLinalgPatterns(patterns, typeConverter);
  populateKilnResizeToLinalgPatterns(patterns, typeConverter);
  populateKilnGridSampleToLinalgPatterns(patterns, typeConverter);
}
