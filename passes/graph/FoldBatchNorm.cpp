//===- FoldBatchNorm.cpp - batch_norm(conv(x)) -> conv(x) -----------------===//
//
// A batch norm with constant parameters folds into the convolution before
// it; one that has no such convolution becomes `x * a + b` with per-channel
// constants, which elementwise fusion, epilogue fusion and the layout
// passes (transposes sink through elementwise ops with constants) handle.
//
//===----------------------------------------------------------------------===//

#include "dialects/kiln/NodeLocation.h"
#include "passes/graph/ConstantBytes.h"
#include "passes/graph/Passes.h"

#include "compiler/logging/Logging.h"
#include "compiler/logging/Report.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>

namespace mlir::kiln {
#define GEN_PASS_DEF_FOLDBATCHNORM
#include "passes/graph/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;

namespace {
/// f32 contents of a constant operand, or nullopt.
std::optional<std::vector<float>> floats(Value v) {
  ElementsAttr attr;
  if (!v || !matchPattern(v, m_Constant(&attr)) ||
      !cast<ShapedType>(attr.getType()).getElementType().isF32())
    return std::nullopt;
  auto bytes = constantBytes(attr);
  if (!bytes)
    return std::nullopt;
  std::vector<float> out(bytes->size() / 4);
  std::memcpy(out.data(), bytes->data(), bytes->size());
  return out;
}

struct FoldBatchNormIntoConv : OpRewritePattern<BatchNormOp> {
  FoldBatchNormIntoConv(MLIRContext *ctx)
      : OpRewritePattern(ctx, /*benefit=*/2) {}
  LogicalResult matchAndRewrite(BatchNormOp bn,
                                PatternRewriter &rewriter) const override {
    auto conv = bn.getInput().getDefiningOp<ConvOp>();
    // Batch norm scales axis 1: the filters of an NCHW conv only.
    if (!conv || conv.getChannelsLast() || !conv->hasOneUse())
      return failure();
    auto weight = floats(conv.getWeight());
    auto scale = floats(bn.getScale()), shift = floats(bn.getBias());
    auto mean = floats(bn.getMean()), var = floats(bn.getVariance());
    if (!weight || !scale || !shift || !mean || !var)
      return failure();
    size_t filters = conv.getType().getDimSize(1);
    std::vector<float> bias(filters, 0.0f);
    if (conv.getBias()) {
      auto b = floats(conv.getBias());
      if (!b)
        return failure();
      bias = *b;
    }
    size_t perFilter = weight->size() / filters;
    double eps = bn.getEpsilon().convertToDouble();
    for (size_t c = 0; c < filters; ++c) {
      float s = (float)((*scale)[c] / std::sqrt((double)(*var)[c] + eps));
      for (size_t i = 0; i < perFilter; ++i)
        (*weight)[c * perFilter + i] *= s;
      bias[c] = (bias[c] - (*mean)[c]) * s + (*shift)[c];
    }
    auto weightType = cast<RankedTensorType>(conv.getWeight().getType());
    auto biasType =
        RankedTensorType::get({(int64_t)filters}, rewriter.getF32Type());
    auto bytes = [](const std::vector<float> &v) {
      return ArrayRef<char>(reinterpret_cast<const char *>(v.data()),
                            v.size() * sizeof(float));
    };
    rewriter.setInsertionPoint(conv);
    Value newWeight = ConstantOp::create(
        rewriter, conv.getWeight().getLoc(),
        bytesToConstant(weightType, "folded_weight", bytes(*weight)));
    Value newBias = ConstantOp::create(
        rewriter, bn.getLoc(),
        bytesToConstant(biasType, "folded_bias", bytes(bias)));
    auto folded =
        ConvOp::create(rewriter, conv.getLoc(), conv.getInput(), newWeight,
                       newBias, conv.getStridesAttr(), conv.getPadsAttr(),
                       conv.getDilationsAttr(), conv.getGroupAttr(),
                       /*channels_last=*/nullptr, /*input_zero_point=*/nullptr);
    KILN_LOG("fusion", Info)
        << "folded batch norm '" << onnxNodeName(bn.getLoc()) << "' into conv '"
        << onnxNodeName(conv.getLoc()) << "'\n";
    report::count("batch_norms_folded");
    rewriter.replaceOp(bn, folded.getResult());
    rewriter.eraseOp(conv);
    return success();
  }
};

/// batch_norm(x) with constant f32 parameters and no conv to fold into:
/// x * a + b, a = scale / sqrt(var + eps), b = bias - mean * a, both shaped
/// [C, 1, ..., 1] to broadcast along axis 1.
struct BatchNormToAffine : OpRewritePattern<BatchNormOp> {
  BatchNormToAffine(MLIRContext *ctx) : OpRewritePattern(ctx, /*benefit=*/1) {}
  LogicalResult matchAndRewrite(BatchNormOp bn,
                                PatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(bn.getType());
    if (!type.getElementType().isF32() || type.getRank() < 2 ||
        type.isDynamicDim(1))
      return failure();
    auto scale = floats(bn.getScale()), shift = floats(bn.getBias());
    auto mean = floats(bn.getMean()), var = floats(bn.getVariance());
    int64_t channels = type.getDimSize(1);
    if (!scale || !shift || !mean || !var ||
        (int64_t)scale->size() != channels ||
        (int64_t)shift->size() != channels ||
        (int64_t)mean->size() != channels || (int64_t)var->size() != channels)
      return failure();
    double eps = bn.getEpsilon().convertToDouble();
    std::vector<float> a(channels), b(channels);
    for (int64_t c = 0; c < channels; ++c) {
      double s = (*scale)[c] / std::sqrt((double)(*var)[c] + eps);
      a[c] = (float)s;
      b[c] = (float)((*shift)[c] - (*mean)[c] * s);
    }
    SmallVector<int64_t> shape(type.getRank() - 1, 1);
    shape[0] = channels;
    auto paramType = RankedTensorType::get(shape, rewriter.getF32Type());
    auto bytes = [](const std::vector<float> &v) {
      return ArrayRef<char>(reinterpret_cast<const char *>(v.data()),
                            v.size() * sizeof(float));
    };
    Location loc = bn.getLoc();
    Value aConst = ConstantOp::create(
        rewriter, loc, bytesToConstant(paramType, "bn_scale", bytes(a)));
    Value bConst = ConstantOp::create(
        rewriter, loc, bytesToConstant(paramType, "bn_shift", bytes(b)));
    Value scaled = MulOp::create(rewriter, loc, type, bn.getInput(), aConst);
    Value shifted = AddOp::create(rewriter, loc, type, scaled, bConst);
    KILN_LOG("fusion", Info)
        << "batch norm '" << onnxNodeName(loc)
        << "' (no conv to fold into) became a per-channel multiply-add\n";
    rewriter.replaceOp(bn, shifted);
    return success();
  }
};

struct FoldBatchNormPass
    : mlir::kiln::impl::FoldBatchNormBase<FoldBatchNormPass> {
  using Base::Base;
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FoldBatchNormIntoConv, BatchNormToAffine>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
