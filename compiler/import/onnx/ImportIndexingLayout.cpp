//===- ImportIndexingLayout.cpp - Pad, Resize, GridSample, block moves ----===//
//
// Pads and output sizes change the result shape, so they must be constants
// or implied by the result shape the model declares (checked when the model
// runs); Pad's fill value does not and may be computed at run time. Resize's
// scales and roi may be run-time values: they travel to kiln.resize as its
// f64 `params` operand, and the declared result shape gives the sizes.
// Resize over a run-time extent (a fully convolutional net exported with
// dynamic height and width) gives that dim size -1, floor(in * scale)
// computed when the model runs; given sizes divide by the run-time extent
// for their scale (in `params`).
// DepthToSpace and SpaceToDepth need no op of their own: reshape,
// transpose, reshape.
//
//===----------------------------------------------------------------------===//

#include "compiler/import/onnx/ImportIndexing.h"
#include "compiler/import/onnx/ImportNNBuilder.h"
#include "compiler/import/onnx/SymbolicShapes.h"

#include "onnx/onnx.pb.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include <cmath>
#include <fmt/format.h>
#include <fmt/ranges.h>

using namespace mlir;
using namespace mlir::kiln::onnx_import;
namespace k = mlir::kiln;

namespace {
/// Negative pads crop: they become a slice before the (non-negative) pad.
Results importPad(NodeContext &c) {
  Value input = c.input(0);
  auto type = c.type(input);
  int64_t rank = type.getRank();
  std::string mode = c.attrString("mode", "constant");
  SmallVector<int64_t> pads;
  Value value;
  if (c.opset < 11) {
    auto p = c.attrInts(c.opset < 2 ? "paddings" : "pads");
    if (!p)
      return c.fail("pads are required");
    pads = *p;
    value = c.scalar(type.getElementType(), c.attrFloat("value", 0.0));
  } else {
    if (c.hasInput(2) && c.type(c.input(2)).getNumElements() == 1) {
      auto scalar = reshapeTo(c, c.input(2), {});
      if (failed(scalar))
        return failure();
      value = *scalar;
    } else {
      value = c.scalar(type.getElementType(), 0.0);
    }
    auto p = c.constantInts(1);
    if (!p) {
      if (mode != "constant" && mode != "reflect" && mode != "edge" &&
          mode != "wrap")
        return c.unsupported("Pad mode '" + mode + "'");
      Results r = importRunTimePad(c, mode, value);
      return succeeded(r) || !c.error.empty() ? r : c.needsConstant(1);
    }
    pads = *p;
    if (c.hasInput(3)) {
      // Opset 18: pads name only `axes`, the others stay unpadded.
      auto axes = c.constantInts(3);
      if (!axes)
        return c.needsConstant(3);
      if (pads.size() != 2 * axes->size())
        return c.fail("pads must have two values per axis");
      SmallVector<int64_t> full(2 * rank, 0);
      for (auto [i, a] : llvm::enumerate(*axes)) {
        auto axis = c.normalizeAxis(a, rank);
        if (!axis)
          return c.fail("axis out of range");
        full[*axis] = pads[i];
        full[rank + *axis] = pads[axes->size() + i];
      }
      pads = full;
    }
  }
  if ((int64_t)pads.size() != 2 * rank)
    return c.fail(
        fmt::format("expected {} pads, got {}", 2 * rank, pads.size()));

  bool crops = llvm::any_of(pads, [](int64_t p) { return p < 0; });
  if (crops) {
    SmallVector<int64_t> starts, ends, steps(rank, 1);
    for (int64_t d = 0; d < rank; ++d) {
      int64_t dim = type.getDimSize(d);
      int64_t start = std::min(dim, std::max<int64_t>(0, -pads[d]));
      int64_t end =
          std::max(start, dim - std::max<int64_t>(0, -pads[rank + d]));
      starts.push_back(start);
      ends.push_back(end);
      pads[d] = std::max<int64_t>(0, pads[d]);
      pads[rank + d] = std::max<int64_t>(0, pads[rank + d]);
    }
    auto cropped = c.make<k::SliceOp>(input, {c.named("starts", c.i64s(starts)),
                                              c.named("ends", c.i64s(ends)),
                                              c.named("steps", c.i64s(steps))});
    if (failed(cropped))
      return failure();
    input = *cropped;
  }
  if (llvm::all_of(pads, [](int64_t p) { return p == 0; }))
    return SmallVector<Value>{input};
  if (mode != "constant" && mode != "reflect" && mode != "edge" &&
      mode != "wrap")
    return c.unsupported("Pad mode '" + mode + "'");
  return one(c.make<k::PadOp>({input, value},
                              {c.named("pads", c.i64s(pads)),
                               c.named("mode", c.b.getStringAttr(mode))}));
}

struct ResizeSpec {
  SmallVector<int64_t> sizes;
  SmallVector<double> scales, roi;
  std::string mode, transform, nearestMode;
  /// Run-time scales and roi (full rank), when the model computes them.
  Value runTimeScales, runTimeRoi;
};

/// A 1-D f64 tensor of run-time input `i` holding `n` values, or null.
Value runTimeVector(NodeContext &c, size_t i, int64_t n) {
  Value v = vectorInput(c, i, c.b.getF64Type());
  return v && c.type(v).getDimSize(0) == n ? v : Value();
}

/// Run-time scales of input `i` (one per dim): the result shape is the one
/// the model declares, checked when the model runs against ONNX's
/// floor(input extent * scale). Fills s.sizes and s.runTimeScales.
LogicalResult runTimeScales(NodeContext &c, ResizeSpec &s, size_t i) {
  auto type = c.type(c.input(0));
  int64_t rank = type.getRank();
  auto declared = c.declaredShape(0);
  if (!declared || (int64_t)declared->size() != rank || !type.hasStaticShape())
    return failure();
  NNBuilder e(c);
  Value scales = runTimeVector(c, i, rank);
  if (!scales)
    return failure();
  SmallVector<double> extents(type.getShape().begin(), type.getShape().end());
  auto extentType = RankedTensorType::get({rank}, c.b.getF64Type());
  Value in = c.constant(DenseElementsAttr::get(extentType, ArrayRef(extents)));
  Value sizes = e.cast(e.op<k::FloorOp>({e.mul(scales, in)}), c.b.getI64Type());
  if (e.failed ||
      failed(c.requireValues(
          sizes, *declared,
          fmt::format("{}: input {} '{}' gives a result shape other than "
                      "the declared [{}] of '{}'",
                      c.opType(), i, c.node.input(i),
                      fmt::join(*declared, ", "), c.node.output(0)))))
    return failure();
  s.sizes = *declared;
  s.scales.assign(rank, 1.0);
  s.runTimeScales = scales;
  return success();
}

/// Scales of a Resize given sizes over run-time input extents: size / in
/// for each such dim, computed when the model runs (the others constant).
Value runTimeSizeScales(NodeContext &c, const ResizeSpec &s) {
  auto type = c.type(c.input(0));
  int64_t rank = type.getRank();
  SmallVector<double> numerators;
  SymInts denominators;
  for (int64_t d = 0; d < rank; ++d) {
    bool runTime = type.isDynamicDim(d) && s.sizes[d] >= 0;
    numerators.push_back(runTime ? (double)s.sizes[d] : s.scales[d]);
    denominators.push_back(runTime ? dimOf(c, c.input(0), d)
                                   : SymInt(c.b.getI64IntegerAttr(1)));
  }
  NNBuilder e(c);
  auto f64s = RankedTensorType::get({rank}, c.b.getF64Type());
  Value n = c.constant(DenseElementsAttr::get(f64s, ArrayRef(numerators)));
  Value extents = materialize(c, denominators,
                              RankedTensorType::get({rank}, c.b.getI64Type()));
  return e.div(n, e.cast(extents, c.b.getF64Type()));
}

FailureOr<Value> makeResize(NodeContext &c, ResizeSpec s) {
  auto type = c.type(c.input(0));
  // A run-time extent: -1 (floor(in * scale) at run time) where the size
  // follows from the scale, else a run-time scale for the given size.
  bool sizeScales = false;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    if (!type.isDynamicDim(d))
      continue;
    if (ShapedType::isDynamic(s.sizes[d]))
      s.sizes[d] = -1;
    sizeScales |= s.sizes[d] >= 0;
  }
  if (sizeScales && !s.runTimeScales) {
    s.runTimeScales = runTimeSizeScales(c, s);
    if (!s.runTimeScales)
      return failure();
  }
  if (s.mode != "nearest" && !isa<FloatType>(type.getElementType())) {
    (void)c.unsupported(s.mode + " Resize of integer tensors");
    return failure();
  }
  // Run-time scales or roi: all of them as one f64 vector, the constant
  // ones included.
  SmallVector<Value> operands{c.input(0)};
  if (s.runTimeScales || s.runTimeRoi) {
    int64_t rank = type.getRank();
    NNBuilder e(c);
    auto vector = [&](ArrayRef<double> values) {
      auto t =
          RankedTensorType::get({(int64_t)values.size()}, c.b.getF64Type());
      return c.constant(DenseElementsAttr::get(t, values));
    };
    SmallVector<double> roi = s.roi;
    if (roi.empty()) {
      roi.assign(rank, 0.0);
      roi.append(rank, 1.0);
    }
    Value params =
        e.concat({s.runTimeScales ? s.runTimeScales : vector(s.scales),
                  s.runTimeRoi ? s.runTimeRoi : vector(roi)},
                 0);
    if (e.failed)
      return failure();
    operands.push_back(params);
  }
  return c.make<k::ResizeOp>(
      operands,
      {c.named("sizes", c.i64s(s.sizes)),
       c.named("scales", c.b.getDenseF64ArrayAttr(s.scales)),
       c.named("roi", c.b.getDenseF64ArrayAttr(s.roi)),
       c.named("mode", c.b.getStringAttr(s.mode)),
       c.named("coordinate_transformation_mode",
               c.b.getStringAttr(s.transform)),
       c.named("nearest_mode", c.b.getStringAttr(s.nearestMode)),
       c.named("cubic_coeff_a",
               c.b.getF64FloatAttr(c.attrFloat("cubic_coeff_a", -0.75))),
       c.named("exclude_outside",
               c.b.getBoolAttr(c.attrInt("exclude_outside", 0) != 0)),
       c.named("extrapolation_value",
               c.b.getF64FloatAttr(c.attrFloat("extrapolation_value", 0.0)))});
}

