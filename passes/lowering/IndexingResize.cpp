//===- IndexingResize.cpp - kiln.resize -> linalg.generic with tap tables -===//
//
// Shapes and scales are static, so ONNX's whole coordinate arithmetic
// (transformation mode, nearest rounding, linear/cubic coefficients, edge
// clamping, exclude_outside, tf_crop_and_resize's extrapolation) runs here,
// in double precision, once per output coordinate of each dim. Each dim gets
// a few "taps": constant tables of source index and weight per output
// coordinate. The generated code is one linalg.generic over the result that
// reads the tables through projected maps and sums weight products times
// tensor.extract of the input:
//
//   nearest      1 tap, no weight
//   linear       2 taps, cubic 4 taps (1 where a dim is not resized)
//
// Dims that are not resized read the loop index directly. With run-time
// scales or roi (`params`), the tables are computed by the artifact
// (IndexingResizeTaps.cpp) and every dim reads its full set of taps. So
// are they for a dim whose input extent is known only at run time; its
// result extent, where `sizes` has -1, is ONNX's floor(in * scale), also
// computed then (a dim of scale 1 without `params` is read directly):
//
//   %r = kiln.resize %x {scales = [1, 1, 2, 2], sizes = [-1, 3, -1, -1], ...}
//       : (tensor<?x3x?x?xf32>) -> tensor<?x3x?x?xf32>
//   ->  %h = tensor.dim %x, %c2 ; %oh = floor(%h * 2.0)
//       %i0, %i1, %w0, %w1 = linalg.generic ... -> tensor<?xi64>, tensor<?xf32>
//       linalg.generic ins(%i0, %i1, %w0, %w1, ...) -> tensor<?x3x?x?xf32>
//
//===----------------------------------------------------------------------===//
#include "passes/lowering/DynamicShapeUtils.h"
#include "passes/lowering/IndexingCommon.h"
#include "passes/lowering/LoweringUtils.h"

#include "dialects/kiln/KilnOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <cmath>

using namespace mlir;
using namespace mlir::kiln;

