//===- ImportRoiAlign.cpp - RoiAlign through kiln.grid_sample -------------===//
//
// RoiAlign (average mode, fixed sampling_ratio) samples each output bin of
// each region at sampling_ratio^2 points with bilinear interpolation and
// averages them. The points depend on the regions, which arrive at run time,
// but their number does not, so it is composed from kiln ops:
//
//   y[r, ph*s + iy] = start_h[r] + (ph + (iy + 0.5) / s) * bin_h[r]
//   x[r, pw*s + ix] likewise                  (s = sampling_ratio)
//   samples = grid_sample(X[batch_indices], grid of (x, y), linear, border,
//                         align_corners)      -> [R, C, oh*s, ow*s]
//   output  = mean over each s x s block of samples * (point inside [-1, H]
//             x [-1, W]), as the spec gives 0 for points beyond.
//
// With align_corners the grid's -1/1 are the centers of the corner elements,
// so a point at input index y is the grid value 2y / (H - 1) - 1, and border
// padding clamps coordinates into [0, H - 1] exactly as RoiAlign does.
// sampling_ratio = 0 (a per-region adaptive count) and mode = max are
// rejected.
//
//===----------------------------------------------------------------------===//

#include "compiler/import/onnx/ImportNNBuilder.h"

#include "onnx/onnx.pb.h"

#include <fmt/format.h>

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::onnx_import;

namespace {
using Results = FailureOr<SmallVector<Value>>;

/// Sample coordinates of one spatial dim: [R, out * s] input indices, for
/// regions starting at `start` [R, 1] with bins of `bin` [R, 1].
Value samplePoints(NNBuilder &e, Value start, Value bin, int64_t out,
                   int64_t s) {
  SmallVector<float> offsets;
  for (int64_t p = 0; p < out; ++p)
    for (int64_t i = 0; i < s; ++i)
      offsets.push_back((float)(p + (i + 0.5) / s));
  Value table = e.c.constant(cast<ElementsAttr>(DenseElementsAttr::get(
      RankedTensorType::get({out * s}, e.elementType(start)),
      ArrayRef<float>(offsets))));
  return e.add(start, e.mul(table, bin));
}

/// Grid values ([-1, 1] over the element centers) of input indices `v`.
Value normalized(NNBuilder &e, Value v, int64_t size) {
  if (size == 1)
    return e.mul(v, e.k(v, 0));
  return e.sub(e.mul(v, e.k(v, 2.0 / (size - 1))), e.k(v, 1));
}

/// 1 where -1 <= v <= size, else 0.
Value insideMask(NNBuilder &e, Value v, int64_t size) {
  Value in = e.op<AndOp>({e.op<GreaterEqualOp>({v, e.k(v, -1)}),
                          e.op<LessEqualOp>({v, e.k(v, (double)size)})});
  return e.cast(in, e.elementType(v));
}

Results importRoiAlign(NodeContext &c) {
  Value x = c.input(0), rois = c.input(1), batchIndices = c.input(2);
  if (!x || !rois || !batchIndices)
    return c.fail("needs X, rois and batch_indices");
  auto xType = c.type(x), roiType = c.type(rois);
  if (xType.getRank() != 4 || roiType.getRank() != 2 ||
      roiType.getDimSize(1) != 4 || c.type(batchIndices).getRank() != 1 ||
      c.type(batchIndices).getDimSize(0) != roiType.getDimSize(0))
    return c.fail("expects X [N, C, H, W], rois [R, 4], batch_indices [R]");
  if (!isa<FloatType>(xType.getElementType()))
    return c.fail("X must be floats");
  std::string mode = c.attrString("mode", "avg");
  if (mode != "avg")
    return c.unsupported("mode '" + mode + "' (only avg)");
  int64_t s = c.attrInt("sampling_ratio", 0);
  if (s <= 0)
    return c.unsupported("sampling_ratio 0 (the number of samples would "
                         "depend on each region's size at run time)");
  int64_t outH = c.attrInt("output_height", 1),
          outW = c.attrInt("output_width", 1);
  double scale = c.attrFloat("spatial_scale", 1.0);
  // Opset 16 added half_pixel (the default); before, regions were not
  // shifted by half an element.
  std::string transform =
      c.attrString("coordinate_transformation_mode",
                   c.opset >= 16 ? "half_pixel" : "output_half_pixel");
  if (transform != "half_pixel" && transform != "output_half_pixel")
    return c.fail("unknown coordinate_transformation_mode '" + transform + "'");
  bool halfPixel = transform == "half_pixel";
  int64_t regions = roiType.getDimSize(0), channels = xType.getDimSize(1);
  int64_t height = xType.getDimSize(2), width = xType.getDimSize(3);
  if (height == 0 || width == 0)
    return c.unsupported("empty spatial dims");

  NNBuilder e(c);
  Type type = xType.getElementType();
  Value boxes = e.cast(rois, type);
  auto corner = [&](int64_t i) {
    Value v = e.mul(e.slice(boxes, 1, i, i + 1), e.k(boxes, scale));
    return halfPixel ? e.sub(v, e.k(v, 0.5)) : v; // [R, 1]
  };
  Value startW = corner(0), startH = corner(1);
  Value sizeW = e.sub(corner(2), startW), sizeH = e.sub(corner(3), startH);
  if (!halfPixel) {
    sizeW = e.max(sizeW, e.k(sizeW, 1));
    sizeH = e.max(sizeH, e.k(sizeH, 1));
  }
  Value ys = samplePoints(e, startH, e.div(sizeH, e.k(sizeH, outH)), outH, s);
  Value xs = samplePoints(e, startW, e.div(sizeW, e.k(sizeW, outW)), outW, s);
  int64_t rowsS = outH * s, colsS = outW * s;

  // grid [R, oh*s, ow*s, 2] of (x, y).
  Value zeros = e.splat({regions, rowsS, colsS, 1}, type, 0);
  Value gridX =
      e.add(e.reshape(normalized(e, xs, width), {regions, 1, colsS, 1}), zeros);
  Value gridY = e.add(
      e.reshape(normalized(e, ys, height), {regions, rowsS, 1, 1}), zeros);
  Value grid = e.concat({gridX, gridY}, 3);
  Value features = e.op<GatherOp>({x, batchIndices},
                                  {c.named("axis", c.b.getI64IntegerAttr(0))});
  Value samples = e.op<GridSampleOp>(
      {features, grid}, {c.named("mode", c.b.getStringAttr("linear")),
                         c.named("padding_mode", c.b.getStringAttr("border")),
                         c.named("align_corners", c.b.getBoolAttr(true))});
  Value mask =
      e.mul(e.reshape(insideMask(e, ys, height), {regions, 1, rowsS, 1}),
            e.reshape(insideMask(e, xs, width), {regions, 1, 1, colsS}));
  Value blocks =
      e.reshape(e.mul(samples, mask), {regions, channels, outH, s, outW, s});
  return e.done({e.reduceMean(blocks, {3, 5}, false)});
}
} // namespace

void mlir::kiln::onnx_import::registerRoiAlignHandlers(
    llvm::StringMap<OpHandler> &t) {
  t["RoiAlign"] = importRoiAlign;
}
