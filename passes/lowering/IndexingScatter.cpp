//===- IndexingScatter.cpp - scatters and TopK -> linalg.generic ----------===//
//
// A scatter writes where its indices say, which a linalg.generic cannot do
// (its outputs are indexed by the loops), and kiln-lower-to-linalg's
// conversion target only admits linalg/tensor/arith/math, so scf loops are
// not an option here either. Each op becomes instead a generic over the
// *result* with trailing reduction loops over the candidates that may land
// on each result element; the body compares the candidate's target with the
// element's position and selects:
//
//   scatter_elements  candidates along `axis` of updates: N_out * U_axis
//   scatter_nd        candidates are the index tuples:  N_out * N_tuples
//   topk              rank of every element (how many precede it: better
//                     values, or equal ones earlier), n^2 per row; then the
//                     result slot r takes the element of rank r, k * n per row
//
// Reduction loops run in order, so "later updates win" (reduction none) and
// the ONNX order of combining hold. Cost is quadratic where a loop over the
// updates would be linear; see the note in populateKilnScatterToLinalgPatterns.
//
//===----------------------------------------------------------------------===//
#include "passes/lowering/DynamicShapeUtils.h"
#include "passes/lowering/IndexingCommon.h"
#include "passes/lowering/LoweringUtils.h"

#include "dialects/kiln/KilnOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::kiln;

namespace {
/// Whether `type` is statically known to hold no element (a run-time
/// extent may still be 0; the loops then run no iteration).
bool isEmpty(RankedTensorType type) {
  return llvm::is_contained(type.getShape(), 0);
}

using MultiScalarBuilder = function_ref<SmallVector<Value>(
    OpBuilder &, Location, ValueRange /*accumulators*/)>;

/// A generic whose first `inits[0].rank` loops are parallel (the result) and
/// whose `reductionSizes` trailing loops are reductions. No inputs: the body
/// reads with tensor.extract and gets the accumulators.
SmallVector<Value> createResultReduction(OpBuilder &b, Location loc,
                                         ValueRange inits,
                                         ArrayRef<int64_t> reductionSizes,
                                         MultiScalarBuilder body) {
  auto type = cast<RankedTensorType>(inits.front().getType());
  unsigned rank = type.getRank(), numLoops = rank + reductionSizes.size();
  SmallVector<int64_t> resultDims;
  for (unsigned d = 0; d < rank; ++d)
    resultDims.push_back(d);
  SmallVector<AffineMap> maps(inits.size(),
                              mapOfDims(b.getContext(), numLoops, resultDims));
  SmallVector<utils::IteratorType> iterators = parallelIterators(numLoops);
  for (unsigned d = rank; d < numLoops; ++d)
    iterators[d] = utils::IteratorType::reduction;
  // linalg.generic takes its loop sizes from operand shapes; the reduction
  // extents come from an unused input shaped like them.
  SmallVector<Value> inputs;
  if (!reductionSizes.empty()) {
    SmallVector<int64_t> reductionDims;
    for (unsigned d = rank; d < numLoops; ++d)
      reductionDims.push_back(d);
    inputs.push_back(createEmptyTensor(b, loc, reductionSizes, b.getI8Type()));
    maps.insert(maps.begin(),
                mapOfDims(b.getContext(), numLoops, reductionDims));
  }
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange(inits), inputs, inits, maps, iterators,
      [&](OpBuilder &nested, Location l, ValueRange args) {
        linalg::YieldOp::create(
            nested, l, body(nested, l, args.drop_front(inputs.size())));
      });
  return generic.getResults();
}

SmallVector<Value> loopIndices(OpBuilder &b, Location l, int64_t first,
                               int64_t count) {
  SmallVector<Value> indices;
  for (int64_t d = first; d < first + count; ++d)
    indices.push_back(linalg::IndexOp::create(b, l, d));
  return indices;
}

Value indexConstant(OpBuilder &b, Location l, int64_t v) {
  return arith::ConstantIndexOp::create(b, l, v);
}

Value equalIndex(OpBuilder &b, Location l, Value x, Value y) {
  return arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, x, y);
}

/// The value a scatter stores given the current element and the update.
Value combine(OpBuilder &b, Location l, StringRef reduction, Value current,
              Value update, Type kilnType) {
  bool isFloat = isa<FloatType>(update.getType());
  bool isBool = update.getType().isInteger(1);
  if (reduction == "add")
    return isFloat  ? Value(arith::AddFOp::create(b, l, current, update))
           : isBool ? Value(arith::OrIOp::create(b, l, current, update))
                    : Value(arith::AddIOp::create(b, l, current, update));
  if (reduction == "mul")
    return isFloat  ? Value(arith::MulFOp::create(b, l, current, update))
           : isBool ? Value(arith::AndIOp::create(b, l, current, update))
                    : Value(arith::MulIOp::create(b, l, current, update));
  if (reduction == "max")
    return createMax(b, l, current, update, kilnType);
  if (reduction == "min")
    return createMin(b, l, current, update, kilnType);
  return update;
}

