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
// In NHWC (a chain kiln-conv-layout moved to channels_last) the filter
// [KH, KW, C, F] is already Wt's bytes and the result needs no transpose;
// a 1x1 stride-1 convolution reads the image itself as the rows:
//
//   cols[n, oh, ow, kh, kw, c] = x[n, oh * s0 + kh * d0, ow * s1 + kw * d1, c]
//   result = expand(collapse(cols) [N*OH*OW, KH*KW*C] x W [KH*KW*C, F])
//
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

namespace {
/// The filter's bytes when it is a static f32 [4-D] constant.
std::optional<std::vector<char>> filterBytes(ElementsAttr weight) {
  auto type = cast<RankedTensorType>(weight.getType());
  if (type.getRank() != 4 || !type.getElementType().isF32() ||
      !type.hasStaticShape())
    return std::nullopt;
  std::optional<std::vector<char>> bytes = constantBytes(weight);
  if (!bytes || (int64_t)bytes->size() != type.getNumElements() * 4)
    return std::nullopt;
  return bytes;
}

/// The im2col product [N*OH*OW, F]: the window copy cols[n, oh, ow, t0, t1,
/// t2] of `input` read through `window` (6 dims -> the input's 4),
/// collapsed to rows [N*OH*OW, t0*t1*t2], times the filter `wtBytes`
/// [t0*t1*t2, F], each row starting from `bias` (or zeros). `rows`, when
/// given, replaces the copy (a 1x1 stride-1 NHWC convolution's image).
Value im2colProduct(OpBuilder &b, Location loc, Value input,
                    ArrayRef<OpFoldResult> outSizes, ArrayRef<int64_t> taps,
                    AffineMap window, const std::vector<char> &wtBytes,
                    int64_t filters, Value bias, Value rows = Value()) {
  Type f32 = b.getF32Type();
  int64_t depth = taps[0] * taps[1] * taps[2];
  auto wtType = RankedTensorType::get({depth, filters}, f32);
  Value wt = arith::ConstantOp::create(
      b, loc,
      cast<TypedAttr>(bytesToConstant(wtType, "im2col_filter", wtBytes)));
  if (!rows) {
    SmallVector<OpFoldResult> colsSizes(outSizes);
    for (int64_t t : taps)
      colsSizes.push_back(b.getIndexAttr(t));
    Value colsInit = tensor::EmptyOp::create(b, loc, colsSizes, f32);
    SmallVector<AffineMap> maps{
        window, AffineMap::getMultiDimIdentityMap(6, b.getContext())};
    Value cols = linalg::GenericOp::create(
                     b, loc, colsInit.getType(), ValueRange{input},
                     ValueRange{colsInit}, maps, parallelIterators(6),
                     [](OpBuilder &nb, Location nl, ValueRange args) {
                       linalg::YieldOp::create(nb, nl, args[0]);
                     })
                     .getResult(0);
    rows = tensor::CollapseShapeOp::create(
        b, loc, cols, ArrayRef<ReassociationIndices>{{0, 1, 2}, {3, 4, 5}});
  }
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
  return linalg::MatmulOp::create(b, loc, ValueRange{rows, wt}, ValueRange{acc})
      .getResult(0);
}

/// The extents of `type`, its run-time ones from `sizes` in order.
SmallVector<OpFoldResult> extentsOf(OpBuilder &b, RankedTensorType type,
                                    ValueRange sizes) {
  SmallVector<OpFoldResult> extents;
  size_t next = 0;
  for (int64_t d : type.getShape())
    extents.push_back(ShapedType::isDynamic(d)
                          ? OpFoldResult(sizes[next++])
                          : OpFoldResult(b.getIndexAttr(d)));
  return extents;
}
} // namespace

FailureOr<Value> mlir::kiln::createIm2colConvNhwc(
    OpBuilder &b, Location loc, Value input, ElementsAttr weight, Value bias,
    RankedTensorType resultType, ValueRange resultSizes,
    ArrayRef<int64_t> strides, ArrayRef<int64_t> dilations) {
  // [KH, KW, C, F] is already the matmul's [KH*KW*C, F].
  std::optional<std::vector<char>> bytes = filterBytes(weight);
  if (!bytes)
    return failure();
  ArrayRef<int64_t> w = cast<RankedTensorType>(weight.getType()).getShape();
  SmallVector<OpFoldResult> extents = extentsOf(b, resultType, resultSizes);
  OpFoldResult n = extents[0], oh = extents[1], ow = extents[2];
  Value rows;
  if (w[0] == 1 && w[1] == 1 && strides[0] == 1 && strides[1] == 1)
    rows = tensor::CollapseShapeOp::create(
        b, loc, input, ArrayRef<ReassociationIndices>{{0, 1, 2}, {3}});
  auto d = [&](unsigned i) { return getAffineDimExpr(i, b.getContext()); };
  // cols[n, oh, ow, kh, kw, c].
  AffineMap window =
      AffineMap::get(6, 0,
                     {d(0), d(1) * strides[0] + d(3) * dilations[0],
                      d(2) * strides[1] + d(4) * dilations[1], d(5)},
                     b.getContext());
  Value product = im2colProduct(b, loc, input, {n, oh, ow}, w.take_front(3),
                                window, *bytes, w[3], bias, rows);
  return tensor::ExpandShapeOp::create(
             b, loc, resultType, product,
             ArrayRef<ReassociationIndices>{{0, 1, 2}, {3}},
             ArrayRef<OpFoldResult>{n, oh, ow, b.getIndexAttr(w[3])})
      .getResult();
}

FailureOr<Value> mlir::kiln::createIm2colConv(
    OpBuilder &b, Location loc, Value input, ElementsAttr weight, Value bias,
    RankedTensorType resultType, ValueRange resultSizes,
    ArrayRef<int64_t> strides, ArrayRef<int64_t> dilations) {
  Type f32 = b.getF32Type();
  std::optional<std::vector<char>> bytes = filterBytes(weight);
  if (!bytes)
    return failure();
  ArrayRef<int64_t> w = cast<RankedTensorType>(weight.getType()).getShape();
  int64_t filters = w[0], depth = w[1] * w[2] * w[3];

  // The filter as [C*KH*KW, F]: row (c * KH + i) * KW + j, column f.
  std::vector<char> transposed(bytes->size());
  const auto *src = reinterpret_cast<const float *>(bytes->data());
  auto *dst = reinterpret_cast<float *>(transposed.data());
  for (int64_t f = 0; f < filters; ++f)
    for (int64_t k = 0; k < depth; ++k)
      dst[k * filters + f] = src[f * depth + k];

  SmallVector<OpFoldResult> extents = extentsOf(b, resultType, resultSizes);
  OpFoldResult n = extents[0], oh = extents[2], ow = extents[3];
  auto d = [&](unsigned i) { return getAffineDimExpr(i, b.getContext()); };
  // cols[n, oh, ow, c, kh, kw].
  AffineMap window =
      AffineMap::get(6, 0,
                     {d(0), d(3), d(1) * strides[0] + d(4) * dilations[0],
                      d(2) * strides[1] + d(5) * dilations[1]},
                     b.getContext());
  Value product = im2colProduct(b, loc, input, {n, oh, ow}, w.drop_front(1),
                                window, transposed, filters, bias);

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
