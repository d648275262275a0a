//===- QuantizedMatmul.cpp - kiln.quantized_matmul -> linalg --------------===//
//
// sum_k (a - za) * b over 8-bit operands, as f32. The zero point comes out
// of the sum, sum_k a * b - za * sum_k b[k, n], so the contraction itself
// multiplies the raw bytes (what VNNI's vpdpbusd does: unsigned a, signed b)
// and starts from the correction row, computed at compile time when b is a
// constant (as kiln-fuse-quantized-matmul makes it), else per run:
//
//   %colsum = linalg.generic (n, k) -> (n): sum of b[k, n] in i32
//   %init   = linalg.generic (m, n): sitofp(-za * colsum[n])      (f32)
//   %y      = linalg.generic {kiln.int8_contraction} (m, n, k):
//               acc + sitofp(ext(a) * extsi(b))                   (f32)
//
// Each product is exact in i32 and in f32 (|a b| <= 255 * 128), so the
// loops are exact while partial sums stay below 2^24; the CPU backend's
// VNNI micro-kernel accumulates whole K blocks in i32 and adds them to the
// f32 accumulator once per block. Leading lhs dims are rows (collapsed).
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

struct QuantizedMatMulLowering : OpConversionPattern<QuantizedMatMulOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(QuantizedMatMulOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = op.getContext();
    Value lhs = adaptor.getLhs(), rhs = adaptor.getRhs();
    auto lhsType = cast<RankedTensorType>(lhs.getType());
    auto rhsType = cast<RankedTensorType>(rhs.getType());
    if (!lhsType.hasStaticShape() || !rhsType.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "run-time extents");
    bool lhsUnsigned =
        cast<IntegerType>(op.getLhs().getType().getElementType()).isUnsigned();
    int64_t rank = lhsType.getRank();
    int64_t k = rhsType.getDimSize(0), n = rhsType.getDimSize(1);
    int64_t m = lhsType.getNumElements() / std::max<int64_t>(k, 1);
    Type i32 = rewriter.getI32Type(), f32 = rewriter.getF32Type();
    using utils::IteratorType;
    auto par = IteratorType::parallel, red = IteratorType::reduction;

    ReassociationIndices rows;
    for (int64_t d = 0; d + 1 < rank; ++d)
      rows.push_back(d);
    Value a = rank == 2
                  ? lhs
                  : tensor::CollapseShapeOp::create(
                        rewriter, loc, lhs,
                        SmallVector<ReassociationIndices>{rows, {rank - 1}})
                        .getResult();

    // The zero-point correction row, -za * colsum(b), as the accumulator's
    // starting value (a zero fill when za = 0).
    int64_t zeroPoint = op.getLhsZeroPoint();
    Value init;
    if (zeroPoint == 0) {
      init = createFilledTensor(rewriter, loc, {m, n},
                                cast<TypedAttr>(rewriter.getZeroAttr(f32)));
    } else {
      Value colsum = createFilledTensor(
          rewriter, loc, {n}, cast<TypedAttr>(rewriter.getZeroAttr(i32)));
      ElementsAttr weights;
      std::optional<std::vector<char>> bytes;
      if (matchPattern(op.getRhs(), m_Constant(&weights)))
        bytes = constantBytes(weights);
      if (bytes) {
        std::vector<int32_t> sums(n, 0);
        for (int64_t r = 0; r < k; ++r)
          for (int64_t c = 0; c < n; ++c)
            sums[c] += int8_t((*bytes)[r * n + c]);
        auto type = RankedTensorType::get({n}, i32);
        colsum = arith::ConstantOp::create(
            rewriter, loc, type,
            DenseElementsAttr::get(type, ArrayRef<int32_t>(sums)));
      } else
        colsum = linalg::GenericOp::create(
                     rewriter, loc, colsum.getType(), ValueRange{rhs}, colsum,
                     ArrayRef<AffineMap>{mapOfDims(ctx, 2, {1, 0}),
                                         mapOfDims(ctx, 2, {0})},
                     ArrayRef<IteratorType>{par, red},
                     [&](OpBuilder &b, Location l, ValueRange args) {
                       Value x = arith::ExtSIOp::create(b, l, i32, args[0]);
                       linalg::YieldOp::create(
                           b, l,
                           ValueRange{arith::AddIOp::create(b, l, args[1], x)});
                     })
                     .getResult(0);
      Value empty =
          tensor::EmptyOp::create(rewriter, loc, ArrayRef<int64_t>{m, n}, f32);
      init = linalg::GenericOp::create(
                 rewriter, loc, empty.getType(), ValueRange{colsum}, empty,
                 ArrayRef<AffineMap>{mapOfDims(ctx, 2, {1}),
                                     mapOfDims(ctx, 2, {0, 1})},
                 ArrayRef<IteratorType>{par, par},
                 [&](OpBuilder &b, Location l, ValueRange args) {
                   // In i64: -za * colsum overflows i32 past K ~ 65k.
                   Type i64 = b.getI64Type();
                   Value za = arith::ConstantOp::create(
                       b, l, b.getI64IntegerAttr(-zeroPoint));
                   Value c = arith::MulIOp::create(
                       b, l, arith::ExtSIOp::create(b, l, i64, args[0]), za);
                   linalg::YieldOp::create(
                       b, l, ValueRange{arith::SIToFPOp::create(b, l, f32, c)});
                 })
                 .getResult(0);
    }

    auto generic = linalg::GenericOp::create(
        rewriter, loc, init.getType(), ValueRange{a, rhs}, init,
        ArrayRef<AffineMap>{mapOfDims(ctx, 3, {0, 2}),
                            mapOfDims(ctx, 3, {2, 1}),
                            mapOfDims(ctx, 3, {0, 1})},
        ArrayRef<IteratorType>{par, par, red},
        [&](OpBuilder &b, Location l, ValueRange args) {
          linalg::YieldOp::create(
              b, l,
              ValueRange{int8MultiplyAdd(b, l, args[0], args[1], args[2],
                                         lhsUnsigned)});
        });
    generic->setAttr(kInt8ContractionAttr, rewriter.getBoolAttr(lhsUnsigned));
    Value result = generic.getResult(0);
    if (rank != 2)
      result = tensor::ExpandShapeOp::create(
          rewriter, loc, op.getType(), result,
          SmallVector<ReassociationIndices>{rows, {rank - 1}});
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void mlir::kiln::populateKilnQuantizedMatMulToLinalgPatterns(
    RewritePatternSet &patterns, TypeConverter &typeConverter) {
  patterns.add<QuantizedMatMulLowering>(typeConverter, patterns.getContext());
}