struct ScatterElementsLowering : OpConversionPattern<ScatterElementsOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(ScatterElementsOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value data = adaptor.getData(), indices = adaptor.getIndices(),
          updates = adaptor.getUpdates();
    auto dataShape = cast<RankedTensorType>(data.getType()).getShape();
    auto updateType = cast<RankedTensorType>(updates.getType());
    if (isEmpty(updateType)) {
      rewriter.replaceOp(op, data);
      return success();
    }
    auto updateShape = updateType.getShape();
    int64_t rank = dataShape.size(), axis = op.getAxis();
    bool isUnsigned = isUnsignedLike(getElementType(op.getIndices()));
    Type kilnType = getElementType(op.getData());
    StringRef reduction = op.getReduction();
    auto body = [&](OpBuilder &b, Location l,
                    ValueRange acc) -> SmallVector<Value> {
      SmallVector<Value> coords = loopIndices(b, l, 0, rank);
      // The candidate update shares the element's coordinates except along
      // axis; elements beyond the updates' extent have no candidate.
      SmallVector<Value> at(coords);
      at[axis] = linalg::IndexOp::create(b, l, rank);
      Value match;
      for (int64_t d = 0; d < rank; ++d) {
        if (d == axis || updateShape[d] == dataShape[d])
          continue;
        Value last = indexConstant(b, l, updateShape[d] - 1);
        Value inside = arith::CmpIOp::create(b, l, arith::CmpIPredicate::ule,
                                             coords[d], last);
        match = match ? arith::AndIOp::create(b, l, match, inside) : inside;
        at[d] = arith::MinUIOp::create(b, l, coords[d], last);
      }
      Value index =
          normalizeIndex(b, l, tensor::ExtractOp::create(b, l, indices, at),
                         isUnsigned, dataShape[axis]);
      Value hit = equalIndex(b, l, index, coords[axis]);
      match = match ? arith::AndIOp::create(b, l, match, hit) : hit;
      Value update = tensor::ExtractOp::create(b, l, updates, at);
      Value stored = combine(b, l, reduction, acc[0], update, kilnType);
      return {arith::SelectOp::create(b, l, match, stored, acc[0])};
    };
    rewriter.replaceOp(op, createResultReduction(rewriter, op.getLoc(), data,
                                                 {updateShape[axis]}, body));
    return success();
  }
};

struct ScatterNDLowering : OpConversionPattern<ScatterNDOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(ScatterNDOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value data = adaptor.getData(), indices = adaptor.getIndices(),
          updates = adaptor.getUpdates();
    auto dataShape = cast<RankedTensorType>(data.getType()).getShape();
    auto indicesType = cast<RankedTensorType>(indices.getType());
    if (isEmpty(indicesType) ||
        isEmpty(cast<RankedTensorType>(updates.getType()))) {
      rewriter.replaceOp(op, data);
      return success();
    }
    auto tupleShape = indicesType.getShape().drop_back();
    int64_t rank = dataShape.size(), tupleDims = tupleShape.size(),
            tupleSize = indicesType.getShape().back();
    bool isUnsigned = isUnsignedLike(getElementType(op.getIndices()));
    Type kilnType = getElementType(op.getData());
    StringRef reduction = op.getReduction();
    auto body = [&](OpBuilder &b, Location l,
                    ValueRange acc) -> SmallVector<Value> {
      SmallVector<Value> coords = loopIndices(b, l, 0, rank);
      SmallVector<Value> tuple = loopIndices(b, l, rank, tupleDims);
      Value match;
      for (int64_t j = 0; j < tupleSize; ++j) {
        tuple.push_back(indexConstant(b, l, j));
        Value index = normalizeIndex(
            b, l, tensor::ExtractOp::create(b, l, indices, tuple), isUnsigned,
            dataShape[j]);
        tuple.pop_back();
        Value hit = equalIndex(b, l, index, coords[j]);
        match = match ? arith::AndIOp::create(b, l, match, hit) : hit;
      }
      // updates[tuple position, element's trailing coordinates]
      llvm::append_range(tuple, ArrayRef(coords).drop_front(tupleSize));
      Value update = tensor::ExtractOp::create(b, l, updates, tuple);
      Value stored = combine(b, l, reduction, acc[0], update, kilnType);
      return {arith::SelectOp::create(b, l, match, stored, acc[0])};
    };
    rewriter.replaceOp(op, createResultReduction(rewriter, op.getLoc(), data,
                                                 tupleShape, body));
    return success();
  }
};

