//===- Contraction.cpp - kiln.matmul / kiln.conv -> linalg ----------------===//
//
// Contractions become named linalg ops whenever one fits, because the CPU
// backend's data tiling and microkernels look for linalg.matmul,
// linalg.batch_matmul and linalg.conv_2d_nchw_fchw by name. Shapes the named
// ops cannot express (broadcast batch dims, grouped convolution) become a
// linalg.generic with the same loop structure.
//
// channels_last (NHWC input, HWCF weight) 2-D convolutions become
// linalg.conv_2d_nhwc_hwcf, linalg.depthwise_conv_2d_nhwc_hwc(m) for
// depthwise ones and a generic over (n, oh, ow, g, f, kh, kw, c) otherwise.
//
// f16/bf16 contractions accumulate in f32 and round once at the end.
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

int64_t product(ArrayRef<int64_t> dims) {
  int64_t p = 1;
  for (int64_t d : dims)
    p *= d;
  return p;
}

/// acc + a * b with both operands converted to the accumulator type.
Value multiplyAccumulate(OpBuilder &b, Location loc, Value lhs, Value rhs,
                         Value acc, Type kilnType) {
  Type accType = acc.getType();
  lhs = convertScalar(b, loc, lhs, kilnType, accType);
  rhs = convertScalar(b, loc, rhs, kilnType, accType);
  if (isa<FloatType>(accType))
    return arith::AddFOp::create(b, loc, acc,
                                 arith::MulFOp::create(b, loc, lhs, rhs));
  return arith::AddIOp::create(b, loc, acc,
                               arith::MulIOp::create(b, loc, lhs, rhs));
}

Value zeroTensor(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                 Type type) {
  return createFilledTensor(b, loc, shape,
                            cast<TypedAttr>(b.getZeroAttr(type)));
}

//===----------------------------------------------------------------------===//
// MatMul
//===----------------------------------------------------------------------===//

/// Batch dims broadcast in general: loops (batch..., m, n, k); operands map
/// their batch dims numpy-style, broadcast dims dropped.
Value createBroadcastMatmul(OpBuilder &b, Location loc, Value lhs, Value rhs,
                            ArrayRef<int64_t> resultShape, Type accType,
                            Type kilnType) {
  MLIRContext *ctx = b.getContext();
  int64_t batchRank = resultShape.size() - 2;
  unsigned numLoops = batchRank + 3;
  // Run-time extents: the inner dims must agree, and batch dims broadcast
  // as ONNX says (an extent of 1 known only at run time too).
  auto lhsType = cast<RankedTensorType>(lhs.getType());
  auto rhsType = cast<RankedTensorType>(rhs.getType());
  int64_t lhsK = lhsType.getRank() - 1, rhsK = rhsType.getRank() - 2;
  if (lhsType.isDynamicDim(lhsK) || rhsType.isDynamicDim(rhsK))
    emitRuntimeCheck(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                              tensor::DimOp::create(b, loc, lhs, lhsK),
                              tensor::DimOp::create(b, loc, rhs, rhsK)),
        "MatMul: the inputs' inner dims differ (the first input's last dim "
        "and the second's second to last)");
  auto resultType = RankedTensorType::get(resultShape, accType);
  RunTimeBroadcast batches =
      broadcastRunTimeExtents(b, loc, resultType, {lhs, rhs}, /*trailing=*/2);
  lhs = batches.inputs[0];
  rhs = batches.inputs[1];
  int64_t m = batchRank, n = batchRank + 1, k = batchRank + 2;
  SmallVector<int64_t> batchLoops;
  for (int64_t i = 0; i < batchRank; ++i)
    batchLoops.push_back(i);
  ArrayRef<int64_t> batchShape = resultShape.drop_back(2);

  // Align each operand against (result batch dims + its own matrix dims),
  // then route its two matrix dims to the right loops.
  auto alignOperand = [&](Value operand, int64_t row, int64_t col) {
    auto type = cast<RankedTensorType>(operand.getType());
    SmallVector<int64_t> shape(batchShape);
    llvm::append_range(shape, type.getShape().take_back(2));
    BroadcastOperand aligned = alignForBroadcast(b, loc, operand, shape);
    SmallVector<int64_t> loops(batchLoops);
    loops.append({row, col});
    aligned.map = aligned.map.compose(mapOfDims(ctx, numLoops, loops));
    return aligned;
  };
  BroadcastOperand a = alignOperand(lhs, m, k);
  BroadcastOperand bOp = alignOperand(rhs, k, n);
  SmallVector<int64_t> outLoops(batchLoops);
  outLoops.append({m, n});
  AffineMap outMap = mapOfDims(ctx, numLoops, outLoops);

  SmallVector<utils::IteratorType> iterators = parallelIterators(numLoops);
  iterators[k] = utils::IteratorType::reduction;
  // Run-time extents: the batch dims', then M from the lhs, N from the rhs.
  SmallVector<Value> sizes(batches.dynamicSizes);
  if (ShapedType::isDynamic(resultShape[m]))
    sizes.push_back(tensor::DimOp::create(b, loc, lhs, lhsK - 1));
  if (ShapedType::isDynamic(resultShape[n]))
    sizes.push_back(tensor::DimOp::create(b, loc, rhs, rhsK + 1));
  Value init = createFilledTensor(b, loc, resultShape, sizes,
                                  cast<TypedAttr>(b.getZeroAttr(accType)));
  auto generic = linalg::GenericOp::create(
      b, loc, init.getType(), ValueRange{a.value, bOp.value}, init,
      ArrayRef<AffineMap>{a.map, bOp.map, outMap}, iterators,
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        linalg::YieldOp::create(
            nb, nl,
            multiplyAccumulate(nb, nl, args[0], args[1], args[2], kilnType));
      });
  return generic.getResult(0);
}

