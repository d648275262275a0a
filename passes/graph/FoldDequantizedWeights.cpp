//===- FoldDequantizedWeights.cpp - DQ(constant) -> f32 constant ----------===//
//
// An ONNX QDQ model stores its weights as int8 constants behind a
// DequantizeLinear, which the importer composes as
// `(cast(q) - zero_point) * scale`. Where no int8 kernel consumes the bytes
// (kiln-fuse-quantized-matmul runs first), that chain would dequantize every
// weight on every run, and keep the weight transposes of kiln-conv-layout
// and Gemm from folding. This pass computes the f32 weights once at compile
// time, from the raw bytes (dense or dense_resource), with the per-axis
// scale and zero point broadcast as the ops do.
//
//===----------------------------------------------------------------------===//
#include "passes/graph/ConstantBytes.h"
#include "passes/graph/Dequantize.h"
#include "passes/graph/Passes.h"

#include "compiler/logging/Logging.h"
#include "dialects/kiln/KilnOps.h"
#include "dialects/kiln/NodeLocation.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cstring>

namespace mlir::kiln {
#define GEN_PASS_DEF_FOLDDEQUANTIZEDWEIGHTS
#include "passes/graph/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;

namespace {

/// Element `flat` of `result` read from an operand of `shape` broadcast
/// numpy-style (aligned on the right, size-1 dims repeated).
int64_t broadcastIndex(ArrayRef<int64_t> result, ArrayRef<int64_t> shape,
                       int64_t flat) {
  int64_t index = 0, stride = 1;
  for (int64_t d = result.size() - 1, s = shape.size() - 1; d >= 0; --d, --s) {
    int64_t coordinate = flat % result[d];
    flat /= result[d];
    if (s < 0)
      continue;
    if (shape[s] != 1)
      index += coordinate * stride;
    stride *= shape[s];
  }
  return index;
}

/// mul(cast(q) [- zero_point], scale) with every leaf a constant and q an
/// integer one -> the f32 constant.
struct FoldDequantize : OpRewritePattern<MulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MulOp op,
                                PatternRewriter &rewriter) const override {
    auto type = op.getType();
    if (!type.getElementType().isF32() || !type.hasStaticShape())
      return failure();
    std::optional<Dequantized> dq = matchDequantize(op.getResult());
    if (!dq)
      return failure();
    Value scale = dq->scale, zeroPoint = dq->zeroPoint;
    std::optional<std::vector<double>> q = constantValues(dq->quantized);
    std::optional<std::vector<double>> s = constantValues(scale);
    std::optional<std::vector<double>> z =
        zeroPoint ? constantValues(zeroPoint) : std::vector<double>{0.0};
    if (!q || !s || !z)
      return failure();
    ArrayRef<int64_t> shape = type.getShape();
    auto shapeOf = [](Value v) {
      return cast<RankedTensorType>(v.getType()).getShape();
    };
    SmallVector<int64_t> scalar;
    ArrayRef<int64_t> sShape = shapeOf(scale),
                      zShape = zeroPoint ? shapeOf(zeroPoint) : scalar;
    int64_t n = type.getNumElements();
    std::vector<float> values(n);
    for (int64_t e = 0; e < n; ++e) {
      // As the ops compute it: f32 subtract, then f32 multiply.
      float centered =
          float((*q)[e]) - float((*z)[broadcastIndex(shape, zShape, e)]);
      values[e] = centered * float((*s)[broadcastIndex(shape, sShape, e)]);
    }
    std::vector<char> bytes(n * sizeof(float));
    std::memcpy(bytes.data(), values.data(), bytes.size());
    rewriter.replaceOpWithNewOp<ConstantOp>(
        op, bytesToConstant(type, "dequantized", bytes));
    KILN_LOG("fusion", Info)
        << "dequantized weights " << onnxNodeName(op.getLoc())
        << " at compile time\n";
    return success();
  }
};

struct FoldDequantizedWeightsPass
    : mlir::kiln::impl::FoldDequantizedWeightsBase<FoldDequantizedWeightsPass> {
  using Base::Base;
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FoldDequantize>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
