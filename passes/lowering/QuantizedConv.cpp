//===- QuantizedConv.cpp - kiln.conv {input_zero_point} -> linalg ---------===//
//
// sum_{kh, kw, c} (x - zx) * w over 8-bit operands, as f32. As in
// QuantizedMatmul.cpp the zero point comes out of the sum,
// sum x * w - zx * sum_{kh, kw, c} w[.., f], so the contraction multiplies
// the raw bytes (unsigned x, signed w: VNNI's vpdpbusd) and starts from the
// per-filter correction, computed at compile time from the constant filter.
// The padding holds zx itself, which the correction cancels like any other
// input byte (a dequantized zero):
//
//   %xp   = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] { zx }
//   %init = linalg.broadcast (-zx * colsum[f] : tensor<Fxf32>)
//   %y    = linalg.generic {kiln.int8_contraction, kiln.int8_conv = strides,
//                           dilations} (n, oh, ow, f, kh, kw, c):
//             acc + sitofp(extui(xp[n, oh*sh + kh*dh, ow*sw + kw*dw, c])
//                          * extsi(w[kh, kw, c, f]))
//
// for channels_last, with the channels padded to a multiple of 4 (the
// filter with zero bytes, the input with zx by the same tensor.pad): VNNI
// multiplies quads of them. The NCHW form loops (n, f, oh, ow, c, kh, kw)
// over [N, C, H, W] and [F, C, KH, KW]. The CPU backend gives the NHWC form its
// VNNI direct convolution (ConvNhwc.cpp); anything else runs the generic.
//
//===----------------------------------------------------------------------===//
#include "passes/lowering/LoweringUtils.h"
#include "passes/lowering/Patterns.h"

#include "dialects/kiln/KilnOps.h"
#include "dialects/kiln/QuantizedContraction.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "passes/graph/ConstantBytes.h"

using namespace mlir;
using namespace mlir::kiln;