/// [B..., M, K] x [(1...,) K, N] as one linalg.matmul over the rows of all
/// batches, for run-time B or M (K and N static).
Value createRowsMatmul(OpBuilder &b, Location loc, Value lhs, Value rhs,
                       RankedTensorType kilnResultType, Type accType) {
  auto lhsType = cast<RankedTensorType>(lhs.getType());
  auto rhsType = cast<RankedTensorType>(rhs.getType());
  int64_t rank = lhsType.getRank();
  int64_t k = rhsType.getShape().end()[-2], n = rhsType.getShape().back();
  ReassociationIndices rows;
  for (int64_t d = 0; d + 1 < rank; ++d)
    rows.push_back(d);
  Value a = rank == 2 ? lhs
                      : tensor::CollapseShapeOp::create(
                            b, loc, lhs,
                            SmallVector<ReassociationIndices>{rows, {rank - 1}})
                            .getResult();
  Value bt = createReshape(b, loc, rhs, {k, n});
  auto aType = cast<RankedTensorType>(a.getType());
  Value init = createFilledTensor(b, loc, {aType.getDimSize(0), n},
                                  runTimeDims(b, loc, a, {0}),
                                  cast<TypedAttr>(b.getZeroAttr(accType)));
  Value mm =
      linalg::MatmulOp::create(b, loc, ValueRange{a, bt}, ValueRange{init})
          .getResult(0);
  if (rank == 2)
    return mm;
  // Back to [B..., M, N]: the run-time extents are the lhs's.
  SmallVector<OpFoldResult> sizes;
  for (int64_t d = 0; d + 1 < rank; ++d)
    sizes.push_back(lhsType.isDynamicDim(d)
                        ? OpFoldResult(tensor::DimOp::create(b, loc, lhs, d))
                        : OpFoldResult(b.getIndexAttr(lhsType.getDimSize(d))));
  sizes.push_back(b.getIndexAttr(n));
  return tensor::ExpandShapeOp::create(
      b, loc, kilnResultType.clone(accType), mm,
      SmallVector<ReassociationIndices>{rows, {rank - 1}}, sizes);
}

