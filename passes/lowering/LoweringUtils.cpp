//===- LoweringUtils.cpp - Shared pieces of the kiln -> linalg lowering ---===//
#include "passes/lowering/LoweringUtils.h"
#include "passes/lowering/DynamicShapeUtils.h"

#include "dialects/kiln/KilnTypes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::kiln;

KilnTypeConverter::KilnTypeConverter() {
  // Tried last-registered first: tensors recurse into their element type.
  addConversion([](Type type) { return type; });
  addConversion([](IntegerType type) -> Type {
    if (type.isUnsigned())
      return IntegerType::get(type.getContext(), type.getWidth());
    return type;
  });
  // A string element is the address of its text (abi.h).
  addConversion([](StringType type) -> Type {
    return IntegerType::get(type.getContext(), 64);
  });
  addConversion([this](RankedTensorType type) -> Type {
    Type element = convertType(type.getElementType());
    return element ? type.clone(element) : Type();
  });
}

Type mlir::kiln::getAccumulatorType(Type elementType) {
  if (elementType.isF16() || elementType.isBF16())
    return Float32Type::get(elementType.getContext());
  return elementType;
}

SmallVector<utils::IteratorType> mlir::kiln::parallelIterators(unsigned count) {
  return SmallVector<utils::IteratorType>(count, utils::IteratorType::parallel);
}

Value mlir::kiln::createEmptyTensor(OpBuilder &b, Location loc,
                                    ArrayRef<int64_t> shape, Type elementType) {
  return tensor::EmptyOp::create(b, loc, shape, elementType);
}

Value mlir::kiln::createEmptyTensor(OpBuilder &b, Location loc,
                                    RankedTensorType type,
                                    ValueRange dynamicSizes) {
  return tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType(),
                                 dynamicSizes);
}

SmallVector<Value>
mlir::kiln::dynamicSizesFromInputs(OpBuilder &b, Location loc,
                                   RankedTensorType resultType,
                                   ArrayRef<BroadcastOperand> inputs) {
  SmallVector<Value> sizes;
  for (int64_t d = 0; d < resultType.getRank(); ++d) {
    if (!resultType.isDynamicDim(d))
      continue;
    Value size;
    for (const BroadcastOperand &input : inputs) {
      auto position =
          input.map.getResultPosition(getAffineDimExpr(d, b.getContext()));
      if (!position)
        continue;
      auto type = cast<RankedTensorType>(input.value.getType());
      if (!type.isDynamicDim(*position) && type.getDimSize(*position) == 1)
        continue; // broadcast along d
      size = tensor::DimOp::create(b, loc, input.value, *position);
      break;
    }
    if (!size) {
      emitError(loc) << "internal error: no operand gives the run-time "
                        "extent of result dim "
                     << d;
      size = arith::ConstantIndexOp::create(b, loc, 0);
    }
    sizes.push_back(size);
  }
  return sizes;
}

SmallVector<Value> mlir::kiln::runTimeDims(OpBuilder &b, Location loc,
                                           Value source,
                                           ArrayRef<int64_t> dims) {
  auto type = cast<RankedTensorType>(source.getType());
  SmallVector<Value> sizes;
  for (int64_t d : dims)
    if (type.isDynamicDim(d))
      sizes.push_back(tensor::DimOp::create(b, loc, source, d));
  return sizes;
}

SmallVector<int64_t> mlir::kiln::allDimsExcept(int64_t rank,
                                               ArrayRef<int64_t> dropped) {
  SmallVector<int64_t> kept;
  for (int64_t d = 0; d < rank; ++d)
    if (!llvm::is_contained(dropped, d))
      kept.push_back(d);
  return kept;
}

Value mlir::kiln::createFilledTensor(OpBuilder &b, Location loc,
                                     ArrayRef<int64_t> shape,
                                     ValueRange dynamicSizes, TypedAttr value) {
  Value empty =
      tensor::EmptyOp::create(b, loc, shape, value.getType(), dynamicSizes);
  Value scalar = arith::ConstantOp::create(b, loc, value);
  return linalg::FillOp::create(b, loc, scalar, empty).getResult(0);
}

Value mlir::kiln::createFilledTensor(OpBuilder &b, Location loc,
                                     ArrayRef<int64_t> shape, TypedAttr value) {
  Value empty = createEmptyTensor(b, loc, shape, value.getType());
  Value scalar = arith::ConstantOp::create(b, loc, value);
  return linalg::FillOp::create(b, loc, scalar, empty).getResult(0);
}