namespace {

/// The taps of one dim: for output coordinate o and tap t, read source
/// index[o * taps + t] with weight[o * taps + t]; inside[o] is false where
/// tf_crop_and_resize extrapolates.
struct DimTaps {
  int64_t taps = 1;
  bool weighted = false, identity = false, anyOutside = false;
  SmallVector<int64_t> index;
  SmallVector<double> weight;
  SmallVector<bool> inside;
};

double sourceCoordinate(const ResizeTapParams &p, int64_t x, int64_t in,
                        int64_t out, double scale, double roiStart,
                        double roiEnd, bool &outside) {
  // ONNX's reference uses the unrounded output width in a few modes.
  double width = scale * in;
  StringRef t = p.transform;
  outside = false;
  if (t == "align_corners")
    return width == 1 ? 0.0 : x * (in - 1) / (width - 1);
  if (t == "asymmetric")
    return x / scale;
  if (t == "pytorch_half_pixel")
    return width == 1 ? -0.5 : (x + 0.5) / scale - 0.5;
  if (t == "tf_half_pixel_for_nn")
    return (x + 0.5) / scale;
  if (t == "half_pixel_symmetric") {
    double adjustment = out / width, center = in / 2.0;
    return center * (1 - adjustment) + (x + 0.5) / scale - 0.5;
  }
  if (t == "tf_crop_and_resize") {
    double span = roiEnd - roiStart;
    double v =
        out == 1 ? span * (in - 1) / 2 : x * span * (in - 1) / (width - 1);
    v += roiStart * (in - 1);
    outside = v < 0 || v > in - 1;
    return v;
  }
  return (x + 0.5) / scale - 0.5; // half_pixel
}

/// Coefficients of the taps at floor(x) - n/2 + 1 ... (ONNX's reference).
SmallVector<double> coefficients(const ResizeTapParams &p, double ratio) {
  if (p.mode == "nearest") {
    if (ratio == 1.0)
      return {0, 1};
    StringRef m = p.nearestMode;
    if (m == "round_prefer_ceil")
      return {ratio < 0.5 ? 1.0 : 0.0, ratio >= 0.5 ? 1.0 : 0.0};
    if (m == "floor")
      return {1, 0};
    if (m == "ceil")
      return {0, 1};
    return {ratio <= 0.5 ? 1.0 : 0.0, ratio > 0.5 ? 1.0 : 0.0};
  }
  if (p.mode == "linear")
    return {1 - ratio, ratio};
  double a = p.cubicA, r = ratio, s = 1 - ratio;
  return {((a * (r + 1) - 5 * a) * (r + 1) + 8 * a) * (r + 1) - 4 * a,
          ((a + 2) * r - (a + 3)) * r * r + 1,
          ((a + 2) * s - (a + 3)) * s * s + 1,
          ((a * (s + 1) - 5 * a) * (s + 1) + 8 * a) * (s + 1) - 4 * a};
}

DimTaps computeTaps(const ResizeTapParams &p, int64_t in, int64_t out,
                    double scale, double roiStart, double roiEnd) {
  DimTaps d;
  int64_t n = p.mode == "cubic" ? 4 : 2;
  int64_t pad = (n + 1) / 2;
  SmallVector<int64_t> index;
  SmallVector<double> weight;
  for (int64_t o = 0; o < out; ++o) {
    bool outside;
    double x =
        sourceCoordinate(p, o, in, out, scale, roiStart, roiEnd, outside);
    d.inside.push_back(!outside);
    d.anyOutside |= outside;
    double whole = std::floor(x);
    SmallVector<double> coeffs = coefficients(p, x == whole ? 1.0 : x - whole);
    // The n positions of the edge-padded input nearest to x (ties to the
    // lower one), in increasing order, as the reference picks them.
    double xp = x + pad;
    int64_t limit = in + 2 * pad;
    SmallVector<int64_t> candidates;
    for (int64_t i = (int64_t)std::floor(xp) - n; i <= (int64_t)xp + n; ++i)
      if (i >= 0 && i < limit)
        candidates.push_back(i);
    llvm::stable_sort(candidates, [&](int64_t a, int64_t b) {
      return std::abs(xp - a) < std::abs(xp - b);
    });
    candidates.resize(std::min<size_t>(n, candidates.size()));
    llvm::sort(candidates);
    double sum = 0;
    for (int64_t t = 0; t < n; ++t) {
      int64_t source = t < (int64_t)candidates.size() ? candidates[t] - pad : 0;
      if (p.excludeOutside && (source < 0 || source >= in))
        coeffs[t] = 0;
      sum += coeffs[t];
      index.push_back(std::clamp<int64_t>(source, 0, in - 1));
      weight.push_back(coeffs[t]);
    }
    if (p.excludeOutside && sum != 0)
      for (int64_t t = 0; t < n; ++t)
        weight[o * n + t] /= sum;
  }
  // One tap of weight 1 per output (nearest, or a dim that is not resized):
  // keep just that tap.
  bool single = true;
  SmallVector<int64_t> chosen;
  for (int64_t o = 0; o < out && single; ++o) {
    int64_t nonzero = 0, at = 0;
    for (int64_t t = 0; t < n; ++t)
      if (weight[o * n + t] != 0)
        ++nonzero, at = index[o * n + t];
    single =
        nonzero == 1 && llvm::count(ArrayRef(weight).slice(o * n, n), 1.0) == 1;
    chosen.push_back(at);
  }
  if (single) {
    d.index = chosen;
    d.identity = in == out && !d.anyOutside;
    for (int64_t o = 0; o < out && d.identity; ++o)
      d.identity = chosen[o] == o;
    return d;
  }
  d.taps = n;
  d.weighted = true;
  d.index = index;
  d.weight = weight;
  return d;
}

/// Whether a dim of scale 1 keeps its coordinates: every transformation
/// but tf_crop_and_resize maps o to o then, except that ONNX's reference
/// moves tf_half_pixel_for_nn's by half a pixel (a ceil nearest mode reads
/// o + 1 of the batch); Kiln keeps such dims as onnxruntime does.
bool keepsDim(const ResizeTapParams &p, double scale) {
  return scale == 1.0 && p.transform != "tf_crop_and_resize";
}

Value tableConstant(OpBuilder &b, Location loc, Type elementType,
                    ArrayRef<Attribute> values) {
  auto type = RankedTensorType::get({(int64_t)values.size()}, elementType);
  return arith::ConstantOp::create(b, loc,
                                   DenseElementsAttr::get(type, values));
}

struct ResizeLowering : OpConversionPattern<ResizeOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(ResizeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(
        getTypeConverter()->convertType(op.getResult().getType()));
    Value input = adaptor.getInput();
    auto inShape = cast<RankedTensorType>(input.getType()).getShape();
    int64_t rank = type.getRank();
    Type elementType = type.getElementType();
    if (op.getMode() != "nearest" && !isa<FloatType>(elementType))
      return rewriter.notifyMatchFailure(op, "interpolation needs floats");
    Type accType = isa<FloatType>(elementType) ? getAccumulatorType(elementType)
                                               : Type(rewriter.getF32Type());
    ResizeTapParams p{
        op.getMode(), op.getCoordinateTransformationMode(), op.getNearestMode(),
        op.getCubicCoeffA().convertToDouble(), op.getExcludeOutside()};
    ArrayRef<double> roi = op.getRoi();

    SmallVector<DimTaps> dims;
    SmallVector<BroadcastOperand> tables;
    SmallVector<Value> resultSizes;
    MLIRContext *ctx = rewriter.getContext();
    Value params = adaptor.getParams();
    auto f64 = [&](double v) -> Value {
      return arith::ConstantOp::create(rewriter, loc,
                                       rewriter.getF64FloatAttr(v));
    };
    for (int64_t d = 0; d < rank; ++d) {
      AffineMap map = mapOfDims(ctx, rank, {d});
      bool runTimeIn = ShapedType::isDynamic(inShape[d]);
      bool runTimeOut = type.isDynamicDim(d);
      if (params || runTimeIn || runTimeOut) {
        Value in =
            runTimeIn
                ? Value(tensor::DimOp::create(rewriter, loc, input, d))
                : arith::ConstantIndexOp::create(rewriter, loc, inShape[d]);
        // Scale 1, nothing read from params: the loop index itself (see
        // keepsDim).
        if (!params && keepsDim(p, op.getScales()[d]) && runTimeOut) {
          dims.emplace_back().identity = true;
          resultSizes.push_back(in);
          continue;
        }
        auto read = [&](int64_t i) -> Value {
          Value at = arith::ConstantIndexOp::create(rewriter, loc, i);
          return tensor::ExtractOp::create(rewriter, loc, params, at);
        };
        // A static size of a run-time extent divides by it for its scale:
        // an empty input has nothing to read from.
        if (runTimeIn && !runTimeOut && type.getDimSize(d) > 0) {
          Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
          emitRuntimeCheck(rewriter, loc,
                           arith::CmpIOp::create(rewriter, loc,
                                                 arith::CmpIPredicate::sgt, in,
                                                 zero),
                           "Resize: dim " + Twine(d) +
                               " of the input is empty, but the result's "
                               "is not");
        }
        RunTimeDim dim;
        dim.scale = params ? read(d) : f64(op.getScales()[d]);
        dim.roiStart = params ? read(rank + d) : f64(roi.empty() ? 0 : roi[d]);
        dim.roiEnd =
            params ? read(2 * rank + d) : f64(roi.empty() ? 1 : roi[rank + d]);
        dim.in = in;
        if (runTimeOut) {
          // ONNX's output extent: floor(in * scale).
          Value inI = arith::IndexCastOp::create(rewriter, loc,
                                                 rewriter.getI64Type(), in);
          Value inF = arith::SIToFPOp::create(rewriter, loc,
                                              rewriter.getF64Type(), inI);
          Value scaled = arith::MulFOp::create(rewriter, loc, inF, dim.scale);
          Value floor = math::FloorOp::create(rewriter, loc, scaled);
          Value outI = arith::FPToSIOp::create(rewriter, loc,
                                               rewriter.getI64Type(), floor);
          dim.out = arith::IndexCastOp::create(rewriter, loc,
                                               rewriter.getIndexType(), outI);
          resultSizes.push_back(dim.out);
        } else {
          dim.out =
              arith::ConstantIndexOp::create(rewriter, loc, type.getDimSize(d));
        }
        RunTimeTaps t = buildRunTimeTaps(rewriter, loc, p, dim, accType);
        DimTaps &taps = dims.emplace_back();
        taps.taps = t.index.size();
        taps.weighted = !t.weight.empty();
        taps.anyOutside = t.inside != nullptr;
        for (Value v : llvm::concat<Value>(t.index, t.weight))
          tables.push_back({v, map});
        if (t.inside)
          tables.push_back({t.inside, map});
        continue;
      }
      if (keepsDim(p, op.getScales()[d]) && inShape[d] == type.getDimSize(d)) {
        dims.emplace_back().identity = true;
        continue;
      }
      dims.push_back(computeTaps(p, inShape[d], type.getDimSize(d),
                                 op.getScales()[d], roi.empty() ? 0 : roi[d],
                                 roi.empty() ? 1 : roi[rank + d]));
      const DimTaps &taps = dims.back();
      if (taps.identity)
        continue;
      int64_t out = type.getDimSize(d);
      for (int64_t t = 0; t < taps.taps; ++t) {
        SmallVector<Attribute> column;
        for (int64_t o = 0; o < out; ++o)
          column.push_back(
              rewriter.getI64IntegerAttr(taps.index[o * taps.taps + t]));
        tables.push_back(
            {tableConstant(rewriter, loc, rewriter.getI64Type(), column), map});
      }
      for (int64_t t = 0; taps.weighted && t < taps.taps; ++t) {
        SmallVector<Attribute> column;
        for (int64_t o = 0; o < out; ++o)
          column.push_back(
              rewriter.getFloatAttr(accType, taps.weight[o * taps.taps + t]));
        tables.push_back({tableConstant(rewriter, loc, accType, column), map});
      }
      if (taps.anyOutside) {
        SmallVector<Attribute> column;
        for (bool in : taps.inside)
          column.push_back(rewriter.getBoolAttr(in));
        tables.push_back(
            {tableConstant(rewriter, loc, rewriter.getI1Type(), column), map});
      }
    }

    double extrapolation = op.getExtrapolationValue().convertToDouble();
    auto body = [&](OpBuilder &b, Location l, ValueRange args) -> Value {
      // Per dim: the index values of its taps, their weights, inside flag.
      SmallVector<SmallVector<Value>> indices(rank), weights(rank);
      Value inside;
      size_t next = 0;
      for (int64_t d = 0; d < rank; ++d) {
        const DimTaps &taps = dims[d];
        if (taps.identity) {
          indices[d].push_back(linalg::IndexOp::create(b, l, d));
          continue;
        }
        for (int64_t t = 0; t < taps.taps; ++t)
          indices[d].push_back(
              arith::IndexCastOp::create(b, l, b.getIndexType(), args[next++]));
        for (int64_t t = 0; taps.weighted && t < taps.taps; ++t)
          weights[d].push_back(args[next++]);
        if (taps.anyOutside) {
          Value flag = args[next++];
          inside = inside ? arith::AndIOp::create(b, l, inside, flag) : flag;
        }
      }
      // Sum over all tap combinations of (product of weights) * element.
      Value sum;
      SmallVector<int64_t> tap(rank, 0);
      while (true) {
        SmallVector<Value> coords;
        Value w;
        for (int64_t d = 0; d < rank; ++d) {
          coords.push_back(indices[d][tap[d]]);
          if (dims[d].weighted)
            w = w ? arith::MulFOp::create(b, l, w, weights[d][tap[d]])
                  : weights[d][tap[d]];
        }
        Value element = tensor::ExtractOp::create(b, l, input, coords);
        if (w) {
          if (element.getType() != accType)
            element = arith::ExtFOp::create(b, l, accType, element);
          Value term = arith::MulFOp::create(b, l, w, element);
          sum = sum ? arith::AddFOp::create(b, l, sum, term) : term;
        } else {
          sum = element;
        }
        int64_t d = rank - 1;
        while (d >= 0 && ++tap[d] == (int64_t)indices[d].size())
          tap[d--] = 0;
        if (d < 0)
          break;
      }
      if (sum.getType() != elementType)
        sum = arith::TruncFOp::create(b, l, elementType, sum);
      if (!inside)
        return sum;
      Value fill = createScalarConstant(b, l, elementType, extrapolation);
      return arith::SelectOp::create(b, l, inside, sum, fill);
    };
    rewriter.replaceOp(op, createParallelGeneric(rewriter, loc, type, tables,
                                                 resultSizes, body));
    return success();
  }
};

} // namespace

void mlir::kiln::populateKilnResizeToLinalgPatterns(
    RewritePatternSet &patterns, TypeConverter &typeConverter) {
  patterns.add<ResizeLowering>(typeConverter, patterns.getContext());
}