struct MatMulLowering : OpConversionPattern<kiln::MatMulOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(kiln::MatMulOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value lhs = adaptor.getLhs(), rhs = adaptor.getRhs();
    auto lhsType = cast<RankedTensorType>(lhs.getType());
    auto rhsType = cast<RankedTensorType>(rhs.getType());
    Type kilnType = getElementType(op.getLhs());
    Type accType = getAccumulatorType(lhsType.getElementType());
    ArrayRef<int64_t> resultShape = op.getType().getShape();
    int64_t m = lhsType.getShape().end()[-2], k = lhsType.getShape().back();
    int64_t n = rhsType.getShape().back();
    ArrayRef<int64_t> lhsBatch = lhsType.getShape().drop_back(2);
    ArrayRef<int64_t> rhsBatch = rhsType.getShape().drop_back(2);

    Value result;
    bool runTime = !lhsType.hasStaticShape() || !rhsType.hasStaticShape();
    if (runTime && rhsType.hasStaticShape() && product(rhsBatch) == 1 &&
        lhsType.getRank() >= 2 && !ShapedType::isDynamic(k)) {
      // [B..., M, K] x [K, N] with run-time B or M: one [rows, K] x [K, N]
      // matmul over the collapsed rows.
      result = createRowsMatmul(rewriter, loc, lhs, rhs, op.getType(), accType);
    } else if (runTime) {
      result = createBroadcastMatmul(rewriter, loc, lhs, rhs, resultShape,
                                     accType, kilnType);
    } else if (product(rhsBatch) == 1) {
      // [B..., M, K] x [(1...,) K, N]: rows of all batches are contiguous, so
      // this is one [B*M, K] x [K, N] matmul.
      int64_t rows = product(lhsBatch) * m;
      Value a = createReshape(rewriter, loc, lhs, {rows, k});
      Value bt = createReshape(rewriter, loc, rhs, {k, n});
      Value init = zeroTensor(rewriter, loc, {rows, n}, accType);
      Value mm = linalg::MatmulOp::create(rewriter, loc, ValueRange{a, bt},
                                          ValueRange{init})
                     .getResult(0);
      result = createReshape(rewriter, loc, mm, resultShape);
    } else if (lhsBatch == rhsBatch) {
      int64_t batch = product(lhsBatch);
      Value a = createReshape(rewriter, loc, lhs, {batch, m, k});
      Value bt = createReshape(rewriter, loc, rhs, {batch, k, n});
      Value init = zeroTensor(rewriter, loc, {batch, m, n}, accType);
      Value mm = linalg::BatchMatmulOp::create(rewriter, loc, ValueRange{a, bt},
                                               ValueRange{init})
                     .getResult(0);
      result = createReshape(rewriter, loc, mm, resultShape);
    } else {
      result = createBroadcastMatmul(rewriter, loc, lhs, rhs, resultShape,
                                     accType, kilnType);
    }
    rewriter.replaceOp(op, convertTensor(rewriter, loc, result, accType,
                                         lhsType.getElementType()));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Conv
//===----------------------------------------------------------------------===//

/// `out += in * w` as a generic with `maps` (in, w, out); loops from
/// `firstReduction` on are reductions.
Value createConvGeneric(OpBuilder &b, Location loc, Value in, Value w,
                        Value out, ArrayRef<AffineMap> maps,
                        int64_t firstReduction, Type kilnType) {
  int64_t numLoops = maps.front().getNumDims();
  SmallVector<utils::IteratorType> iterators = parallelIterators(numLoops);
  for (int64_t l = firstReduction; l < numLoops; ++l)
    iterators[l] = utils::IteratorType::reduction;
  return linalg::GenericOp::create(
             b, loc, out.getType(), ValueRange{in, w}, out, maps, iterators,
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               linalg::YieldOp::create(nb, nl,
                                       multiplyAccumulate(nb, nl, args[0],
                                                          args[1], args[2],
                                                          kilnType));
             })
      .getResult(0);
}

/// Grouped N-d convolution as one generic over
/// (n, g, f, out..., c, k...): input [N, G, C/G, in...],
/// weight [G, F/G, C/G, k...], output [N, G, F/G, out...].
/// `v` with dim `dim` split into [outer, size / outer] (a static dim; the
/// others, run-time ones included, are kept as they are).
Value splitStaticDim(OpBuilder &b, Location loc, Value v, int64_t dim,
                     int64_t outer) {
  auto type = cast<RankedTensorType>(v.getType());
  SmallVector<int64_t> shape(type.getShape().take_front(dim));
  shape.append({outer, type.getDimSize(dim) / outer});
  llvm::append_range(shape, type.getShape().drop_front(dim + 1));
  SmallVector<ReassociationIndices> groups;
  for (int64_t d = 0; d < type.getRank(); ++d)
    groups.push_back(d < dim    ? ReassociationIndices{d}
                     : d == dim ? ReassociationIndices{d, d + 1}
                                : ReassociationIndices{d + 1});
  return tensor::ExpandShapeOp::create(b, loc, type.clone(shape), v, groups);
}