AffineMap mlir::kiln::mapOfDims(MLIRContext *ctx, unsigned numDims,
                                ArrayRef<int64_t> dims) {
  SmallVector<AffineExpr> exprs;
  for (int64_t d : dims)
    exprs.push_back(getAffineDimExpr(d, ctx));
  return AffineMap::get(numDims, 0, exprs, ctx);
}

BroadcastOperand mlir::kiln::alignForBroadcast(OpBuilder &b, Location loc,
                                               Value operand,
                                               ArrayRef<int64_t> resultShape) {
  auto type = cast<RankedTensorType>(operand.getType());
  int64_t rank = type.getRank();
  int64_t offset = resultShape.size() - rank;
  SmallVector<int64_t> keptDims, keptShape;
  SmallVector<ReassociationIndices> groups;
  ReassociationIndices pending;
  for (int64_t i = 0; i < rank; ++i) {
    pending.push_back(i);
    if (type.getDimSize(i) == 1 && resultShape[offset + i] != 1)
      continue; // broadcast: folded into a neighbouring kept dim
    keptDims.push_back(offset + i);
    keptShape.push_back(type.getDimSize(i));
    groups.push_back(pending);
    pending.clear();
  }
  AffineMap map = mapOfDims(b.getContext(), resultShape.size(), keptDims);
  if ((int64_t)keptDims.size() == rank)
    return {operand, map};
  if (!groups.empty())
    llvm::append_range(groups.back(), pending);
  Value collapsed = tensor::CollapseShapeOp::create(
      b, loc, type.clone(keptShape), operand, groups);
  return {collapsed, map};
}

Value mlir::kiln::createElementwiseGeneric(OpBuilder &b, Location loc,
                                           RankedTensorType resultType,
                                           ValueRange inputs,
                                           ScalarBuilder body) {
  RunTimeBroadcast broadcast =
      broadcastRunTimeExtents(b, loc, resultType, inputs);
  SmallVector<BroadcastOperand> operands;
  for (Value input : broadcast.inputs)
    operands.push_back(alignForBroadcast(b, loc, input, resultType.getShape()));
  return createParallelGeneric(b, loc, resultType, operands,
                               broadcast.dynamicSizes, body);
}

Value mlir::kiln::createParallelGeneric(OpBuilder &b, Location loc,
                                        RankedTensorType resultType,
                                        ArrayRef<BroadcastOperand> inputs,
                                        ScalarBuilder body) {
  return createParallelGeneric(
      b, loc, resultType, inputs,
      dynamicSizesFromInputs(b, loc, resultType, inputs), body);
}

Value mlir::kiln::createParallelGeneric(OpBuilder &b, Location loc,
                                        RankedTensorType resultType,
                                        ArrayRef<BroadcastOperand> inputs,
                                        ValueRange dynamicSizes,
                                        ScalarBuilder body) {
  SmallVector<Value> operands;
  SmallVector<AffineMap> maps;
  for (const BroadcastOperand &input : inputs) {
    operands.push_back(input.value);
    maps.push_back(input.map);
  }
  unsigned rank = resultType.getRank();
  maps.push_back(b.getMultiDimIdentityMap(rank));
  Value init = createEmptyTensor(b, loc, resultType, dynamicSizes);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{resultType}, operands, ValueRange{init}, maps,
      parallelIterators(rank),
      [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
        Value result = body(nested, nestedLoc, args.drop_back());
        linalg::YieldOp::create(nested, nestedLoc, result);
      });
  return generic.getResult(0);
}

SmallVector<int64_t> mlir::kiln::dropDims(ArrayRef<int64_t> shape,
                                          ArrayRef<int64_t> dims) {
  SmallVector<int64_t> kept;
  for (auto [d, size] : llvm::enumerate(shape))
    if (!llvm::is_contained(dims, (int64_t)d))
      kept.push_back(size);
  return kept;
}

AffineMap mlir::kiln::dropDimsMap(MLIRContext *ctx, unsigned numDims,
                                  ArrayRef<int64_t> dims) {
  SmallVector<int64_t> kept;
  for (int64_t d = 0; d < numDims; ++d)
    if (!llvm::is_contained(dims, d))
      kept.push_back(d);
  return mapOfDims(ctx, numDims, kept);
}

