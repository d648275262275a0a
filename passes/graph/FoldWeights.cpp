//===- FoldWeights.cpp - Transpose/reshape weight constants at compile time
//===//

#include "passes/graph/ConstantBytes.h"
#include "passes/graph/Passes.h"

#include "compiler/logging/Logging.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_FOLDWEIGHTS
#include "passes/graph/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;

namespace {
/// transpose(constant) -> constant with permuted bytes.
struct FoldConstantTranspose : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rewriter) const override {
    ElementsAttr value;
    if (!matchPattern(op.getInput(), m_Constant(&value)))
      return failure();
    auto bytes = constantBytes(value);
    if (!bytes)
      return failure();
    auto inType = cast<RankedTensorType>(op.getInput().getType());
    auto outType = op.getType();
    size_t width = inType.getElementTypeBitWidth() / 8;
    int64_t rank = inType.getRank();
    SmallVector<int64_t> inStrides(rank, 1);
    for (int64_t d = rank - 2; d >= 0; --d)
      inStrides[d] = inStrides[d + 1] * inType.getDimSize(d + 1);
    // Walk the output in order, advancing an index into the input.
    std::vector<char> out(bytes->size());
    SmallVector<int64_t> index(rank, 0);
    ArrayRef<int64_t> perm = op.getPerm();
    for (int64_t i = 0, n = outType.getNumElements(); i < n; ++i) {
      int64_t src = 0;
      for (int64_t d = 0; d < rank; ++d)
        src += index[d] * inStrides[perm[d]];
      std::memcpy(out.data() + i * width, bytes->data() + src * width, width);
      for (int64_t d = rank - 1; d >= 0; --d) {
        if (++index[d] < outType.getDimSize(d))
          break;
        index[d] = 0;
      }
    }
    KILN_LOG("graph", Debug) << "folded transpose of a "
                             << bytes->size() / width << "-element constant\n";
    rewriter.replaceOpWithNewOp<ConstantOp>(
        op, bytesToConstant(outType, "transposed", out));
    return success();
  }
};

/// reshape(dense_resource constant) -> the same bytes with the new shape.
struct FoldConstantReshape : OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReshapeOp op,
                                PatternRewriter &rewriter) const override {
    DenseResourceElementsAttr value;
    if (!matchPattern(op.getInput(), m_Constant(&value)))
      return failure();
    rewriter.replaceOpWithNewOp<ConstantOp>(
        op, DenseResourceElementsAttr::get(op.getType(), value.getRawHandle()));
    return success();
  }
};

struct FoldWeightsPass : mlir::kiln::impl::FoldWeightsBase<FoldWeightsPass> {
  using Base::Base;
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FoldConstantTranspose, FoldConstantReshape>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
