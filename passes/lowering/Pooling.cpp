//===- Pooling.cpp - kiln.max_pool / kiln.avg_pool -> linalg --------------===//
//
// Pads are materialized with tensor.pad (the value that never wins for max,
// zero for sums), extended on the trailing side when ceil_mode makes the last
// window reach past the padded input. 1-D and 2-D pools use the named
// linalg.pooling_nc[h]w_{max,sum} ops; 3-D and unsigned max pools use a
// generic with the same window structure. channels_last (NHWC) 2-D pools use
// linalg.pooling_nhwc_{max,sum}.
//
// Average pooling divides the window sum by the number of counted taps. That
// number only varies near the borders; it is a constant when it cannot vary,
// otherwise a per-position tensor computed here, at compile time.
//
//===----------------------------------------------------------------------===//
#include "passes/lowering/DynamicShapeUtils.h"
#include "passes/lowering/LoweringUtils.h"
#include "passes/lowering/Patterns.h"

#include "dialects/kiln/KilnOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::kiln;

namespace {

/// Window attributes of a pool op, read once.
struct Window {
  ArrayRef<int64_t> inShape, outShape, kernel, strides, pads, dilations;
  int64_t spatial;
  bool channelsLast;

  template <typename PoolOp> static Window of(PoolOp op) {
    auto inType = cast<RankedTensorType>(op.getInput().getType());
    return {inType.getShape(),    op.getType().getShape(),
            op.getKernelShape(),  op.getStrides(),
            op.getPads(),         op.getDilations(),
            inType.getRank() - 2, op.getChannelsLast()};
  }

  /// The result's run-time extents (the batch, and spatial extents known
  /// only at run time: the importer gives those no ceil_mode).
  SmallVector<Value> resultSizes(OpBuilder &b, Location loc, Value input,
                                 Type resultType) const {
    return windowResultSizes(b, loc, input, cast<RankedTensorType>(resultType),
                             kernel, strides, dilations, pads, channelsLast);
  }

  /// Dim of spatial dim i: NC[D]HW, or NHWC.
  int64_t dimOf(int64_t i) const { return i + (channelsLast ? 1 : 2); }
  int64_t inSize(int64_t i) const { return inShape[dimOf(i)]; }
  int64_t outSize(int64_t i) const { return outShape[dimOf(i)]; }

  int64_t padBegin(int64_t i) const { return pads[i]; }
  int64_t padEnd(int64_t i) const { return pads[spatial + i]; }

  /// Full-rank tensor.pad amounts. The trailing side grows when ceil_mode
  /// lets the last window run past the declared padding.
  void paddings(SmallVectorImpl<int64_t> &low,
                SmallVectorImpl<int64_t> &high) const {
    low.assign(channelsLast ? 1 : 2, 0);
    high.assign(channelsLast ? 1 : 2, 0);
    for (int64_t i = 0; i < spatial; ++i) {
      int64_t in = inSize(i), out = outSize(i);
      low.push_back(padBegin(i));
      if (ShapedType::isDynamic(in)) { // no ceil_mode: nothing past the pads
        high.push_back(padEnd(i));
        continue;
      }
      int64_t needed =
          (out - 1) * strides[i] + dilations[i] * (kernel[i] - 1) + 1;
      int64_t available = in + padBegin(i) + padEnd(i);
      high.push_back(padEnd(i) + std::max<int64_t>(0, needed - available));
    }
    if (channelsLast) {
      low.push_back(0);
      high.push_back(0);
    }
  }