/// Before opset 11 (Upsample, Resize-10) coordinates are `x / scale` and
/// nearest rounds down; "bilinear" is Upsample-7's name for linear.
Results importLegacyResize(NodeContext &c, size_t scalesInput) {
  auto type = c.type(c.input(0));
  std::optional<SmallVector<double>> scales;
  if (c.opset < 9 && c.opType() == "Upsample") {
    const auto *a = c.attr("scales");
    if (!a)
      return c.fail("scales are required");
    scales.emplace(a->floats().begin(), a->floats().end());
  } else {
    scales = c.constantFloats(scalesInput);
  }
  ResizeSpec s;
  s.mode = c.attrString("mode", "nearest");
  if (s.mode == "bilinear")
    s.mode = "linear";
  s.transform = "asymmetric";
  s.nearestMode = "floor";
  if (!scales) {
    if (failed(runTimeScales(c, s, scalesInput)))
      return c.error.empty() ? c.needsConstant(scalesInput)
                             : Results(failure());
    return one(makeResize(c, s));
  }
  if ((int64_t)scales->size() != type.getRank())
    return c.fail("needs one scale per dim");
  if (llvm::any_of(*scales, [](double v) { return !(v > 0); }))
    return c.fail("scales must be positive");
  s.scales = *scales;
  for (int64_t d = 0; d < type.getRank(); ++d)
    s.sizes.push_back(
        type.isDynamicDim(d)
            ? -1
            : (int64_t)std::floor(type.getDimSize(d) * (*scales)[d]));
  return one(makeResize(c, s));
}

