//===- FuseQuantizedConv.cpp - conv(DQ(x), DQ(w)) -> integer conv ---------===//
//
// ONNX QDQ models (onnxruntime.quantization, static, per-channel weights)
// spell an int8 convolution as a float one between DequantizeLinear nodes,
// which the importer composes of kiln ops:
//
//   x = (cast(x_q : ui8) - x_zero_point) * x_scale          (per tensor)
//   w = (cast(w_q : i8 constant [F, C, KH, KW]) - 0) * w_scale [F, 1, 1, 1]
//   y = kiln.conv x, w, bias
//
// This pass rewrites such a convolution as the integer convolution of the
// bytes (kiln.conv with `input_zero_point`), times one per-filter constant
// `x_scale * w_scale`, plus the bias:
//
//   y = kiln.add (kiln.mul (kiln.conv x_q, w_q {input_zero_point}),
//                          scale [F, 1, 1]), bias [F, 1, 1]
//
// The CPU backend runs it on VNNI's vpdpbusd over k-quads of the filter
// (ConvNhwc.cpp), the input read as bytes in place. The integer sums are
// exact; they are added to the f32 accumulator once per K block. Only for
// targets that have the instructions (the pipeline enables it). Candidates
// are logged under KILN_LOGS=fusion; fused ones count as `int8_kernels`.
//
//===----------------------------------------------------------------------===//
#include "passes/fusion/Passes.h"
#include "passes/fusion/QuantizedFusion.h"

#include "dialects/kiln/KilnOps.h"
#include "mlir/IR/Matchers.h"

#include <cmath>

namespace mlir::kiln {
#define GEN_PASS_DEF_FUSEQUANTIZEDCONV
#include "passes/fusion/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;

namespace {

struct FuseQuantizedConvPass
    : mlir::kiln::impl::FuseQuantizedConvBase<FuseQuantizedConvPass> {
  using Base::Base;

  /// The replacement of `op`, or a reason it has none (empty: not a
  /// quantized convolution at all, nothing to log).
  FailureOr<Value> rewrite(OpBuilder &b, ConvOp op, std::string &reason) {
    std::optional<Dequantized> x = matchByteDequantize(op.getInput());
    std::optional<Dequantized> w = matchByteDequantize(op.getWeight());
    if (!x || !w)
      return failure();
    auto xType = cast<RankedTensorType>(x->quantized.getType());
    auto wType = cast<RankedTensorType>(w->quantized.getType());
    RankedTensorType resultType = op.getType();
    if (!resultType.getElementType().isF32())
      return reason = "the result is not f32", failure();
    if (op.getChannelsLast() || resultType.getRank() != 4 || op.getGroup() != 1)
      return reason = "only 2-D NCHW convolutions of group 1 are fused",
             failure();
    if (!cast<IntegerType>(xType.getElementType()).isUnsigned())
      return reason = "the activations are int8, not uint8", failure();
    if (cast<IntegerType>(wType.getElementType()).isUnsigned() ||
        !matchPattern(w->quantized, m_Constant()))
      return reason = "the weights are not a constant int8 tensor", failure();
    if (!xType.hasStaticShape())
      return reason = "the activations have run-time dims", failure();
    if (w->zeroPoint && !isZeroConstant(w->zeroPoint))
      return reason = "the weights' zero point is not 0", failure();
    FailureOr<ActivationQuantization> xq = activationQuantization(*x, reason);
    if (failed(xq))
      return failure();
    int64_t filters = wType.getDimSize(0);
    // One scale per filter, [F, 1, 1, 1] as DequantizeLinear's axis 0
    // makes it (an [F] one would broadcast along KW), or one for all.
    auto scaleType = cast<RankedTensorType>(w->scale.getType());
    int64_t scaleCount = scaleType.getNumElements();
    bool perFilter = scaleCount == filters && scaleType.getRank() == 4 &&
                     scaleType.getDimSize(0) == filters;
    if (scaleCount != 1 && !perFilter)
      return reason = "the weights' scale is not one per filter", failure();
    std::optional<std::vector<float>> wScale =
        constantFloats(w->scale, filters);
    if (!wScale)
      return reason = "the weights' scale is not a constant", failure();

    Location loc = op.getLoc();
    b.setInsertionPoint(op);
    Value product =
        ConvOp::create(b, loc, x->quantized, w->quantized, /*bias=*/Value(),
                       op.getStridesAttr(), op.getPadsAttr(),
                       op.getDilationsAttr(), op.getGroupAttr(),
                       /*channels_last=*/nullptr,
                       b.getI64IntegerAttr(xq->zeroPoint))
            .getResult();
    std::vector<float> scale(filters);
    for (int64_t f = 0; f < filters; ++f)
      scale[f] = float(xq->scale * double((*wScale)[f]));
    auto perChannel = RankedTensorType::get({filters, 1, 1}, b.getF32Type());
    Value scaleConst = ConstantOp::create(
        b, loc, DenseElementsAttr::get(perChannel, ArrayRef<float>(scale)));
    Value y = MulOp::create(b, loc, resultType, product, scaleConst);
    if (Value bias = op.getBias()) {
      auto biasType = cast<RankedTensorType>(bias.getType());
      Value column =
          ReshapeOp::create(b, loc, biasType.clone({filters, 1, 1}), bias,
                            b.getDenseI64ArrayAttr({filters, 1, 1}));
      y = AddOp::create(b, loc, resultType, y, column);
    }
    return y;
  }

  void runOnOperation() override {
    fuseQuantized<ConvOp>(getOperation(), "conv",
                          [&](OpBuilder &b, ConvOp op, std::string &reason) {
                            return rewrite(b, op, reason);
                          });
  }
};
} // namespace
