//===- DynamicShape.cpp - ops whose result shape is a run-time value ------===//
//
//   dynamic_reshape  the ONNX shape read with tensor.extract, 0 and -1
//                    resolved with arith, checked with cf.assert, then
//                    tensor.reshape (a view after bufferization)
//   dynamic_unsqueeze/dynamic_squeeze  the axes read and normalized, the
//                    result extents selected from the input's, then a
//                    tensor.reshape the same way
//   dynamic_expand   the requested extents read, broadcast with the
//                    input's and checked, then a broadcasting generic
//   dynamic_range    the element count from the scalars, then a generic
//                    of start + index * delta
//   assert           the 0-d condition read with tensor.extract, then the
//                    cf.assert of the other checks
//
// Each check is a `cf.assert` whose message names the ONNX node; the CPU
// backend turns it into an error returned by the run (kiln-runtime-services).
//
//===----------------------------------------------------------------------===//
#include "passes/lowering/DynamicShapeUtils.h"
#include "passes/lowering/LoweringUtils.h"
#include "passes/lowering/Patterns.h"

#include "dialects/kiln/KilnOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::kiln;

namespace {

/// tensor.reshape of `input` to `dims`. memref.reshape's lowering only
/// takes all-dynamic result types, so the reshape is to `?` everywhere and a
/// tensor.cast gives the static extents `resultType` knows.
Value reshapeTo(OpBuilder &b, Location loc, Type resultType, Value input,
                ArrayRef<Value> dims) {
  int64_t rank = dims.size();
  Value shape = tensor::FromElementsOp::create(
      b, loc, RankedTensorType::get({rank}, b.getIndexType()), dims);
  auto type = cast<RankedTensorType>(resultType);
  auto dynamicType =
      type.clone(SmallVector<int64_t>(rank, ShapedType::kDynamic));
  Value reshaped = tensor::ReshapeOp::create(b, loc, dynamicType, input, shape);
  if (dynamicType == type)
    return reshaped;
  return tensor::CastOp::create(b, loc, type, reshaped);
}

/// How a reshape is a collapse then an expand: when the run-time dims of
/// the two shapes pair up one to one and the static runs between them
/// have equal products (the usual [B, S, 768] <-> [B, S, 12, 64]).
struct ViewPairing {
  SmallVector<ReassociationIndices> srcGroups, dstGroups;
  /// (input dim, result dim) of each run-time pair: the view holds when
  /// their extents agree as the model runs ([B, S, 16] as [S, B, 16]
  /// pairs up, but is a view only when B == S).
  SmallVector<std::pair<int64_t, int64_t>> runTime;
};

std::optional<ViewPairing> pairUp(ArrayRef<int64_t> src,
                                  ArrayRef<int64_t> dst) {
  ViewPairing p;
  size_t i = 0, j = 0;
  while (i < src.size() && j < dst.size()) {
    if (ShapedType::isDynamic(src[i]) || ShapedType::isDynamic(dst[j])) {
      if (!ShapedType::isDynamic(src[i]) || !ShapedType::isDynamic(dst[j]))
        return std::nullopt;
      p.runTime.push_back({(int64_t)i, (int64_t)j});
      p.srcGroups.push_back({(int64_t)i++});
      p.dstGroups.push_back({(int64_t)j++});
      continue;
    }
    ReassociationIndices srcGroup{(int64_t)i}, dstGroup{(int64_t)j};
    int64_t srcProduct = src[i++], dstProduct = dst[j++];
    while (srcProduct != dstProduct) {
      if (srcProduct < dstProduct) {
        if (i >= src.size() || ShapedType::isDynamic(src[i]))
          return std::nullopt;
        srcGroup.push_back(i);
        srcProduct *= src[i++];
      } else {
        if (j >= dst.size() || ShapedType::isDynamic(dst[j]))
          return std::nullopt;
        dstGroup.push_back(j);
        dstProduct *= dst[j++];
      }
    }
    p.srcGroups.push_back(srcGroup);
    p.dstGroups.push_back(dstGroup);
  }
  // Trailing 1s join the last group.
  for (; i < src.size(); ++i) {
    if (src[i] != 1 || p.srcGroups.empty())
      return std::nullopt;
    p.srcGroups.back().push_back(i);
  }
  for (; j < dst.size(); ++j) {
    if (dst[j] != 1 || p.dstGroups.empty())
      return std::nullopt;
    p.dstGroups.back().push_back(j);
  }
  if (p.srcGroups.empty())
    return std::nullopt;
  return p;
}

/// Whether `extent` is `tensor.dim %input, d`, through index casts, the
/// shape vector's elements and the select that replaces a -1 (an extent
/// is never -1); any other select (the one copying the input's dim for a
/// 0) does not count.
bool isDimOf(Value extent, Value input, int64_t d) {
  while (Operation *def = extent.getDefiningOp()) {
    if (isa<arith::IndexCastOp, arith::IndexCastUIOp>(def)) {
      extent = def->getOperand(0);
      continue;
    }
    // Only the select that replaces a -1 entry: `select(v == -1, _, v)`.
    if (auto select = dyn_cast<arith::SelectOp>(def)) {
      auto compare = select.getCondition().getDefiningOp<arith::CmpIOp>();
      APInt minusOne;
      if (!compare || compare.getPredicate() != arith::CmpIPredicate::eq ||
          compare.getLhs() != select.getFalseValue() ||
          !matchPattern(compare.getRhs(), m_ConstantInt(&minusOne)) ||
          !minusOne.isAllOnes())
        return false;
      extent = select.getFalseValue();
      continue;
    }
    if (auto extract = dyn_cast<tensor::ExtractOp>(def)) {
      auto elements =
          extract.getTensor().getDefiningOp<tensor::FromElementsOp>();
      APInt at;
      if (!elements || extract.getIndices().size() != 1 ||
          !matchPattern(extract.getIndices()[0], m_ConstantInt(&at)))
        return false;
      extent = elements.getElements()[at.getZExtValue()];
      continue;
    }
    auto dim = dyn_cast<tensor::DimOp>(def);
    std::optional<int64_t> index = dim ? dim.getConstantIndex() : std::nullopt;
    return dim && dim.getSource() == input && index == d;
  }
  return false;
}

/// The reshape of `input` to `resultType` (extents `dims`) as the views
/// `p` gives. No copy.
Value viewReshape(OpBuilder &b, Location loc, const ViewPairing &p,
                  RankedTensorType resultType, Value input,
                  ArrayRef<Value> dims) {
  auto inType = cast<RankedTensorType>(input.getType());
  Value collapsed = input;
  if (p.srcGroups.size() != (size_t)inType.getRank())
    collapsed = tensor::CollapseShapeOp::create(b, loc, input, p.srcGroups);
  if (p.dstGroups.size() == (size_t)resultType.getRank())
    return tensor::CastOp::create(b, loc, resultType, collapsed);
  SmallVector<OpFoldResult> sizes;
  for (auto [d, extent] : llvm::enumerate(resultType.getShape()))
    sizes.push_back(ShapedType::isDynamic(extent)
                        ? OpFoldResult(dims[d])
                        : OpFoldResult(b.getIndexAttr(extent)));
  return tensor::ExpandShapeOp::create(b, loc, resultType, collapsed,
                                       p.dstGroups, sizes);
}

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
    // A view when the run-time extents pair up as the types say, else a
    // reshape through the shape (chosen when the model runs).
    auto inType = cast<RankedTensorType>(input.getType());
    std::optional<ViewPairing> pairing =
        pairUp(inType.getShape(), resultType.getShape());
    Value result;
    if (!pairing) {
      result = reshapeTo(rewriter, loc, resultType, input, dims);
    } else if (llvm::all_of(pairing->runTime, [&](auto pair) {
                 return isDimOf(dims[pair.second], input, pair.first);
               })) {
      result = viewReshape(rewriter, loc, *pairing, resultType, input, dims);
    } else {
      Value same = m.t(true);
      for (auto [i, j] : pairing->runTime)
        same = m.andi(same, m.eq(m.dim(input, i), dims[j]));
      auto choice = scf::IfOp::create(rewriter, loc, TypeRange{resultType},
                                      same, /*withElseRegion=*/true);
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPointToStart(&choice.getThenRegion().front());
      scf::YieldOp::create(
          rewriter, loc,
          viewReshape(rewriter, loc, *pairing, resultType, input, dims));
      rewriter.setInsertionPointToStart(&choice.getElseRegion().front());
      scf::YieldOp::create(rewriter, loc,
                           reshapeTo(rewriter, loc, resultType, input, dims));
      result = choice.getResult(0);
    }
    rewriter.replaceOp(op, result);
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

/// A linalg.generic writing `init` from `inputs` (each with its map).
Value genericInto(OpBuilder &b, Location loc, Value init,
                  ArrayRef<BroadcastOperand> inputs, ScalarBuilder body) {
  auto type = cast<RankedTensorType>(init.getType());
  SmallVector<Value> operands;
  SmallVector<AffineMap> maps;
  for (const BroadcastOperand &input : inputs) {
    operands.push_back(input.value);
    maps.push_back(input.map);
  }
  maps.push_back(b.getMultiDimIdentityMap(type.getRank()));
  return linalg::GenericOp::create(
             b, loc, TypeRange{type}, operands, ValueRange{init}, maps,
             parallelIterators(type.getRank()),
             [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
               linalg::YieldOp::create(nested, nestedLoc,
                                       body(nested, nestedLoc, args));
             })
      .getResult(0);
}

struct DynamicExpandLowering : OpConversionPattern<kiln::DynamicExpandOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(kiln::DynamicExpandOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    IndexMath m(rewriter, loc);
    Value input = adaptor.getInput();
    auto inputType = cast<RankedTensorType>(input.getType());
    auto resultType = cast<RankedTensorType>(
        getTypeConverter()->convertType(op.getResult().getType()));
    int64_t rank = resultType.getRank(), r = inputType.getRank();
    int64_t n =
        cast<RankedTensorType>(adaptor.getShape().getType()).getDimSize(0);
    Value broadcasts = m.t(true), runTimeOnesKept = m.t(true);
    SmallVector<Value> sizes;
    for (int64_t i = 0; i < rank; ++i) {
      Value s = i >= rank - n ? m.extract(adaptor.getShape(), i - (rank - n))
                              : m.c(1);
      Value x = i >= rank - r ? m.dim(input, i - (rank - r)) : m.c(1);
      Value extent = m.select(m.eq(x, m.c(1)), s, x);
      broadcasts = m.andi(
          broadcasts, arith::OrIOp::create(
                          rewriter, loc, m.eq(s, x),
                          arith::OrIOp::create(rewriter, loc, m.eq(s, m.c(1)),
                                               m.eq(x, m.c(1)))));
      // An input dim of run-time extent is never broadcast: it must be the
      // result's extent.
      if (i >= rank - r && inputType.isDynamicDim(i - (rank - r)))
        runTimeOnesKept = m.andi(runTimeOnesKept, m.eq(x, extent));
      if (resultType.isDynamicDim(i))
        sizes.push_back(extent);
    }
    emitRuntimeCheck(rewriter, loc, broadcasts,
                     "Expand: the shape does not broadcast with the input");
    emitRuntimeCheck(rewriter, loc, runTimeOnesKept,
                     "Expand: an input dim of run-time extent 1 would be "
                     "broadcast (not supported)");
    Value init = createEmptyTensor(rewriter, loc, resultType, sizes);
    BroadcastOperand operand =
        alignForBroadcast(rewriter, loc, input, resultType.getShape());
    rewriter.replaceOp(op,
                       genericInto(rewriter, loc, init, operand,
                                   [](OpBuilder &, Location, ValueRange args) {
                                     return args[0];
                                   }));
    return success();
  }
};

