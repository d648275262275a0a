//===- DynamicShape.cpp - ops whose result shape is a run-time value ------===//
//
//   dynamic_reshape  the ONNX shape read with tensor.extract, 0 and -1
//                    resolved with arith, checked with cf.assert, then
//                    tensor.reshape (a view after bufferization)
//
// Each check is a `cf.assert` whose message names the ONNX node; the CPU
// backend turns it into an error returned by the run (kiln-runtime-services).
//
//===----------------------------------------------------------------------===//
#include "passes/lowering/DynamicShapeUtils.h"
#include "passes/lowering/Patterns.h"

#include "dialects/kiln/KilnOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::kiln;

namespace {

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
    Value shape = tensor::FromElementsOp::create(
        rewriter, loc, RankedTensorType::get({rank}, rewriter.getIndexType()),
        dims);
    rewriter.replaceOpWithNewOp<tensor::ReshapeOp>(op, resultType, input,
                                                   shape);
    return success();
  }
};

} // namespace

void mlir::kiln::populateKilnDynamicShapeToLinalgPatterns(
    RewritePatternSet &patterns, TypeConverter &typeConverter) {
  patterns.add<DynamicReshapeLowering>(typeConverter, patterns.getContext());
}