Value mlir::kiln::createReductionGeneric(OpBuilder &b, Location loc,
                                         ArrayRef<BroadcastOperand> inputs,
                                         Value init,
                                         ArrayRef<int64_t> reducedDims,
                                         ScalarBuilder body) {
  unsigned numLoops = inputs.front().map.getNumDims();
  SmallVector<Value> operands;
  SmallVector<AffineMap> maps;
  for (const BroadcastOperand &input : inputs) {
    operands.push_back(input.value);
    maps.push_back(input.map);
  }
  maps.push_back(dropDimsMap(b.getContext(), numLoops, reducedDims));
  SmallVector<utils::IteratorType> iterators = parallelIterators(numLoops);
  for (int64_t d : reducedDims)
    iterators[d] = utils::IteratorType::reduction;
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{init.getType()}, operands, ValueRange{init}, maps,
      iterators, [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
        linalg::YieldOp::create(nested, nestedLoc,
                                body(nested, nestedLoc, args));
      });
  return generic.getResult(0);
}

/// Groups that attach each unit dim of `shape` to a kept (non-1) neighbour:
/// the reassociation between `shape` and `shape` without its 1s. Empty when
/// every dim is 1.
static SmallVector<ReassociationIndices>
unitDimGroups(ArrayRef<int64_t> shape) {
  SmallVector<ReassociationIndices> groups;
  ReassociationIndices pending;
  for (int64_t d = 0; d < (int64_t)shape.size(); ++d) {
    pending.push_back(d);
    if (shape[d] == 1)
      continue;
    groups.push_back(pending);
    pending.clear();
  }
  if (!groups.empty())
    llvm::append_range(groups.back(), pending);
  return groups;
}

Value mlir::kiln::createUnitDimReshape(OpBuilder &b, Location loc, Value input,
                                       RankedTensorType dstType) {
  auto srcType = cast<RankedTensorType>(input.getType());
  auto kept = [](ArrayRef<int64_t> shape) {
    SmallVector<int64_t> dims;
    for (int64_t d : shape)
      if (d != 1)
        dims.push_back(d);
    return dims;
  };
  SmallVector<int64_t> srcKept = kept(srcType.getShape()),
                       dstKept = kept(dstType.getShape());
  SmallVector<ReassociationIndices> srcGroups =
      unitDimGroups(srcType.getShape());
  SmallVector<ReassociationIndices> dstGroups =
      unitDimGroups(dstType.getShape());
  if (srcKept != dstKept || srcKept.empty()) {
    emitError(loc) << "internal error: reshape " << srcType << " -> " << dstType
                   << " with run-time extents is not a reshape of "
                   << "unit dims";
    return input;
  }
  Value squeezed = input;
  if (srcGroups.size() != (size_t)srcType.getRank())
    squeezed = tensor::CollapseShapeOp::create(b, loc, input, srcGroups);
  if (dstGroups.size() == (size_t)dstType.getRank())
    return tensor::CastOp::create(b, loc, dstType, squeezed);
  // The kept dims' extents come from the squeezed tensor, in order.
  SmallVector<OpFoldResult> sizes;
  int64_t next = 0;
  for (int64_t d : dstType.getShape()) {
    if (d == 1) {
      sizes.push_back(b.getIndexAttr(1));
      continue;
    }
    sizes.push_back(
        ShapedType::isDynamic(d)
            ? OpFoldResult(tensor::DimOp::create(b, loc, squeezed, next))
            : OpFoldResult(b.getIndexAttr(d)));
    ++next;
  }
  return tensor::ExpandShapeOp::create(b, loc, dstType, squeezed, dstGroups,
                                       sizes);
}