struct DynamicRangeLowering : OpConversionPattern<kiln::DynamicRangeOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(kiln::DynamicRangeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    IndexMath m(rewriter, loc);
    auto resultType = cast<RankedTensorType>(
        getTypeConverter()->convertType(op.getResult().getType()));
    Type et = resultType.getElementType();
    auto scalar = [&](Value v) {
      return tensor::ExtractOp::create(rewriter, loc, v, ValueRange{});
    };
    Value start = scalar(adaptor.getStart()),
          limit = scalar(adaptor.getLimit()),
          delta = scalar(adaptor.getDelta());
    Value count, nonZero;
    if (isa<FloatType>(et)) {
      Value zero = arith::ConstantOp::create(rewriter, loc, et,
                                             rewriter.getFloatAttr(et, 0));
      nonZero = arith::CmpFOp::create(rewriter, loc, arith::CmpFPredicate::UNE,
                                      delta, zero);
      Value steps = math::CeilOp::create(
          rewriter, loc,
          arith::DivFOp::create(
              rewriter, loc, arith::SubFOp::create(rewriter, loc, limit, start),
              delta));
      count =
          arith::FPToSIOp::create(rewriter, loc, rewriter.getI64Type(), steps);
      count = arith::IndexCastOp::create(rewriter, loc, rewriter.getIndexType(),
                                         count);
    } else {
      Value zero = arith::ConstantOp::create(rewriter, loc, et,
                                             rewriter.getIntegerAttr(et, 0));
      nonZero = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ne,
                                      delta, zero);
      // A zero delta is reported by the check; divide by 1 meanwhile.
      Value one = arith::ConstantOp::create(rewriter, loc, et,
                                            rewriter.getIntegerAttr(et, 1));
      Value safeDelta =
          arith::SelectOp::create(rewriter, loc, nonZero, delta, one);
      count = arith::CeilDivSIOp::create(
          rewriter, loc, arith::SubIOp::create(rewriter, loc, limit, start),
          safeDelta);
      count = arith::IndexCastOp::create(rewriter, loc, rewriter.getIndexType(),
                                         count);
    }
    emitRuntimeCheck(rewriter, loc, nonZero, "Range: delta is 0");
    count = m.smax(count, m.c(0));
    Value init = createEmptyTensor(rewriter, loc, resultType, count);
    rewriter.replaceOp(
        op, genericInto(
                rewriter, loc, init, {},
                [&](OpBuilder &b, Location l, ValueRange) -> Value {
                  Value i = linalg::IndexOp::create(b, l, 0);
                  Value i64 =
                      arith::IndexCastOp::create(b, l, b.getI64Type(), i);
                  if (isa<FloatType>(et)) {
                    Value f = arith::SIToFPOp::create(b, l, et, i64);
                    return arith::AddFOp::create(
                        b, l, start, arith::MulFOp::create(b, l, f, delta));
                  }
                  Value k =
                      et.isInteger(64)
                          ? i64
                          : arith::TruncIOp::create(b, l, et, i64).getResult();
                  return arith::AddIOp::create(
                      b, l, start, arith::MulIOp::create(b, l, k, delta));
                }));
    return success();
  }
};