/// The inverse: dims `dim` and `dim + 1` of `v` merged into one.
Value mergeDims(OpBuilder &b, Location loc, Value v, int64_t dim) {
  auto type = cast<RankedTensorType>(v.getType());
  SmallVector<ReassociationIndices> groups;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    if (d == dim + 1)
      continue;
    groups.push_back(d == dim ? ReassociationIndices{d, d + 1}
                              : ReassociationIndices{d});
  }
  return tensor::CollapseShapeOp::create(b, loc, v, groups);
}

Value createGroupedConv(OpBuilder &b, Location loc, Value input, Value weight,
                        Value init, kiln::ConvOp op, Type kilnType) {
  MLIRContext *ctx = b.getContext();
  int64_t group = op.getGroup();
  auto inType = cast<RankedTensorType>(input.getType());
  int64_t spatial = inType.getRank() - 2;

  Value in = splitStaticDim(b, loc, input, 1, group),
        w = splitStaticDim(b, loc, weight, 0, group),
        out = splitStaticDim(b, loc, init, 1, group);

  // Loop numbering.
  int64_t nLoop = 0, gLoop = 1, fLoop = 2, outLoop0 = 3;
  int64_t cLoop = 3 + spatial, kLoop0 = 4 + spatial;
  unsigned numLoops = 4 + 2 * spatial;
  auto dim = [&](int64_t d) { return getAffineDimExpr(d, ctx); };

  SmallVector<AffineExpr> inExprs = {dim(nLoop), dim(gLoop), dim(cLoop)};
  SmallVector<AffineExpr> wExprs = {dim(gLoop), dim(fLoop), dim(cLoop)};
  SmallVector<AffineExpr> outExprs = {dim(nLoop), dim(gLoop), dim(fLoop)};
  for (int64_t i = 0; i < spatial; ++i) {
    inExprs.push_back(dim(outLoop0 + i) * op.getStrides()[i] +
                      dim(kLoop0 + i) * op.getDilations()[i]);
    wExprs.push_back(dim(kLoop0 + i));
    outExprs.push_back(dim(outLoop0 + i));
  }
  SmallVector<AffineMap> maps = {AffineMap::get(numLoops, 0, inExprs, ctx),
                                 AffineMap::get(numLoops, 0, wExprs, ctx),
                                 AffineMap::get(numLoops, 0, outExprs, ctx)};
  Value result = createConvGeneric(b, loc, in, w, out, maps, cLoop, kilnType);
  return mergeDims(b, loc, result, 1);
}

/// Grouped channels_last 2-D convolution as one generic over
/// (n, oh, ow, g, f, kh, kw, c): input [N, H, W, G, C/G],
/// weight [KH, KW, C/G, G, F/G], output [N, OH, OW, G, F/G].
Value createGroupedConvNhwc(OpBuilder &b, Location loc, Value input,
                            Value weight, Value init, kiln::ConvOp op,
                            Type kilnType) {
  MLIRContext *ctx = b.getContext();
  int64_t group = op.getGroup();
  Value in = splitStaticDim(b, loc, input, 3, group),
        out = splitStaticDim(b, loc, init, 3, group);
  // [KH, KW, C/G, F] -> [KH, KW, C/G, G, F/G]: filter f = g * F/G + j.
  Value w = splitStaticDim(b, loc, weight, 3, group);
  auto d = [&](int64_t i) { return getAffineDimExpr(i, ctx); };
  enum { N, OH, OW, G, F, KH, KW, C, NumLoops };
  ArrayRef<int64_t> strides = op.getStrides(), dilations = op.getDilations();
  SmallVector<AffineMap> maps = {
      AffineMap::get(NumLoops, 0,
                     {d(N), d(OH) * strides[0] + d(KH) * dilations[0],
                      d(OW) * strides[1] + d(KW) * dilations[1], d(G), d(C)},
                     ctx),
      AffineMap::get(NumLoops, 0, {d(KH), d(KW), d(C), d(G), d(F)}, ctx),
      AffineMap::get(NumLoops, 0, {d(N), d(OH), d(OW), d(G), d(F)}, ctx)};
  Value result = createConvGeneric(b, loc, in, w, out, maps, KH, kilnType);
  return mergeDims(b, loc, result, 3);
}