Results importUpsample(NodeContext &c) { return importLegacyResize(c, 1); }

Results importResize(NodeContext &c) {
  if (c.opset < 11)
    return importLegacyResize(c, 1);
  auto type = c.type(c.input(0));
  int64_t rank = type.getRank();
  ResizeSpec s;
  s.mode = c.attrString("mode", "nearest");
  s.transform = c.attrString("coordinate_transformation_mode", "half_pixel");
  s.nearestMode = c.attrString("nearest_mode", "round_prefer_floor");
  if (!llvm::is_contained({"nearest", "linear", "cubic"}, s.mode))
    return c.unsupported("Resize mode '" + s.mode + "'");
  if (!llvm::is_contained({"half_pixel", "half_pixel_symmetric",
                           "pytorch_half_pixel", "align_corners", "asymmetric",
                           "tf_half_pixel_for_nn", "tf_crop_and_resize"},
                          s.transform))
    return c.unsupported("coordinate_transformation_mode '" + s.transform +
                         "'");
  if (!llvm::is_contained(
          {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"},
          s.nearestMode))
    return c.unsupported("nearest_mode '" + s.nearestMode + "'");

  // Opset 18: scales, sizes and roi may name only `axes`.
  SmallVector<int64_t> axes;
  if (auto a = c.attrInts("axes")) {
    for (int64_t v : *a) {
      auto axis = c.normalizeAxis(v, rank);
      if (!axis)
        return c.fail("axis out of range");
      axes.push_back(*axis);
    }
  } else {
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);
  }
  size_t n = axes.size();

  bool haveSizes = c.hasInput(3) && c.type(c.input(3)).getNumElements() > 0;
  bool haveScales = c.hasInput(2) && c.type(c.input(2)).getNumElements() > 0;
  s.scales.assign(rank, 1.0);
  s.sizes.assign(type.getShape().begin(), type.getShape().end());
  if (haveSizes) {
    std::string policy = c.attrString("keep_aspect_ratio_policy", "stretch");
    if (policy != "stretch" && !type.hasStaticShape())
      return c.fail(fmt::format(
          "keep_aspect_ratio_policy '{}' needs static input extents: '{}' "
          "has a shape known only at run time (give it with --input-shape)",
          policy, c.node.input(0)));
    // Run-time sizes (stretched): the declared result shape, checked.
    auto sizes = c.shapeInput(3, [&]() -> std::optional<SmallVector<int64_t>> {
      auto declared = c.declaredShape(0);
      if (policy != "stretch" || !declared || (int64_t)declared->size() != rank)
        return std::nullopt;
      SmallVector<int64_t> implied;
      for (int64_t a : axes)
        implied.push_back((*declared)[a]);
      return implied;
    });
    if (!sizes)
      return c.needsConstant(3);
    if (sizes->size() != n)
      return c.fail("sizes must have one value per axis");
    if (policy == "stretch") {
      for (size_t i = 0; i < n; ++i) {
        int64_t in = type.getDimSize(axes[i]);
        s.sizes[axes[i]] = (*sizes)[i];
        // (A run-time extent's scale is computed when the model runs.)
        s.scales[axes[i]] = in > 0 ? (double)(*sizes)[i] / in : 1.0;
      }
    } else if (policy == "not_larger" || policy == "not_smaller") {
      double scale = policy == "not_larger" ? INFINITY : 0.0;
      for (size_t i = 0; i < n; ++i) {
        double r = (double)(*sizes)[i] / type.getDimSize(axes[i]);
        scale =
            policy == "not_larger" ? std::min(scale, r) : std::max(scale, r);
      }
      for (int64_t a : axes) {
        s.scales[a] = scale;
        s.sizes[a] = (int64_t)std::floor(scale * type.getDimSize(a) + 0.5);
      }
    } else {
      return c.unsupported("keep_aspect_ratio_policy '" + policy + "'");
    }
  } else if (haveScales && !c.constantFloats(2)) {
    if (c.hasAttr("axes") || failed(runTimeScales(c, s, 2)))
      return c.error.empty() ? c.needsConstant(2) : Results(failure());
  } else if (haveScales) {
    auto scales = c.constantFloats(2);
    if (scales->size() != n)
      return c.fail("scales must have one value per axis");
    for (size_t i = 0; i < n; ++i) {
      if (!((*scales)[i] > 0)) // NaN too
        return c.fail("scales must be positive");
      s.scales[axes[i]] = (*scales)[i];
      s.sizes[axes[i]] =
          type.isDynamicDim(axes[i])
              ? -1
              : (int64_t)std::floor(type.getDimSize(axes[i]) * (*scales)[i]);
    }
  } else {
    return c.fail("one of scales and sizes is required");
  }

  // (A scale computed at run time, for given sizes of a run-time extent or
  // from a run-time scales input, may downsample.)
  bool runTimeScale = s.runTimeScales != nullptr;
  for (int64_t d = 0; d < rank; ++d)
    runTimeScale |= type.isDynamicDim(d) && s.sizes[d] >= 0;
  if (c.attrInt("antialias", 0) != 0 && s.mode != "nearest" &&
      (runTimeScale ||
       llvm::any_of(s.scales, [](double v) { return v < 1.0; })))
    return c.unsupported("antialias when downsampling");

  if (s.transform == "tf_crop_and_resize") {
    auto roi = c.constantFloats(1);
    if (!roi) {
      s.runTimeRoi =
          n == (size_t)rank ? runTimeVector(c, 1, 2 * rank) : Value();
      if (!s.runTimeRoi)
        return c.error.empty() ? c.needsConstant(1) : Results(failure());
      return one(makeResize(c, s));
    }
    if (roi->size() != 2 * n)
      return c.fail("roi must have two values per axis");
    s.roi.assign(rank, 0.0);
    s.roi.append(rank, 1.0);
    for (size_t i = 0; i < n; ++i) {
      s.roi[axes[i]] = (*roi)[i];
      s.roi[rank + axes[i]] = (*roi)[n + i];
    }
  }
  return one(makeResize(c, s));
}