/// ONNX's bounds resolved per dim (negative from the end, clamped to the
/// extent), then a tensor.extract_slice with the op's steps as its strides
/// (extent ceil((end - start) / step)); static_shape entries come back
/// through a cast.
struct DynamicSliceLowering : OpConversionPattern<kiln::DynamicSliceOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(kiln::DynamicSliceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    IndexMath m(rewriter, loc);
    Value input = adaptor.getInput();
    auto type = cast<RankedTensorType>(input.getType());
    auto resultType = cast<RankedTensorType>(
        getTypeConverter()->convertType(op.getResult().getType()));
    SmallVector<int64_t> steps(type.getRank(), 1);
    if (std::optional<ArrayRef<int64_t>> given = op.getSteps())
      steps.assign(given->begin(), given->end());
    SmallVector<OpFoldResult> offsets, sizes, strides;
    for (int64_t step : steps)
      strides.push_back(rewriter.getIndexAttr(std::abs(step)));
    Value sizesOk = m.t(true);
    SmallVector<Value> extents;
    for (int64_t d = 0; d < type.getRank(); ++d) {
      Value dim = m.dim(input, d);
      auto bound = [&](Value v, Value lo, Value hi) {
        v = m.select(m.slt(v, m.c(0)), m.add(v, dim), v);
        return m.smin(m.smax(v, lo), hi);
      };
      Value start, size;
      int64_t step = std::abs(steps[d]);
      if (steps[d] > 0) {
        start = bound(m.extract(adaptor.getStarts(), d), m.c(0), dim);
        Value end = bound(m.extract(adaptor.getEnds(), d), m.c(0), dim);
        size = m.smax(m.sub(end, start), m.c(0));
      } else {
        // Down from start (within [0, dim - 1]) to end (within [-1,
        // dim - 1]): read upwards from the last element taken, then
        // reversed below.
        Value last = m.sub(dim, m.c(1));
        Value first = bound(m.extract(adaptor.getStarts(), d), m.c(0), last);
        Value end = bound(m.extract(adaptor.getEnds(), d), m.c(-1), last);
        size = m.smax(m.sub(first, end), m.c(0));
        size = m.divu(m.add(size, m.c(step - 1)), m.c(step));
        Value lowest = m.sub(first, m.mul(m.sub(size, m.c(1)), m.c(step)));
        start = m.select(m.eq(size, m.c(0)), m.c(0), lowest);
      }
      if (steps[d] > 1)
        size = m.divu(m.add(size, m.c(step - 1)), m.c(step));
      offsets.push_back(start);
      sizes.push_back(size);
      extents.push_back(size);
      if (!resultType.isDynamicDim(d))
        sizesOk = m.andi(sizesOk, m.eq(size, m.c(resultType.getDimSize(d))));
    }
    emitRuntimeCheck(rewriter, loc, sizesOk,
                     "Slice: the bounds give another extent than the static "
                     "one");
    Value slice = tensor::ExtractSliceOp::create(
        rewriter, loc,
        RankedTensorType::get(
            SmallVector<int64_t>(type.getRank(), ShapedType::kDynamic),
            type.getElementType()),
        input, offsets, sizes, strides);
    if (llvm::all_of(steps, [](int64_t s) { return s > 0; })) {
      rewriter.replaceOpWithNewOp<tensor::CastOp>(op, resultType, slice);
      return success();
    }
    // Negative steps: the slice was read upwards; reverse those dims.
    SmallVector<Value> resultSizes;
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (resultType.isDynamicDim(d))
        resultSizes.push_back(extents[d]);
    auto body = [&](OpBuilder &b, Location l, ValueRange) -> Value {
      IndexMath im(b, l);
      SmallVector<Value> coords;
      for (int64_t d = 0; d < type.getRank(); ++d) {
        Value i = linalg::IndexOp::create(b, l, d);
        coords.push_back(steps[d] > 0 ? i
                                      : im.sub(im.sub(extents[d], im.c(1)), i));
      }
      return tensor::ExtractOp::create(b, l, slice, coords);
    };
    rewriter.replaceOp(op, createParallelGeneric(rewriter, loc, resultType, {},
                                                 resultSizes, body));
    return success();
  }
};