namespace {

struct QuantizedConvLowering : OpConversionPattern<ConvOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(ConvOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    std::optional<int64_t> zeroPoint = op.getInputZeroPoint();
    if (!zeroPoint)
      return failure();
    Location loc = op.getLoc();
    MLIRContext *ctx = op.getContext();
    Value input = adaptor.getInput();
    auto inType = cast<RankedTensorType>(input.getType());
    RankedTensorType outType = op.getType();
    if (!inType.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "run-time extents");
    bool nhwc = op.getChannelsLast();
    bool inputUnsigned =
        cast<IntegerType>(op.getInput().getType().getElementType())
            .isUnsigned();
    ElementsAttr weights;
    std::optional<std::vector<char>> bytes;
    if (matchPattern(op.getWeight(), m_Constant(&weights)))
      bytes = constantBytes(weights);
    if (!bytes)
      return rewriter.notifyMatchFailure(op, "the filter is not a constant");
    Type f32 = rewriter.getF32Type();

    // NHWC channels padded to a multiple of 4 (VNNI multiplies quads of
    // them): the filter with zero bytes, the input with the zero point.
    ArrayRef<int64_t> ws = cast<RankedTensorType>(weights.getType()).getShape();
    Value weight = adaptor.getWeight();
    int64_t channelPad = nhwc ? llvm::alignTo(ws[2], 4) - ws[2] : 0;
    if (channelPad) {
      auto wType = cast<RankedTensorType>(weight.getType());
      int64_t c = ws[2], c4 = c + channelPad, f = ws[3];
      std::vector<char> grown(ws[0] * ws[1] * c4 * f, 0);
      for (int64_t tap = 0; tap < ws[0] * ws[1]; ++tap)
        std::copy_n(bytes->begin() + tap * c * f, c * f,
                    grown.begin() + tap * c4 * f);
      auto grownType = wType.clone({ws[0], ws[1], c4, f});
      weight = arith::ConstantOp::create(
          rewriter, loc, grownType,
          cast<TypedAttr>(bytesToConstant(grownType, "int8_filter", grown)));
    }

    // Padding: the zero point's byte.
    ArrayRef<int64_t> pads = op.getPads();
    SmallVector<int64_t> low = {0}, high = {0};
    if (!nhwc)
      low.push_back(0), high.push_back(0);
    llvm::append_range(low, pads.take_front(2));
    llvm::append_range(high, pads.drop_front(2));
    if (nhwc)
      low.push_back(0), high.push_back(channelPad);
    Value padded =
        createPad(rewriter, loc, input, low, high,
                  rewriter.getIntegerAttr(inType.getElementType(), *zeroPoint));

    // -zx * (the sum of each filter's bytes), in the accumulator.
    int64_t filters = nhwc ? ws[3] : ws[0];
    int64_t perFilter = ws[0] * ws[1] * ws[2] * ws[3] / filters;
    std::vector<float> correction(filters, 0.f);
    for (int64_t f = 0; f < filters; ++f) {
      int64_t sum = 0;
      for (int64_t k = 0; k < perFilter; ++k)
        sum += int8_t((*bytes)[nhwc ? k * filters + f : f * perFilter + k]);
      correction[f] = float(-*zeroPoint * sum);
    }
    auto vecType = RankedTensorType::get({filters}, f32);
    Value perChannel = arith::ConstantOp::create(
        rewriter, loc, vecType,
        DenseElementsAttr::get(vecType, ArrayRef<float>(correction)));
    Value empty = createEmptyTensor(rewriter, loc, outType.getShape(), f32);
    SmallVector<int64_t> broadcastDims =
        nhwc ? SmallVector<int64_t>{0, 1, 2} : SmallVector<int64_t>{0, 2, 3};
    Value init = linalg::BroadcastOp::create(rewriter, loc, perChannel, empty,
                                             broadcastDims)
                     .getResult()[0];

    // Loops: NHWC (n, oh, ow, f, kh, kw, c); NCHW (n, f, oh, ow, c, kh, kw).
    auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
    ArrayRef<int64_t> strides = op.getStrides(), dilations = op.getDilations();
    unsigned n = 0, oh = nhwc ? 1 : 2, ow = nhwc ? 2 : 3, f = nhwc ? 3 : 1,
             kh = nhwc ? 4 : 5, kw = nhwc ? 5 : 6, c = nhwc ? 6 : 4;
    AffineExpr iy = d(oh) * strides[0] + d(kh) * dilations[0];
    AffineExpr ix = d(ow) * strides[1] + d(kw) * dilations[1];
    SmallVector<AffineExpr> in =
        nhwc ? SmallVector<AffineExpr>{d(n), iy, ix, d(c)}
             : SmallVector<AffineExpr>{d(n), d(c), iy, ix};
    SmallVector<AffineExpr> w =
        nhwc ? SmallVector<AffineExpr>{d(kh), d(kw), d(c), d(f)}
             : SmallVector<AffineExpr>{d(f), d(c), d(kh), d(kw)};
    SmallVector<AffineExpr> out =
        nhwc ? SmallVector<AffineExpr>{d(n), d(oh), d(ow), d(f)}
             : SmallVector<AffineExpr>{d(n), d(f), d(oh), d(ow)};
    using utils::IteratorType;
    auto par = IteratorType::parallel, red = IteratorType::reduction;
    auto generic = linalg::GenericOp::create(
        rewriter, loc, init.getType(), ValueRange{padded, weight}, init,
        ArrayRef<AffineMap>{AffineMap::get(7, 0, in, ctx),
                            AffineMap::get(7, 0, w, ctx),
                            AffineMap::get(7, 0, out, ctx)},
        ArrayRef<IteratorType>{par, par, par, par, red, red, red},
        [&](OpBuilder &b, Location l, ValueRange args) {
          linalg::YieldOp::create(
              b, l,
              ValueRange{int8MultiplyAdd(b, l, args[0], args[1], args[2],
                                         inputUnsigned)});
        });
    generic->setAttr(kInt8ContractionAttr, rewriter.getBoolAttr(inputUnsigned));
    if (nhwc)
      generic->setAttr(kInt8ConvAttr, rewriter.getDenseI64ArrayAttr(
                                          {strides[0], strides[1], dilations[0],
                                           dilations[1]}));
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

} // namespace

void mlir::kiln::populateKilnQuantizedConvToLinalgPatterns(
    RewritePatternSet &patterns, TypeConverter &typeConverter) {
  patterns.add<QuantizedConvLowering>(typeConverter, patterns.getContext(),
                                      /*benefit=*/2);
}