/// `v` reshaped to `shape`, whose entries may be known only at run time.
FailureOr<Value> reshapeToSym(NodeContext &c, Value v, ArrayRef<SymInt> shape) {
  SmallVector<int64_t> ints;
  for (SymInt d : shape)
    if (auto known = constantOf(d))
      ints.push_back(*known);
  if (ints.size() == shape.size() && c.type(v).hasStaticShape())
    return reshapeTo(c, v, ints);
  return reshapeSymbolic(c, v, shape, /*allowZero=*/true);
}

FailureOr<Value> transposeTo(NodeContext &c, Value v, ArrayRef<int64_t> perm) {
  return c.make<k::TransposeOp>(v, {c.named("perm", c.i64s(perm))});
}

/// DepthToSpace: [N, C, H, W] viewed as blocks of the channel dim, moved
/// next to H and W. DCR takes the block from the outer channel bits, CRD
/// from the inner ones. N, H and W may be known only at run time.
Results importDepthToSpace(NodeContext &c) {
  auto type = c.type(c.input(0));
  int64_t b = c.attrInt("blocksize", 0);
  if (type.getRank() != 4 || b < 1 || type.isDynamicDim(1) ||
      type.getDimSize(1) % (b * b))
    return c.fail("needs a 4-D input whose channels (static) divide by "
                  "blocksize^2");
  Value x = c.input(0);
  SymInt n = dimOf(c, x, 0), h = dimOf(c, x, 2), w = dimOf(c, x, 3),
         ch = c.b.getI64IntegerAttr(type.getDimSize(1) / (b * b)),
         block = c.b.getI64IntegerAttr(b);
  bool crd = c.attrString("mode", "DCR") == "CRD";
  SmallVector<SymInt> blocks =
      crd ? SmallVector<SymInt>{n, ch, block, block, h, w}
          : SmallVector<SymInt>{n, block, block, ch, h, w};
  SmallVector<int64_t> perm = crd ? SmallVector<int64_t>{0, 1, 4, 2, 5, 3}
                                  : SmallVector<int64_t>{0, 3, 4, 1, 5, 2};
  auto split = reshapeToSym(c, x, blocks);
  if (failed(split))
    return failure();
  auto moved = transposeTo(c, *split, perm);
  if (failed(moved))
    return failure();
  return one(reshapeToSym(c, *moved,
                          {n, ch, mulSym(c, h, block), mulSym(c, w, block)}));
}