  /// Taps of window `o` in dim `i` that fall inside [lo, hi) (input coords).
  int64_t countTaps(int64_t i, int64_t o, int64_t lo, int64_t hi) const {
    int64_t count = 0;
    for (int64_t k = 0; k < kernel[i]; ++k) {
      int64_t pos = o * strides[i] - padBegin(i) + k * dilations[i];
      count += pos >= lo && pos < hi;
    }
    return count;
  }
};

using Combiner =
    function_ref<Value(OpBuilder &, Location, Value element, Value acc)>;

/// Window reduction as a generic over (n, c, out..., k...) (the input and
/// result maps put c last for channels_last); a shape-only
/// tensor of the kernel's size gives the k loops their bounds, exactly as the
/// named pooling ops do.
Value createPoolGeneric(OpBuilder &b, Location loc, Value input, Value init,
                        const Window &w, Combiner combine) {
  MLIRContext *ctx = b.getContext();
  int64_t spatial = w.spatial;
  unsigned numLoops = 2 + 2 * spatial;
  auto dim = [&](int64_t d) { return getAffineDimExpr(d, ctx); };
  SmallVector<AffineExpr> inExprs = {dim(0)};
  SmallVector<AffineExpr> windowExprs, outExprs = {dim(0)};
  if (!w.channelsLast) {
    inExprs.push_back(dim(1));
    outExprs.push_back(dim(1));
  }
  for (int64_t i = 0; i < spatial; ++i) {
    AffineExpr o = dim(2 + i), k = dim(2 + spatial + i);
    inExprs.push_back(o * w.strides[i] + k * w.dilations[i]);
    windowExprs.push_back(k);
    outExprs.push_back(o);
  }
  if (w.channelsLast) {
    inExprs.push_back(dim(1));
    outExprs.push_back(dim(1));
  }
  Type elementType = getElementType(input);
  Value window = createEmptyTensor(b, loc, w.kernel, elementType);
  SmallVector<utils::IteratorType> iterators = parallelIterators(numLoops);
  for (unsigned l = 2 + spatial; l < numLoops; ++l)
    iterators[l] = utils::IteratorType::reduction;
  auto generic = linalg::GenericOp::create(
      b, loc, init.getType(), ValueRange{input, window}, init,
      ArrayRef<AffineMap>{AffineMap::get(numLoops, 0, inExprs, ctx),
                          AffineMap::get(numLoops, 0, windowExprs, ctx),
                          AffineMap::get(numLoops, 0, outExprs, ctx)},
      iterators, [&](OpBuilder &nb, Location nl, ValueRange args) {
        linalg::YieldOp::create(nb, nl, combine(nb, nl, args[0], args[2]));
      });
  return generic.getResult(0);
}

/// The named 1-D/2-D NCHW or 2-D NHWC pooling op, if there is one for this
/// window.
template <typename Pool1D, typename Pool2D, typename Pool2DNhwc>
Value createNamedPool(OpBuilder &b, Location loc, Value input, Value init,
                      const Window &w) {
  if (w.spatial != 1 && w.spatial != 2)
    return {};
  if (w.channelsLast && w.spatial != 2)
    return {};
  Value window = createEmptyTensor(b, loc, w.kernel, getElementType(input));
  auto strides = b.getI64TensorAttr(w.strides);
  auto dilations = b.getI64TensorAttr(w.dilations);
  Type types = init.getType();
  SmallVector<Value> inputs = {input, window};
  if (w.spatial == 1)
    return Pool1D::create(b, loc, types, inputs, init, strides, dilations)
        .getResult(0);
  if (w.channelsLast)
    return Pool2DNhwc::create(b, loc, types, inputs, init, strides, dilations)
        .getResult(0);
  return Pool2D::create(b, loc, types, inputs, init, strides, dilations)
      .getResult(0);
}

struct MaxPoolLowering : OpConversionPattern<kiln::MaxPoolOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(kiln::MaxPoolOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Window w = Window::of(op);
    Type kilnType = getElementType(op.getInput());
    // Padding must never win: -inf, or the type's minimum for integers.
    TypedAttr lowest = getLowestValue(kilnType);
    SmallVector<int64_t> low, high;
    w.paddings(low, high);
    Value input =
        createPad(rewriter, loc, adaptor.getInput(), low, high, lowest);
    Value init = createFilledTensor(
        rewriter, loc, w.outShape,
        w.resultSizes(rewriter, loc, adaptor.getInput(), op.getType()), lowest);

    Value result;
    // The named ops take max_signed: right for floats and signed ints only.
    if (!isUnsignedLike(kilnType))
      result =
          createNamedPool<linalg::PoolingNcwMaxOp, linalg::PoolingNchwMaxOp,
                          linalg::PoolingNhwcMaxOp>(rewriter, loc, input, init,
                                                    w);
    if (!result)
      result = createPoolGeneric(
          rewriter, loc, input, init, w,
          [&](OpBuilder &b, Location l, Value element, Value acc) {
            return createMax(b, l, element, acc, kilnType);
          });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct AvgPoolLowering : OpConversionPattern<kiln::AvgPoolOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(kiln::AvgPoolOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type elementType = getElementType(op.getInput());
    if (!isa<FloatType>(elementType))
      return rewriter.notifyMatchFailure(op, "average of a non-float type");
    Type accType = getAccumulatorType(elementType);
    Window w = Window::of(op);
    // Over a run-time extent (no ceil_mode then: shape inference refuses
    // it) every window must count its whole kernel.
    bool runTime =
        llvm::any_of(llvm::seq<int64_t>(0, w.spatial), [&](int64_t i) {
          return ShapedType::isDynamic(w.inSize(i));
        });
    if (runTime && !op.getCountIncludePad() &&
        llvm::any_of(w.pads, [](int64_t p) { return p != 0; }))
      return rewriter.notifyMatchFailure(
          op, "a run-time extent with uncounted pads (the divisors would "
              "vary with it)");

    SmallVector<int64_t> low, high;
    w.paddings(low, high);
    Value input = createPad(rewriter, loc, adaptor.getInput(), low, high,
                            cast<TypedAttr>(rewriter.getZeroAttr(elementType)));
    Value init = createFilledTensor(
        rewriter, loc, w.outShape,
        w.resultSizes(rewriter, loc, adaptor.getInput(), op.getType()),
        cast<TypedAttr>(rewriter.getZeroAttr(accType)));
    Value sum =
        createNamedPool<linalg::PoolingNcwSumOp, linalg::PoolingNchwSumOp,
                        linalg::PoolingNhwcSumOp>(rewriter, loc, input, init,
                                                  w);
    if (!sum)
      sum = createPoolGeneric(
          rewriter, loc, input, init, w,
          [&](OpBuilder &b, Location l, Value element, Value acc) -> Value {
            Value x = convertScalar(b, l, element, elementType, accType);
            return arith::AddFOp::create(b, l, x, acc);
          });

    // Taps counted per output position, separately per spatial dim (the
    // window is a box, so the count is the product). Positions that ceil_mode
    // adds past the trailing pad are never counted.
    SmallVector<SmallVector<int64_t>> counts;
    bool uniform = true;
    for (int64_t i = 0; i < w.spatial; ++i) {
      int64_t in = w.inSize(i);
      if (ShapedType::isDynamic(in)) {
        // A run-time extent comes without ceil_mode, and without pads unless
        // they count (the importer's rule): every window counts its kernel.
        counts.push_back({w.kernel[i]});
        continue;
      }
      int64_t lo = op.getCountIncludePad() ? -w.padBegin(i) : 0;
      int64_t hi = op.getCountIncludePad() ? in + w.padEnd(i) : in;
      SmallVector<int64_t> &dimCounts = counts.emplace_back();
      for (int64_t o = 0; o < w.outSize(i); ++o) {
        dimCounts.push_back(w.countTaps(i, o, lo, hi));
        uniform &= dimCounts.back() == dimCounts.front();
      }
    }

    auto resultType = cast<RankedTensorType>(op.getType());
    Value result;
    if (uniform) {
      int64_t divisor = 1;
      for (auto &dimCounts : counts)
        divisor *= dimCounts.front();
      result = createElementwiseGeneric(
          rewriter, loc, resultType, sum,
          [&](OpBuilder &b, Location l, ValueRange args) {
            Value d = createScalarConstant(b, l, accType, divisor);
            Value avg = arith::DivFOp::create(b, l, args[0], d);
            return convertScalar(b, l, avg, accType, elementType);
          });
    } else {
      // [out...] divisors ([out..., 1] for channels_last), broadcast over N
      // and C by the elementwise maps.
      SmallVector<int64_t> outSpatial;
      for (int64_t i = 0; i < w.spatial; ++i)
        outSpatial.push_back(w.outSize(i));
      SmallVector<int64_t> divisorShape(outSpatial);
      if (w.channelsLast)
        divisorShape.push_back(1);
      auto divisorType = RankedTensorType::get(divisorShape, accType);
      SmallVector<Attribute> values;
      SmallVector<int64_t> index(w.spatial, 0);
      for (int64_t linear = 0; linear < divisorType.getNumElements();
           ++linear) {
        int64_t divisor = 1;
        for (int64_t i = 0; i < w.spatial; ++i)
          divisor *= counts[i][index[i]];
        values.push_back(rewriter.getFloatAttr(accType, divisor));
        for (int64_t i = w.spatial - 1; i >= 0; --i) {
          if (++index[i] < outSpatial[i])
            break;
          index[i] = 0;
        }
      }
      Value divisors = arith::ConstantOp::create(
          rewriter, loc, DenseElementsAttr::get(divisorType, values));
      result = createElementwiseGeneric(
          rewriter, loc, resultType, ValueRange{sum, divisors},
          [&](OpBuilder &b, Location l, ValueRange args) {
            Value avg = arith::DivFOp::create(b, l, args[0], args[1]);
            return convertScalar(b, l, avg, accType, elementType);
          });
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void mlir::kiln::populateKilnPoolingToLinalgPatterns(
    RewritePatternSet &patterns, TypeConverter &converter) {
  patterns.add<MaxPoolLowering, AvgPoolLowering>(converter,
                                                 patterns.getContext());
}