Value mlir::kiln::createReshape(OpBuilder &b, Location loc, Value input,
                                ArrayRef<int64_t> shape) {
  auto srcType = cast<RankedTensorType>(input.getType());
  auto dstType = srcType.clone(shape);
  ArrayRef<int64_t> src = srcType.getShape();
  if (srcType == dstType)
    return input;
  if (!srcType.hasStaticShape() || !dstType.hasStaticShape())
    return createUnitDimReshape(b, loc, input, dstType);
  // No data to move; also keeps zero-sized dims out of the grouping below.
  if (srcType.getNumElements() == 0)
    return createEmptyTensor(b, loc, shape, srcType.getElementType());
  if (src.empty())
    return tensor::ExpandShapeOp::create(b, loc, dstType, input,
                                         ArrayRef<ReassociationIndices>{});
  if (shape.empty())
    return tensor::CollapseShapeOp::create(b, loc, dstType, input,
                                           ArrayRef<ReassociationIndices>{});

  // Finest grouping on which both shapes agree: consecutive dims whose
  // products match. [2,3,4] -> [6,2,2] goes through [6,4], keeping the
  // structure a later pass can still see, instead of flattening to [24].
  SmallVector<ReassociationIndices> srcGroups, dstGroups;
  SmallVector<int64_t> common;
  size_t i = 0, j = 0;
  while (i < src.size() && j < shape.size()) {
    ReassociationIndices srcGroup{(int64_t)i}, dstGroup{(int64_t)j};
    int64_t srcProduct = src[i++], dstProduct = shape[j++];
    while (srcProduct != dstProduct) {
      if (srcProduct < dstProduct) {
        srcGroup.push_back(i);
        srcProduct *= src[i++];
      } else {
        dstGroup.push_back(j);
        dstProduct *= shape[j++];
      }
    }
    srcGroups.push_back(srcGroup);
    dstGroups.push_back(dstGroup);
    common.push_back(srcProduct);
  }
  // Whatever is left on either side is unit dims.
  for (; i < src.size(); ++i)
    srcGroups.back().push_back(i);
  for (; j < shape.size(); ++j)
    dstGroups.back().push_back(j);

  Value result = input;
  if (common.size() != src.size())
    result = tensor::CollapseShapeOp::create(b, loc, srcType.clone(common),
                                             result, srcGroups);
  if (common.size() != shape.size())
    result = tensor::ExpandShapeOp::create(b, loc, dstType, result, dstGroups);
  return result;
}

Value mlir::kiln::convertScalar(OpBuilder &b, Location loc, Value value,
                                Type fromType, Type toType) {
  if (fromType == toType)
    return value;
  auto fromInt = dyn_cast<IntegerType>(fromType);
  auto toInt = dyn_cast<IntegerType>(toType);
  Type signlessTo =
      toInt ? Type(IntegerType::get(b.getContext(), toInt.getWidth())) : toType;

  if (toInt && toInt.getWidth() == 1) {
    if (fromInt) {
      Value zero = createScalarConstant(b, loc, value.getType(), 0);
      return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, value,
                                   zero);
    }
    // NaN is truthy, as in numpy and onnxruntime: unordered-or-not-equal.
    Value zero = createScalarConstant(b, loc, value.getType(), 0);
    return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, value,
                                 zero);
  }
  if (fromInt && toInt) {
    unsigned fromWidth = fromInt.getWidth(), toWidth = toInt.getWidth();
    if (fromWidth == toWidth)
      return value; // ui8 <-> i8: the same bits once signless
    if (fromWidth > toWidth)
      return arith::TruncIOp::create(b, loc, signlessTo, value);
    if (isUnsignedLike(fromType))
      return arith::ExtUIOp::create(b, loc, signlessTo, value);
    return arith::ExtSIOp::create(b, loc, signlessTo, value);
  }
  if (fromInt) {
    if (isUnsignedLike(fromType))
      return arith::UIToFPOp::create(b, loc, toType, value);
    return arith::SIToFPOp::create(b, loc, toType, value);
  }
  if (toInt) {
    // fpto[su]i round toward zero, which is what ONNX Cast asks for.
    if (toInt.isUnsigned())
      return arith::FPToUIOp::create(b, loc, signlessTo, value);
    return arith::FPToSIOp::create(b, loc, signlessTo, value);
  }
  auto fromFloat = cast<FloatType>(fromType);
  auto toFloat = cast<FloatType>(toType);
  if (fromFloat.getWidth() == toFloat.getWidth()) {
    // f16 <-> bf16: no direct conversion; go through f32, which holds both.
    Value wide =
        arith::ExtFOp::create(b, loc, Float32Type::get(b.getContext()), value);
    return arith::TruncFOp::create(b, loc, toType, wide);
  }
  if (fromFloat.getWidth() < toFloat.getWidth())
    return arith::ExtFOp::create(b, loc, toType, value);
  return arith::TruncFOp::create(b, loc, toType, value);
}

Value mlir::kiln::createScalarConstant(OpBuilder &b, Location loc, Type type,
                                       double value) {
  if (isa<FloatType>(type))
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(type, value));
  return arith::ConstantOp::create(b, loc,
                                   b.getIntegerAttr(type, (int64_t)value));
}