/// `v` / `d` (d > 0; v, an extent, is not negative).
SymInt divideExtent(NodeContext &c, SymInt v, int64_t d) {
  if (auto known = constantOf(v))
    return c.b.getI64IntegerAttr(*known / d);
  return arith::DivSIOp::create(
             c.b, c.loc, cast<Value>(v),
             arith::ConstantOp::create(c.b, c.loc, c.b.getI64IntegerAttr(d)))
      .getResult();
}

/// SpaceToDepth: the inverse. Over a run-time H or W, an extent that does
/// not divide by blocksize fails the run in the split's element count.
Results importSpaceToDepth(NodeContext &c) {
  auto type = c.type(c.input(0));
  int64_t b = c.attrInt("blocksize", 0);
  auto divides = [&](int64_t d) {
    return type.isDynamicDim(d) || type.getDimSize(d) % b == 0;
  };
  if (type.getRank() != 4 || b < 1 || !divides(2) || !divides(3))
    return c.fail("needs a 4-D input whose H and W divide by blocksize");
  Value x = c.input(0);
  SymInt n = dimOf(c, x, 0), ch = dimOf(c, x, 1),
         h = divideExtent(c, dimOf(c, x, 2), b),
         wb = divideExtent(c, dimOf(c, x, 3), b),
         block = c.b.getI64IntegerAttr(b);
  auto split = reshapeToSym(c, x, {n, ch, h, block, wb, block});
  if (failed(split))
    return failure();
  auto moved = transposeTo(c, *split, {0, 3, 5, 1, 2, 4});
  if (failed(moved))
    return failure();
  return one(reshapeToSym(
      c, *moved, {n, mulSym(c, ch, c.b.getI64IntegerAttr(b * b)), h, wb}));
}