struct TopKLowering : OpConversionPattern<TopKOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(TopKOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    auto inputType = cast<RankedTensorType>(input.getType());
    auto valuesType = cast<RankedTensorType>(
        getTypeConverter()->convertType(op.getValues().getType()));
    Type elementType = valuesType.getElementType();
    Type kilnType = getElementType(op.getInput());
    int64_t rank = inputType.getRank(), axis = op.getAxis();
    int64_t n = inputType.getDimSize(axis);
    bool largest = op.getLargest();
    Type i64 = rewriter.getI64Type();

    auto better = [&](OpBuilder &b, Location l, Value x, Value y) -> Value {
      if (isa<FloatType>(elementType))
        return arith::CmpFOp::create(b, l,
                                     largest ? arith::CmpFPredicate::OGT
                                             : arith::CmpFPredicate::OLT,
                                     x, y);
      bool isUnsigned = isUnsignedLike(kilnType);
      auto predicate = largest ? (isUnsigned ? arith::CmpIPredicate::ugt
                                             : arith::CmpIPredicate::sgt)
                               : (isUnsigned ? arith::CmpIPredicate::ult
                                             : arith::CmpIPredicate::slt);
      return arith::CmpIOp::create(b, l, predicate, x, y);
    };
    auto equal = [&](OpBuilder &b, Location l, Value x, Value y) -> Value {
      if (isa<FloatType>(elementType))
        return arith::CmpFOp::create(b, l, arith::CmpFPredicate::OEQ, x, y);
      return arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, x, y);
    };

    // rank[i] = #{j : x[j] better than x[i], or equal with j < i}: distinct
    // per row, so it is the element's position in the stable sorted order.
    Value zeros = createFilledTensor(rewriter, loc, inputType.getShape(),
                                     rewriter.getI64IntegerAttr(0));
    auto rankBody = [&](OpBuilder &b, Location l,
                        ValueRange acc) -> SmallVector<Value> {
      SmallVector<Value> coords = loopIndices(b, l, 0, rank);
      Value self = tensor::ExtractOp::create(b, l, input, coords);
      Value i = coords[axis];
      coords[axis] = linalg::IndexOp::create(b, l, rank);
      Value other = tensor::ExtractOp::create(b, l, input, coords);
      Value earlier = arith::CmpIOp::create(b, l, arith::CmpIPredicate::ult,
                                            coords[axis], i);
      Value precedes = arith::OrIOp::create(
          b, l, better(b, l, other, self),
          arith::AndIOp::create(b, l, equal(b, l, other, self), earlier));
      Value one = arith::ExtUIOp::create(b, l, i64, precedes);
      return {arith::AddIOp::create(b, l, acc[0], one)};
    };
    Value ranks =
        createResultReduction(rewriter, loc, zeros, {n}, rankBody).front();

    // A run-time k sizes the results; outside [0, n] the run fails.
    SmallVector<Value> kSize;
    if (Value kValue = adaptor.getKValue()) {
      Value k = tensor::ExtractOp::create(rewriter, loc, kValue, ValueRange{});
      Value low = arith::CmpIOp::create(
          rewriter, loc, arith::CmpIPredicate::sge, k,
          arith::ConstantOp::create(rewriter, loc,
                                    rewriter.getI64IntegerAttr(0)));
      Value high = arith::CmpIOp::create(
          rewriter, loc, arith::CmpIPredicate::sle, k,
          arith::ConstantOp::create(rewriter, loc,
                                    rewriter.getI64IntegerAttr(n)));
      emitRuntimeCheck(rewriter, loc,
                       arith::AndIOp::create(rewriter, loc, low, high),
                       "TopK: k is out of range for a dim of " + Twine(n));
      kSize.push_back(arith::IndexCastOp::create(rewriter, loc,
                                                 rewriter.getIndexType(), k));
    }
    Value values = createFilledTensor(rewriter, loc, valuesType.getShape(),
                                      kSize, rewriter.getZeroAttr(elementType));
    Value indices = createFilledTensor(rewriter, loc, valuesType.getShape(),
                                       kSize, rewriter.getI64IntegerAttr(0));
    auto pickBody = [&](OpBuilder &b, Location l,
                        ValueRange acc) -> SmallVector<Value> {
      SmallVector<Value> coords = loopIndices(b, l, 0, rank);
      Value slot = arith::IndexCastOp::create(b, l, i64, coords[axis]);
      Value i = linalg::IndexOp::create(b, l, rank);
      coords[axis] = i;
      Value r = tensor::ExtractOp::create(b, l, ranks, coords);
      Value match =
          arith::CmpIOp::create(b, l, arith::CmpIPredicate::eq, r, slot);
      Value x = tensor::ExtractOp::create(b, l, input, coords);
      Value index = arith::IndexCastOp::create(b, l, i64, i);
      return {arith::SelectOp::create(b, l, match, x, acc[0]),
              arith::SelectOp::create(b, l, match, index, acc[1])};
    };
    rewriter.replaceOp(
        op,
        createResultReduction(rewriter, loc, {values, indices}, {n}, pickBody));
    return success();
  }
};

} // namespace

void mlir::kiln::populateKilnScatterToLinalgPatterns(
    RewritePatternSet &patterns, TypeConverter &typeConverter) {
  // Linear-time versions (scf.for over the updates, tensor.insert) need scf
  // to be legal in kiln-lower-to-linalg's conversion target.
  patterns.add<ScatterElementsLowering, ScatterNDLowering, TopKLowering>(
      typeConverter, patterns.getContext());
}