Value mlir::kiln::createElementCount(OpBuilder &b, Location loc, Value source,
                                     ArrayRef<int64_t> dims, Type type) {
  auto shaped = cast<ShapedType>(source.getType());
  int64_t known = 1;
  Value count;
  for (int64_t d : dims) {
    if (!shaped.isDynamicDim(d)) {
      known *= shaped.getDimSize(d);
      continue;
    }
    Value extent = tensor::DimOp::create(b, loc, source, d);
    count = count ? arith::MulIOp::create(b, loc, count, extent) : extent;
  }
  if (!count)
    return createScalarConstant(b, loc, type, double(known));
  if (known != 1)
    count = arith::MulIOp::create(
        b, loc, count, arith::ConstantIndexOp::create(b, loc, known));
  Value wide = arith::IndexCastOp::create(b, loc, b.getI64Type(), count);
  if (isa<FloatType>(type))
    return arith::SIToFPOp::create(b, loc, type, wide);
  if (type.getIntOrFloatBitWidth() == 64)
    return wide;
  return arith::TruncIOp::create(b, loc, type, wide);
}

namespace {
TypedAttr getLimit(Type type, bool highest) {
  if (auto floatType = dyn_cast<FloatType>(type))
    return FloatAttr::get(type, APFloat::getInf(floatType.getFloatSemantics(),
                                                /*Negative=*/!highest));
  auto intType = cast<IntegerType>(type);
  unsigned width = intType.getWidth();
  APInt value;
  if (isUnsignedLike(type))
    value = highest ? APInt::getMaxValue(width) : APInt::getZero(width);
  else
    value = highest ? APInt::getSignedMaxValue(width)
                    : APInt::getSignedMinValue(width);
  return IntegerAttr::get(IntegerType::get(type.getContext(), width), value);
}
} // namespace

TypedAttr mlir::kiln::getLowestValue(Type kilnElementType) {
  return getLimit(kilnElementType, /*highest=*/false);
}

TypedAttr mlir::kiln::getHighestValue(Type kilnElementType) {
  return getLimit(kilnElementType, /*highest=*/true);
}

Value mlir::kiln::createMax(OpBuilder &b, Location loc, Value lhs, Value rhs,
                            Type kilnElementType) {
  if (isa<FloatType>(kilnElementType))
    return arith::MaximumFOp::create(b, loc, lhs, rhs);
  if (isUnsignedLike(kilnElementType))
    return arith::MaxUIOp::create(b, loc, lhs, rhs);
  return arith::MaxSIOp::create(b, loc, lhs, rhs);
}

Value mlir::kiln::createMin(OpBuilder &b, Location loc, Value lhs, Value rhs,
                            Type kilnElementType) {
  if (isa<FloatType>(kilnElementType))
    return arith::MinimumFOp::create(b, loc, lhs, rhs);
  if (isUnsignedLike(kilnElementType))
    return arith::MinUIOp::create(b, loc, lhs, rhs);
  return arith::MinSIOp::create(b, loc, lhs, rhs);
}

Value mlir::kiln::convertTensor(OpBuilder &b, Location loc, Value input,
                                Type fromType, Type toType) {
  // Same-width ints (iN vs uiN) are the same bits once signless.
  if (fromType == toType ||
      (fromType.isInteger() && toType.isInteger() &&
       fromType.getIntOrFloatBitWidth() == toType.getIntOrFloatBitWidth()))
    return input;
  auto type = cast<RankedTensorType>(input.getType());
  Type signlessTo = toType;
  if (auto intType = dyn_cast<IntegerType>(toType))
    signlessTo = IntegerType::get(b.getContext(), intType.getWidth());
  return createElementwiseGeneric(
      b, loc, type.clone(signlessTo), input,
      [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
        return convertScalar(nested, nestedLoc, args[0], fromType, toType);
      });
}

Value mlir::kiln::createPad(OpBuilder &b, Location loc, Value input,
                            ArrayRef<int64_t> low, ArrayRef<int64_t> high,
                            TypedAttr padValue) {
  if (llvm::all_of(low, [](int64_t v) { return v == 0; }) &&
      llvm::all_of(high, [](int64_t v) { return v == 0; }))
    return input;
  auto type = cast<RankedTensorType>(input.getType());
  SmallVector<int64_t> shape(type.getShape());
  SmallVector<OpFoldResult> lowSizes, highSizes;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (!ShapedType::isDynamic(shape[d]))
      shape[d] += low[d] + high[d];
    lowSizes.push_back(b.getIndexAttr(low[d]));
    highSizes.push_back(b.getIndexAttr(high[d]));
  }
  Value value = arith::ConstantOp::create(b, loc, padValue);
  return tensor::PadOp::create(b, loc, type.clone(shape), input, lowSizes,
                               highSizes, value);
}