/// GridSample: opset 16 names the modes bilinear/bicubic and allows only 4-D
/// inputs; opset 20 renames them linear/cubic and allows any spatial rank.
Results importGridSample(NodeContext &c) {
  if (!c.hasInput(0) || !c.hasInput(1))
    return c.fail("needs X and grid");
  std::string mode = c.attrString("mode", c.opset < 20 ? "bilinear" : "linear");
  if (mode == "bilinear")
    mode = "linear";
  else if (mode == "bicubic")
    mode = "cubic";
  std::string padding = c.attrString("padding_mode", "zeros");
  if (mode != "nearest" && mode != "linear" && mode != "cubic")
    return c.unsupported("mode '" + mode + "'");
  if (padding != "zeros" && padding != "border" && padding != "reflection")
    return c.unsupported("padding_mode '" + padding + "'");
  return one(c.make<k::GridSampleOp>(
      {c.input(0), c.input(1)},
      {c.named("mode", c.b.getStringAttr(mode)),
       c.named("padding_mode", c.b.getStringAttr(padding)),
       c.named("align_corners",
               c.b.getBoolAttr(c.attrInt("align_corners", 0) != 0))}));
}
} // namespace

void mlir::kiln::onnx_import::registerIndexingLayoutHandlers(
    llvm::StringMap<OpHandler> &t) {
  t["Pad"] = importPad;
  t["Resize"] = importResize;
  t["Upsample"] = importUpsample;
  t["DepthToSpace"] = importDepthToSpace;
  t["SpaceToDepth"] = importSpaceToDepth;
  t["GridSample"] = importGridSample;
}
