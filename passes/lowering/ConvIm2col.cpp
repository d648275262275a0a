//===- ConvIm2col.cpp - Convolutions over run-time images as matmuls ------===//
//
// The register-tiled convolution kernels take static images. A 2-D f32
// NCHW convolution (one group, constant filter) whose height or width is
// known only when the model runs becomes an im2col copy and one matmul
// whose only run-time extent is its row count, which kiln-slice-run-time-
// rows cuts into static row blocks for the tiled matmul kernel:
//
//   cols[n, oh, ow, c, kh, kw] = x[n, c, oh * s0 + kh * d0, ow * s1 + kw * d1]
//   y = collapse(cols) [N*OH*OW, C*KH*KW] x Wt [C*KH*KW, F]   (+ bias rows)
//   result = transpose(expand(y) [N, OH, OW, F]) [N, F, OH, OW]
//
// Wt is the filter [F, C, KH, KW] transposed at compile time, a constant
// the matmul packs into panels like any weight.
//
//===----------------------------------------------------------------------===//
#include "passes/lowering/LoweringUtils.h"

#include "passes/graph/ConstantBytes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <cstring>

using namespace mlir;
using namespace mlir::kiln;

FailureOr<Value> mlir::kiln::createIm2colConv(
    OpBuilder &b, Location loc, Value input, ElementsAttr weight, Value bias,
    RankedTensorType resultType, ValueRange resultSizes,
    ArrayRef<int64_t> strides, ArrayRef<int64_t> dilations) {
  MLIRContext *ctx = b.getContext();
  Type f32 = b.getF32Type();
  auto wType = cast<RankedTensorType>(weight.getType());
  if (wType.getRank() != 4 || !wType.getElementType().isF32() ||
      !wType.hasStaticShape())
    return failure();
  int64_t filters = wType.getDimSize(0), channels = wType.getDimSize(1),
          kh = wType.getDimSize(2), kw = wType.getDimSize(3);
  int64_t depth = channels * kh * kw;

  // The filter as [C*KH*KW, F]: row (c * KH + i) * KW + j, column f.
  std::optional<std::vector<char>> bytes = constantBytes(weight);
  if (!bytes || (int64_t)bytes->size() != filters * depth * 4)
    return failure();
  std::vector<char> transposed(bytes->size());
  const auto *src = reinterpret_cast<const float *>(bytes->data());
  auto *dst = reinterpret_cast<float *>(transposed.data());
  for (int64_t f = 0; f < filters; ++f)
    for (int64_t k = 0; k < depth; ++k)
      dst[k * filters + f] = src[f * depth + k];
  auto wtType = RankedTensorType::get({depth, filters}, f32);
  Value wt = arith::ConstantOp::create(
      b, loc,
      cast<TypedAttr>(bytesToConstant(wtType, "im2col_filter", transposed)));

  // The result's extents, run-time ones from `resultSizes` in order.
  SmallVector<OpFoldResult> extents;
  size_t next = 0;
  for (int64_t d : resultType.getShape())
    extents.push_back(ShapedType::isDynamic(d)
                          ? OpFoldResult(resultSizes[next++])
                          : OpFoldResult(b.getIndexAttr(d)));
  OpFoldResult n = extents[0], oh = extents[2], ow = extents[3];

  // cols[n, oh, ow, c, kh, kw].
  SmallVector<OpFoldResult> colsSizes{n,
                                      oh,
                                      ow,
                                      b.getIndexAttr(channels),
                                      b.getIndexAttr(kh),
                                      b.getIndexAttr(kw)};
  Value colsInit = tensor::EmptyOp::create(b, loc, colsSizes, f32);
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  SmallVector<AffineMap> maps{
      AffineMap::get(6, 0,
                     {d(0), d(3), d(1) * strides[0] + d(4) * dilations[0],
                      d(2) * strides[1] + d(5) * dilations[1]},
                     ctx),
      AffineMap::getMultiDimIdentityMap(6, ctx)};
  Value cols = linalg::GenericOp::create(
                   b, loc, colsInit.getType(), ValueRange{input},
                   ValueRange{colsInit}, maps, parallelIterators(6),
                   [](OpBuilder &nb, Location nl, ValueRange args) {
                     linalg::YieldOp::create(nb, nl, args[0]);
                   })
                   .getResult(0);
  Value rows = tensor::CollapseShapeOp::create(
      b, loc, cols, ArrayRef<ReassociationIndices>{{0, 1, 2}, {3, 4, 5}});

  // The accumulator: the bias in every row, or zeros.
  Value m = tensor::DimOp::create(b, loc, rows, 0);
  Value empty = tensor::EmptyOp::create(
      b, loc, ArrayRef<OpFoldResult>{m, b.getIndexAttr(filters)}, f32);
  Value acc;
  if (bias)
    acc = linalg::BroadcastOp::create(b, loc, bias, empty, ArrayRef<int64_t>{0})
              .getResult()[0];
  else
    acc = linalg::FillOp::create(
              b, loc,
              ValueRange{arith::ConstantOp::create(b, loc, b.getZeroAttr(f32))},
              ValueRange{empty})
              .getResult(0);
  Value product =
      linalg::MatmulOp::create(b, loc, ValueRange{rows, wt}, ValueRange{acc})
          .getResult(0);

  // [N*OH*OW, F] -> [N, OH, OW, F] -> [N, F, OH, OW].
  SmallVector<int64_t> nhwc{resultType.getDimSize(0), resultType.getDimSize(2),
                            resultType.getDimSize(3), filters};
  Value image = tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get(nhwc, f32), product,
      ArrayRef<ReassociationIndices>{{0, 1, 2}, {3}},
      ArrayRef<OpFoldResult>{n, oh, ow, b.getIndexAttr(filters)});
  Value out = tensor::EmptyOp::create(
      b, loc, ArrayRef<OpFoldResult>{n, b.getIndexAttr(filters), oh, ow}, f32);
  return linalg::TransposeOp::create(b, loc, image, out,
                                     ArrayRef<int64_t>{0, 3, 1, 2})
      .getResults()[0];
}