/// The linalg op of a channels_last 2-D convolution (input padded, init
/// seeded with the bias).
Value createConvNhwc(OpBuilder &b, Location loc, Value input, Value weight,
                     Value init, kiln::ConvOp op, Type kilnType) {
  auto strides = b.getI64TensorAttr(op.getStrides());
  auto dilations = b.getI64TensorAttr(op.getDilations());
  auto initType = cast<RankedTensorType>(init.getType());
  auto wShape = cast<RankedTensorType>(weight.getType()).getShape();
  int64_t group = op.getGroup();
  int64_t channels = cast<RankedTensorType>(input.getType()).getDimSize(3);
  int64_t filters = initType.getDimSize(3);
  if (group == 1)
    return linalg::Conv2DNhwcHwcfOp::create(b, loc, initType,
                                            ValueRange{input, weight}, init,
                                            strides, dilations)
        .getResult(0);
  if (group == channels && filters == channels) {
    // Depthwise: [KH, KW, 1, C] -> [KH, KW, C].
    Value w = createReshape(b, loc, weight, {wShape[0], wShape[1], wShape[3]});
    return linalg::DepthwiseConv2DNhwcHwcOp::create(
               b, loc, initType, ValueRange{input, w}, init, strides, dilations)
        .getResult(0);
  }
  if (group == channels) {
    // Channel multiplier m: filter f = c * m + j, so [KH, KW, 1, C*m] is
    // [KH, KW, C, m] and the result [N, OH, OW, C, m] is the NHWC one.
    int64_t m = filters / channels;
    Value w =
        createReshape(b, loc, weight, {wShape[0], wShape[1], channels, m});
    Value out = splitStaticDim(b, loc, init, 3, channels);
    Value r = linalg::DepthwiseConv2DNhwcHwcmOp::create(b, loc, out.getType(),
                                                        ValueRange{input, w},
                                                        out, strides, dilations)
                  .getResult(0);
    return mergeDims(b, loc, r, 3);
  }
  return createGroupedConvNhwc(b, loc, input, weight, init, op, kilnType);
}

