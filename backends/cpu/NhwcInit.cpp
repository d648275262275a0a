//===- NhwcInit.cpp - NHWC accumulators seeded from their init ------------===//
//
// A convolution's init is usually a zero fill, or (a Conv with a bias) the
// bias broadcast over [N, OH, OW, F]:
//
//   %b = linalg.broadcast ins(%bias : tensor<F>) outs(%e : tensor<NxHxWxF>)
//          dimensions = [0, 1, 2]
//   %y = linalg.conv_2d_nhwc_hwcf ... outs(%b)
//
// The NHWC kernels keep their accumulators as vectors along the channels, so
// they start them from the fill value or from %bias[c : c + lanes] and write
// into %e: the broadcast tensor is never materialized (a pass over the
// whole output, and a copy for every convolution sharing the broadcast).
//
//===----------------------------------------------------------------------===//
#include "backends/cpu/NhwcCodegen.h"

using namespace mlir;
using namespace mlir::kiln;

std::optional<SeededInit> mlir::kiln::seededInit(Value init) {
  if (auto fill = init.getDefiningOp<linalg::FillOp>()) {
    if (!fill.hasPureTensorSemantics())
      return std::nullopt;
    return SeededInit{fill.getInputs()[0], Value(), fill.getOutputs()[0]};
  }
  auto broadcast = init.getDefiningOp<linalg::BroadcastOp>();
  if (!broadcast || !broadcast.hasPureTensorSemantics())
    return std::nullopt;
  auto inType = dyn_cast<RankedTensorType>(broadcast.getInput().getType());
  auto outType = cast<RankedTensorType>(init.getType());
  if (!inType || inType.getRank() != 1 || outType.getRank() != 4 ||
      !inType.getElementType().isF32() ||
      inType.getShape()[0] != outType.getShape()[3] ||
      broadcast.getDimensions() != ArrayRef<int64_t>{0, 1, 2})
    return std::nullopt;
  return SeededInit{Value(), broadcast.getInput(), broadcast.getInit()};
}

Value SeededInit::seed(OpBuilder &b, Location loc, VectorType type,
                       Value channel, bool inBounds) const {
  if (fillValue)
    return vector::BroadcastOp::create(b, loc, type, fillValue);
  Value zero = arith::ConstantOp::create(b, loc, type.getElementType(),
                                         b.getZeroAttr(type.getElementType()));
  return vector::TransferReadOp::create(b, loc, type, perChannel,
                                        ValueRange{channel}, zero,
                                        ArrayRef<bool>{inBounds});
}

void SeededInit::eraseIfUnused(RewriterBase &rewriter, Value init) const {
  if (init.use_empty())
    rewriter.eraseOp(init.getDefiningOp());
}