/// Counts the nonzero elements, then writes their positions, with two
/// sequential loops (the result's extent is the count).
struct NonZeroIndicesLowering : OpConversionPattern<kiln::NonZeroIndicesOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(kiln::NonZeroIndicesOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    Type et = getElementType(input);
    // The loops are built outside the conversion driver, as the attention
    // lowering does: scf is not among its legal dialects.
    OpBuilder b(op);
    IndexMath m(b, loc);
    Value n = m.dim(input, 0);
    auto isNonZero = [&](OpBuilder &nb, Value i) -> Value {
      Value x = tensor::ExtractOp::create(nb, loc, input, ValueRange{i});
      Value zero = arith::ConstantOp::create(
          nb, loc, cast<TypedAttr>(nb.getZeroAttr(et)));
      if (isa<FloatType>(et))
        return arith::CmpFOp::create(nb, loc, arith::CmpFPredicate::UNE, x,
                                     zero);
      return arith::CmpIOp::create(nb, loc, arith::CmpIPredicate::ne, x, zero);
    };
    auto count = scf::ForOp::create(
        b, loc, m.c(0), n, m.c(1), ValueRange{m.c(0)},
        [&](OpBuilder &nb, Location, Value i, ValueRange args) {
          IndexMath inner(nb, loc);
          Value next = inner.add(
              args[0], inner.select(isNonZero(nb, i), inner.c(1), inner.c(0)));
          scf::YieldOp::create(nb, loc, next);
        });
    auto resultType = cast<RankedTensorType>(op.getType());
    Value empty = tensor::EmptyOp::create(b, loc, resultType.getShape(),
                                          resultType.getElementType(),
                                          ValueRange{count.getResult(0)});
    auto fill = scf::ForOp::create(
        b, loc, m.c(0), n, m.c(1), ValueRange{empty, m.c(0)},
        [&](OpBuilder &nb, Location, Value i, ValueRange args) {
          auto branch = scf::IfOp::create(
              nb, loc, isNonZero(nb, i),
              [&](OpBuilder &tb, Location) {
                Value position =
                    arith::IndexCastOp::create(tb, loc, tb.getI64Type(), i);
                Value written = tensor::InsertOp::create(tb, loc, position,
                                                         args[0], args[1]);
                Value next = arith::AddIOp::create(
                    tb, loc, args[1],
                    arith::ConstantIndexOp::create(tb, loc, 1));
                scf::YieldOp::create(tb, loc, ValueRange{written, next});
              },
              [&](OpBuilder &eb, Location) {
                scf::YieldOp::create(eb, loc, ValueRange{args[0], args[1]});
              });
          scf::YieldOp::create(nb, loc, branch.getResults());
        });
    rewriter.replaceOp(op, fill.getResult(0));
    return success();
  }
};

} // namespace

void mlir::kiln::populateKilnDynamicShapeToLinalgPatterns(
    RewritePatternSet &patterns, TypeConverter &typeConverter) {
  patterns
      .add<DynamicReshapeLowering, DynamicUnsqueezeLowering,
           DynamicSqueezeLowering, DynamicExpandLowering, DynamicRangeLowering,
           DynamicSliceLowering, NonZeroIndicesLowering, AssertLowering>(
          typeConverter, patterns.getContext());
}