struct ConvLowering : OpConversionPattern<kiln::ConvOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(kiln::ConvOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (op.getInputZeroPoint())
      return rewriter.notifyMatchFailure(op, "an integer convolution "
                                             "(QuantizedConv.cpp)");
    Location loc = op.getLoc();
    auto inType = cast<RankedTensorType>(adaptor.getInput().getType());
    Type elementType = inType.getElementType();
    Type kilnType = getElementType(op.getInput());
    Type accType = getAccumulatorType(elementType);
    int64_t rank = inType.getRank(), spatial = rank - 2;
    bool channelsLast = op.getChannelsLast();
    int64_t channels = inType.getDimSize(1);
    int64_t filters = op.getType().getDimSize(1);
    int64_t group = op.getGroup();
    ArrayRef<int64_t> resultShape = op.getType().getShape();
    // The batch and the spatial extents may be known only at run time (the
    // channels never are); the result's are computed from them.
    if (op.getType().isDynamicDim(channelsLast ? rank - 1 : 1))
      return rewriter.notifyMatchFailure(op, "run-time channel count");
    auto weightShape =
        cast<RankedTensorType>(adaptor.getWeight().getType()).getShape();
    SmallVector<Value> batch = windowResultSizes(
        rewriter, loc, adaptor.getInput(), op.getType(),
        channelsLast ? weightShape.take_front(spatial)
                     : weightShape.drop_front(2),
        op.getStrides(), op.getDilations(), op.getPads(), channelsLast);

    // Explicit zero padding: the named conv ops have no padding of their own.
    ArrayRef<int64_t> pads = op.getPads();
    SmallVector<int64_t> low = {0}, high = {0};
    if (!channelsLast)
      low.push_back(0), high.push_back(0);
    llvm::append_range(low, pads.take_front(spatial));
    llvm::append_range(high, pads.drop_front(spatial));
    if (channelsLast)
      low.push_back(0), high.push_back(0);
    Value input = createPad(rewriter, loc, adaptor.getInput(), low, high,
                            cast<TypedAttr>(rewriter.getZeroAttr(elementType)));
    Value weight = adaptor.getWeight();

    // Over a run-time image the named conv would be a scalar loop nest: an
    // im2col and a matmul whose run-time rows get the tiled kernel.
    ElementsAttr constantWeight;
    if (!channelsLast && group == 1 && spatial == 2 && accType.isF32() &&
        elementType.isF32() &&
        (inType.isDynamicDim(2) || inType.isDynamicDim(3)) &&
        matchPattern(op.getWeight(), m_Constant(&constantWeight))) {
      Value bias = adaptor.getBias()
                       ? convertTensor(rewriter, loc, adaptor.getBias(),
                                       getElementType(op.getBias()), accType)
                       : Value();
      FailureOr<Value> result =
          createIm2colConv(rewriter, loc, input, constantWeight, bias,
                           RankedTensorType::get(resultShape, accType), batch,
                           op.getStrides(), op.getDilations());
      if (succeeded(result)) {
        rewriter.replaceOp(op, *result);
        return success();
      }
    }

    // The bias seeds the accumulator, so no separate add pass is needed.
    Value init;
    if (Value bias = adaptor.getBias()) {
      Value accBias = convertTensor(rewriter, loc, bias,
                                    getElementType(op.getBias()), accType);
      // Every dim but the channel one (1, or the last for channels_last).
      SmallVector<int64_t> dims;
      for (int64_t d = 0; d < rank; ++d)
        if (d != (channelsLast ? rank - 1 : 1))
          dims.push_back(d);
      Value empty = createEmptyTensor(
          rewriter, loc, RankedTensorType::get(resultShape, accType), batch);
      init = linalg::BroadcastOp::create(rewriter, loc, accBias, empty, dims)
                 .getResult()[0];
    } else {
      init = createFilledTensor(rewriter, loc, resultShape, batch,
                                cast<TypedAttr>(rewriter.getZeroAttr(accType)));
    }

    auto strides = rewriter.getI64TensorAttr(op.getStrides());
    auto dilations = rewriter.getI64TensorAttr(op.getDilations());
    Type resultTypes = init.getType();
    Value result;
    if (channelsLast) {
      result = createConvNhwc(rewriter, loc, input, weight, init, op, kilnType);
    } else if (group == 1 && spatial == 2) {
      result = linalg::Conv2DNchwFchwOp::create(rewriter, loc, resultTypes,
                                                ValueRange{input, weight}, init,
                                                strides, dilations)
                   .getResult(0);
    } else if (group == 1 && spatial == 1) {
      result = linalg::Conv1DNcwFcwOp::create(rewriter, loc, resultTypes,
                                              ValueRange{input, weight}, init,
                                              strides, dilations)
                   .getResult(0);
    } else if (group == 1 && spatial == 3) {
      result = linalg::Conv3DNcdhwFcdhwOp::create(rewriter, loc, resultTypes,
                                                  ValueRange{input, weight},
                                                  init, strides, dilations)
                   .getResult(0);
    } else if (group == channels && filters == channels && spatial == 2) {
      // Depthwise, one filter per channel: [C, 1, kh, kw] -> [C, kh, kw].
      auto wShape = cast<RankedTensorType>(weight.getType()).getShape();
      Value w = createReshape(rewriter, loc, weight,
                              {wShape[0], wShape[2], wShape[3]});
      result = linalg::DepthwiseConv2DNchwChwOp::create(
                   rewriter, loc, resultTypes, ValueRange{input, w}, init,
                   strides, dilations)
                   .getResult(0);
    } else {
      result =
          createGroupedConv(rewriter, loc, input, weight, init, op, kilnType);
    }
    rewriter.replaceOp(op,
                       convertTensor(rewriter, loc, result, accType, kilnType));
    return success();
  }
};

} // namespace

void mlir::kiln::populateKilnContractionToLinalgPatterns(
    RewritePatternSet &patterns, TypeConverter &converter) {
  patterns.add<MatMulLowering, ConvLowering>(converter, patterns.getContext());
}
