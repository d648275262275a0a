//===- ImportNN.cpp - Contractions, windows, normalization, softmax -------===//
//
// Conv/Gemm/MatMul, pooling, BatchNormalization/LayerNormalization and
// (Log)Softmax, with the opset differences the ONNX spec defines.
//
//===----------------------------------------------------------------------===//

#include "compiler/import/common/ConvTranspose.h"
#include "compiler/import/onnx/ImportNNBuilder.h"

#include "onnx/onnx.pb.h"

#include <fmt/format.h>

#include <limits>

using namespace mlir;
using namespace mlir::kiln::onnx_import;
namespace k = mlir::kiln;

namespace {
/// A spatial dim of the input known only at run time, or -1.
int64_t runTimeSpatialDim(RankedTensorType input) {
  for (int64_t d = 2; d < input.getRank(); ++d)
    if (input.isDynamicDim(d))
      return d;
  return -1;
}

/// Refuses a run-time height or width where `what` needs static spatial
/// extents (a symbolic batch is fine).
LogicalResult checkStaticSpatialDims(NodeContext &c, RankedTensorType input,
                                     llvm::StringRef what) {
  int64_t d = runTimeSpatialDim(input);
  if (d < 0)
    return success();
  c.error = fmt::format("spatial dim {} of '{}' is known only at run "
                        "time; {} needs static spatial extents (give "
                        "them with --input-shape)",
                        d, c.node.input(0), what);
  return failure();
}

/// Window attributes of Conv/Pool with auto_pad resolved to explicit pads.
struct Window {
  SmallVector<int64_t> kernel, strides, dilations, pads;
};

/// The window of a Conv or pool. Run-time spatial extents are taken when
/// `runTimeSpatial` (the result's are computed when the model runs), with
/// explicit pads: SAME_* pads would depend on them.
FailureOr<Window> readWindow(NodeContext &c, ArrayRef<int64_t> kernel,
                             bool runTimeSpatial = false) {
  auto input = c.type(c.input(0));
  int64_t n = input.getRank() - 2;
  if (n < 1) {
    c.error = fmt::format("input must have rank >= 3, got {}", input.getRank());
    return failure();
  }
  if (!runTimeSpatial && failed(checkStaticSpatialDims(c, input, c.opType())))
    return failure();
  Window w;
  w.kernel.assign(kernel.begin(), kernel.end());
  w.strides = c.attrInts("strides").value_or(SmallVector<int64_t>(n, 1));
  w.dilations = c.attrInts("dilations").value_or(SmallVector<int64_t>(n, 1));
  w.pads = c.attrInts("pads").value_or(SmallVector<int64_t>(2 * n, 0));
  if ((int64_t)w.kernel.size() != n || (int64_t)w.strides.size() != n ||
      (int64_t)w.dilations.size() != n || (int64_t)w.pads.size() != 2 * n) {
    c.error = fmt::format("kernel_shape, strides, dilations or pads do not "
                          "match the {} spatial dims of the input",
                          n);
    return failure();
  }
  std::string autoPad = c.attrString("auto_pad", "NOTSET");
  if (autoPad == "VALID") {
    w.pads.assign(2 * n, 0);
  } else if ((autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") &&
             failed(checkStaticSpatialDims(
                 c, input, c.opType() + " with auto_pad " + autoPad))) {
    return failure();
  } else if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    for (int64_t i = 0; i < n; ++i) {
      int64_t in = input.getDimSize(i + 2);
      int64_t out = (in + w.strides[i] - 1) / w.strides[i];
      int64_t total =
          std::max<int64_t>(0, (out - 1) * w.strides[i] +
                                   (w.kernel[i] - 1) * w.dilations[i] + 1 - in);
      int64_t small = total / 2, big = total - small;
      w.pads[i] = autoPad == "SAME_UPPER" ? small : big;
      w.pads[n + i] = autoPad == "SAME_UPPER" ? big : small;
    }
  } else if (autoPad != "NOTSET") {
    c.error = "unknown auto_pad '" + autoPad + "'";
    return failure();
  }
  return w;
}

} // namespace

FailureOr<Value> mlir::kiln::onnx_import::buildConv(NodeContext &c, Value x,
                                                    Value weight, Value bias) {
  auto weightType = c.type(weight);
  auto kernel =
      c.attrInts("kernel_shape")
          .value_or(SmallVector<int64_t>(weightType.getShape().drop_front(2)));
  auto w = readWindow(c, kernel, /*runTimeSpatial=*/true);
  if (failed(w))
    return failure();
  if (ArrayRef<int64_t>(w->kernel) != weightType.getShape().drop_front(2)) {
    c.error = "kernel_shape does not match the weight's shape";
    return failure();
  }
  SmallVector<Value> operands = {x, weight};
  if (bias)
    operands.push_back(bias);
  return c.make<k::ConvOp>(
      operands,
      {c.named("strides", c.i64s(w->strides)), c.named("pads", c.i64s(w->pads)),
       c.named("dilations", c.i64s(w->dilations)),
       c.named("group", c.b.getI64IntegerAttr(c.attrInt("group", 1)))});
}

namespace {
Results importConv(NodeContext &c) {
  if (!c.hasInput(0) || !c.hasInput(1))
    return c.fail("needs X and W");
  return one(buildConv(c, c.input(0), c.input(1), c.input(2)));
}

/// ONNX's pads of a transposed convolution: explicit, or derived from
/// output_shape (or, for SAME_*, input * stride) as the reference does,
/// with floor division so that a negative total extends the end.
FailureOr<SmallVector<int64_t>>
convTransposePads(NodeContext &c, ArrayRef<int64_t> inputShape,
                  ArrayRef<int64_t> kernel, ArrayRef<int64_t> strides,
                  ArrayRef<int64_t> dilations,
                  ArrayRef<int64_t> outputPadding) {
  int64_t n = kernel.size();
  std::string autoPad = c.attrString("auto_pad", "NOTSET");
  bool same = autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER";
  if (!same && autoPad != "NOTSET" && autoPad != "VALID") {
    c.error = "unknown auto_pad '" + autoPad + "'";
    return failure();
  }
  auto outputShape = c.attrInts("output_shape");
  if (!outputShape && !same) {
    auto pads = c.attrInts("pads").value_or(SmallVector<int64_t>(2 * n, 0));
    if (autoPad == "VALID")
      pads.assign(2 * n, 0);
    if ((int64_t)pads.size() != 2 * n) {
      c.error = "pads do not match the spatial dims";
      return failure();
    }
    return pads;
  }
  SmallVector<int64_t> target;
  if (outputShape)
    target.assign(outputShape->end() -
                      std::min<int64_t>(n, outputShape->size()),
                  outputShape->end());
  else
    for (int64_t i = 0; i < n; ++i)
      target.push_back(inputShape[i] * strides[i]);
  if ((int64_t)target.size() != n) {
    c.error = "output_shape does not match the spatial dims";
    return failure();
  }
  SmallVector<int64_t> pads(2 * n);
  for (int64_t i = 0; i < n; ++i) {
    int64_t total = strides[i] * (inputShape[i] - 1) + outputPadding[i] +
                    (kernel[i] - 1) * dilations[i] + 1 - target[i];
    int64_t half = llvm::divideFloorSigned(total, 2);
    pads[i] = autoPad == "SAME_UPPER" ? half : total - half;
    pads[n + i] = total - pads[i];
  }
  return pads;
}

/// ConvTranspose as a convolution (buildConvTranspose).
Results importConvTranspose(NodeContext &c) {
  Value x = c.input(0), w = c.input(1);
  if (!x || !w)
    return c.fail("needs X and W");
  NNBuilder e(c);
  int64_t rank = e.rank(x), n = rank - 2;
  if (n < 1 || e.rank(w) != rank)
    return c.fail("X and W must have the same rank, at least 3");
  // Over run-time extents the pads must not depend on them.
  std::string autoPad = c.attrString("auto_pad", "NOTSET");
  if (c.hasAttr("output_shape") &&
      failed(checkStaticSpatialDims(c, c.type(x),
                                    "ConvTranspose with output_shape")))
    return failure();
  if (autoPad.rfind("SAME", 0) == 0 &&
      failed(checkStaticSpatialDims(c, c.type(x),
                                    "ConvTranspose with auto_pad " + autoPad)))
    return failure();
  int64_t group = c.attrInt("group", 1);
  SmallVector<int64_t> wShape(e.shape(w));
  int64_t channels = wShape[0];
  if (group < 1 || channels % group || e.shape(x)[1] != channels)
    return c.fail("X channels, W and group do not match");
  SmallVector<int64_t> kernel(ArrayRef<int64_t>(wShape).drop_front(2));
  if (auto ks = c.attrInts("kernel_shape"); ks && *ks != kernel)
    return c.fail("kernel_shape does not match W");
  auto strides = c.attrInts("strides").value_or(SmallVector<int64_t>(n, 1));
  auto dilations = c.attrInts("dilations").value_or(SmallVector<int64_t>(n, 1));
  auto outputPadding =
      c.attrInts("output_padding").value_or(SmallVector<int64_t>(n, 0));
  if ((int64_t)strides.size() != n || (int64_t)dilations.size() != n ||
      (int64_t)outputPadding.size() != n)
    return c.fail("strides, dilations or output_padding do not match the "
                  "spatial dims");
  SmallVector<int64_t> inputShape(e.shape(x).drop_front(2));
  auto pads = convTransposePads(c, inputShape, kernel, strides, dilations,
                                outputPadding);
  if (failed(pads))
    return failure();

  return one(buildConvTranspose(c, x, w, c.input(2), strides, *pads, dilations,
                                outputPadding, group));
}

/// MaxPool's Indices: for each output, the flat index into the input of the
/// first window element equal to the max `y` (row-major, or with
/// storage_order = 1 column-major over the spatial dims after the N, C
/// offset). The window's elements at kernel offset k are a strided slice of
/// the input padded with the lowest value, so the index is a chain of
/// selects over the kernel offsets, last to first.
Value maxPoolIndices(NNBuilder &e, const Window &w, Value x, Value y,
                     bool columnMajor) {
  NodeContext &c = e.c;
  SmallVector<int64_t> in(e.shape(x)), out(e.shape(y));
  int64_t n = in.size() - 2, rank = in.size();
  SmallVector<int64_t> pads(2 * rank, 0);
  bool padded = false;
  for (int64_t d = 0; d < n; ++d) {
    int64_t extent = (out[2 + d] - 1) * w.strides[d] +
                     (w.kernel[d] - 1) * w.dilations[d] + 1;
    pads[2 + d] = w.pads[d];
    pads[rank + 2 + d] = std::max<int64_t>(0, extent - w.pads[d] - in[2 + d]);
    padded |= pads[2 + d] || pads[rank + 2 + d];
  }
  Type type = e.elementType(x);
  double lowestValue =
      isa<FloatType>(type) ? -std::numeric_limits<double>::infinity()
      : type.isUnsignedInteger()
          ? 0.0
          : (double)APInt::getSignedMinValue(type.getIntOrFloatBitWidth())
                .getSExtValue();
  Value lowest = c.scalar(type, lowestValue);
  Value source =
      padded ? e.op<k::PadOp>({x, lowest}, {c.named("pads", c.i64s(pads))}) : x;
  // (n * C + c) * spatial size, broadcast over the output's spatial dims.
  int64_t spatialSize = 1, outSpatial = 1;
  for (int64_t d = 0; d < n; ++d)
    spatialSize *= in[2 + d], outSpatial *= out[2 + d];
  SmallVector<int64_t> baseShape(rank, 1), baseValues;
  baseShape[0] = in[0], baseShape[1] = in[1];
  for (int64_t i = 0; i < in[0] * in[1]; ++i)
    baseValues.push_back(i * spatialSize);
  Type i64 = c.b.getI64Type();
  auto i64Constant = [&](ArrayRef<int64_t> shape, ArrayRef<int64_t> values) {
    return c.constant(cast<ElementsAttr>(
        DenseElementsAttr::get(RankedTensorType::get(shape, i64), values)));
  };
  Value base = i64Constant(baseShape, baseValues);
  SmallVector<int64_t> spatialShape(rank, 1);
  for (int64_t d = 0; d < n; ++d)
    spatialShape[2 + d] = out[2 + d];

  int64_t offsets = 1;
  for (int64_t k : w.kernel)
    offsets *= k;
  Value indices;
  for (int64_t k = offsets - 1; k >= 0; --k) {
    SmallVector<int64_t> offset(n);
    for (int64_t d = n - 1, rest = k; d >= 0; --d) {
      offset[d] = rest % w.kernel[d];
      rest /= w.kernel[d];
    }
    Value window = source;
    for (int64_t d = 0; d < n; ++d) {
      int64_t start = offset[d] * w.dilations[d];
      window =
          e.slice(window, 2 + d, start,
                  start + (out[2 + d] - 1) * w.strides[d] + 1, w.strides[d]);
    }
    SmallVector<int64_t> flat;
    for (int64_t o = 0; o < outSpatial; ++o) {
      int64_t index = 0, scale = 1, rest = o;
      SmallVector<int64_t> pos(n);
      for (int64_t d = n - 1; d >= 0; --d) {
        int64_t od = rest % out[2 + d];
        rest /= out[2 + d];
        pos[d] = std::clamp<int64_t>(od * w.strides[d] - w.pads[d] +
                                         offset[d] * w.dilations[d],
                                     0, in[2 + d] - 1);
      }
      for (int64_t i = 0; i < n; ++i) {
        int64_t d = columnMajor ? i : n - 1 - i;
        index += pos[d] * scale;
        scale *= in[2 + d];
      }
      flat.push_back(index);
    }
    Value candidate = e.add(base, i64Constant(spatialShape, flat));
    indices =
        indices ? e.select(e.equal(window, y), candidate, indices) : candidate;
  }
  return indices;
}

/// MaxUnpool: zeros of the unpooled shape with X written at the flat
/// indices I (MaxPool's Indices): a scatter into the flattened result.
Results importMaxUnpool(NodeContext &c) {
  Value x = c.input(0), indices = c.input(1);
  if (!x || !indices)
    return c.fail("needs X and I");
  auto kernel = c.attrInts("kernel_shape");
  if (!kernel)
    return c.fail("kernel_shape is required");
  auto w = readWindow(c, *kernel);
  if (failed(w))
    return failure();
  SmallVector<int64_t> shape(c.type(x).getShape());
  int64_t n = shape.size() - 2;
  if (c.hasInput(2)) {
    auto given = c.constantInts(2);
    if (!given)
      return c.needsConstant(2);
    if ((int64_t)given->size() != n + 2)
      return c.fail("output_shape must list every dim of the result");
    shape.assign(given->begin(), given->end());
  } else {
    for (int64_t d = 0; d < n; ++d)
      shape[2 + d] = (shape[2 + d] - 1) * w->strides[d] - w->pads[d] -
                     w->pads[n + d] + w->kernel[d];
  }
  int64_t total = 1, count = c.type(x).getNumElements();
  for (int64_t dim : shape)
    total *= dim;
  NNBuilder e(c);
  Value flat = e.op<k::ScatterElementsOp>(
      {e.splat({total}, c.type(x).getElementType(), 0),
       e.reshape(indices, {count}), e.reshape(x, {count})},
      {c.named("axis", c.b.getI64IntegerAttr(0))});
  return e.done({e.reshape(flat, shape)});
}

template <typename OpTy> OpHandler pool(bool isMax) {
  return [isMax](NodeContext &c) -> Results {
    auto kernel = c.attrInts("kernel_shape");
    if (!kernel)
      return c.fail("kernel_shape is required");
    // Over a run-time height or width: no ceil_mode (its extra window
    // depends on the extent), no Indices output, and for an average no
    // pads left out of the count (the divisors would vary with it).
    auto input = c.type(c.input(0));
    if (runTimeSpatialDim(input) >= 0) {
      bool uncountedPads =
          !isMax && !c.attrInt("count_include_pad", 0) &&
          llvm::any_of(c.attrInts("pads").value_or(SmallVector<int64_t>()),
                       [](int64_t p) { return p != 0; });
      const char *why = c.attrInt("ceil_mode", 0) ? "ceil_mode"
                        : isMax && c.hasOutput(1) ? "the Indices output"
                        : uncountedPads
                            ? "pads left out of the count (count_include_pad=0)"
                            : nullptr;
      if (why &&
          failed(checkStaticSpatialDims(c, input, c.opType() + " with " + why)))
        return failure();
    }
    auto w = readWindow(c, *kernel, /*runTimeSpatial=*/true);
    if (failed(w))
      return failure();
    SmallVector<NamedAttribute> attrs = {
        c.named("kernel_shape", c.i64s(w->kernel)),
        c.named("strides", c.i64s(w->strides)),
        c.named("pads", c.i64s(w->pads)),
        c.named("dilations", c.i64s(w->dilations)),
        c.named("ceil_mode", c.b.getBoolAttr(c.attrInt("ceil_mode", 0)))};
    if (!isMax)
      attrs.push_back(
          c.named("count_include_pad",
                  c.b.getBoolAttr(c.attrInt("count_include_pad", 0))));
    auto y = c.make<OpTy>(c.input(0), attrs);
    if (failed(y) || !isMax || !c.hasOutput(1))
      return one(y);
    if (!isa<FloatType>(c.type(*y).getElementType()) &&
        !isa<IntegerType>(c.type(*y).getElementType()))
      return c.unsupported("the Indices output of this element type");
    NNBuilder e(c);
    bool columnMajor = c.attrInt("storage_order", 0) != 0;
    return e.done({*y, maxPoolIndices(e, *w, c.input(0), *y, columnMajor)});
  };
}

template <typename OpTy> OpHandler globalPool() {
  return [](NodeContext &c) -> Results {
    int64_t rank = c.type(c.input(0)).getRank();
    SmallVector<int64_t> axes;
    for (int64_t d = 2; d < rank; ++d)
      axes.push_back(d);
    return one(
        c.make<OpTy>(c.input(0), {c.named("axes", c.i64s(axes)),
                                  c.named("keepdims", c.b.getBoolAttr(true))}));
  };
}

FailureOr<Value> transpose2d(NodeContext &c, Value v) {
  return c.make<k::TransposeOp>(v, {c.named("perm", c.i64s({1, 0}))});
}

Results importGemm(NodeContext &c) {
  Value a = c.input(0), b = c.input(1);
  if (!a || !b || c.type(a).getRank() != 2 || c.type(b).getRank() != 2)
    return c.fail("A and B must be 2-D");
  if (c.attrInt("transA", 0)) {
    auto t = transpose2d(c, a);
    if (failed(t))
      return failure();
    a = *t;
  }
  if (c.attrInt("transB", 0)) {
    auto t = transpose2d(c, b);
    if (failed(t))
      return failure();
    b = *t;
  }
  auto y = c.make<k::MatMulOp>({a, b});
  if (failed(y))
    return failure();
  Type et = c.type(*y).getElementType();
  double alpha = c.attrFloat("alpha", 1.0), beta = c.attrFloat("beta", 1.0);
  if (alpha != 1.0) {
    y = c.make<k::MulOp>({*y, c.scalar(et, alpha)});
    if (failed(y))
      return failure();
  }
  if (c.hasInput(2) && beta != 0.0) {
    Value bias = c.input(2);
    if (beta != 1.0) {
      auto scaled = c.make<k::MulOp>({bias, c.scalar(et, beta)});
      if (failed(scaled))
        return failure();
      bias = *scaled;
    }
    y = c.make<k::AddOp>({*y, bias});
  }
  return one(y);
}

Results importMatMul(NodeContext &c) {
  Value a = c.input(0), b = c.input(1);
  // ONNX's type constraint T: numbers (float, double, f16, bf16, ints).
  if (!isa<FloatType>(c.type(a).getElementType()) &&
      !c.type(a).getElementType().isInteger(32) &&
      !c.type(a).getElementType().isInteger(64) &&
      !c.type(a).getElementType().isUnsignedInteger(32) &&
      !c.type(a).getElementType().isUnsignedInteger(64))
    return c.fail("MatMul takes float, double, float16, bfloat16, int32, "
                  "int64, uint32 or uint64 tensors, not " +
                  std::string(c.type(a).getElementType().isInteger(1)
                                  ? "bool"
                                  : "this element type"));
  auto reshape = [&](Value v, ArrayRef<int64_t> shape) {
    return c.make<k::ReshapeOp>(v, {c.named("shape", c.i64s(shape))});
  };
  int64_t ra = c.type(a).getRank(), rb = c.type(b).getRank();
  if (ra == 0 || rb == 0)
    return c.fail("operands must not be scalars");
  if (ra == 1) {
    auto v = reshape(a, {1, c.type(a).getDimSize(0)});
    if (failed(v))
      return failure();
    a = *v;
  }
  if (rb == 1) {
    auto v = reshape(b, {c.type(b).getDimSize(0), 1});
    if (failed(v))
      return failure();
    b = *v;
  }
  auto y = c.make<k::MatMulOp>({a, b});
  if (failed(y) || (ra > 1 && rb > 1))
    return one(y);
  // Drop the dims that the 1-D promotion added.
  SmallVector<int64_t> shape(c.type(*y).getShape());
  if (rb == 1)
    shape.pop_back();
  if (ra == 1)
    shape.erase(shape.end() - (rb == 1 ? 1 : 2));
  return one(reshape(*y, shape));
}

/// Softmax/LogSoftmax. Before opset 13 the input is coerced to 2-D at `axis`
/// and normalized over everything from `axis` on.
template <typename OpTy> OpHandler softmax() {
  return [](NodeContext &c) -> Results {
    auto type = c.type(c.input(0));
    int64_t rank = type.getRank();
    auto axis = c.normalizeAxis(c.attrInt("axis", c.opset < 13 ? 1 : -1), rank);
    if (!axis)
      return c.fail("axis out of range");
    if (c.opset >= 13 || *axis == rank - 1)
      return one(c.make<OpTy>(c.input(0),
                              {c.named("axis", c.b.getI64IntegerAttr(*axis))}));
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < rank; ++d)
      (d < *axis ? outer : inner) *= type.getDimSize(d);
    auto flat = c.make<k::ReshapeOp>(
        c.input(0), {c.named("shape", c.i64s({outer, inner}))});
    if (failed(flat))
      return failure();
    auto y = c.make<OpTy>(*flat, {c.named("axis", c.b.getI64IntegerAttr(1))});
    if (failed(y))
      return failure();
    return one(
        c.make<k::ReshapeOp>(*y, {c.named("shape", c.i64s(type.getShape()))}));
  };
}
} // namespace

void mlir::kiln::onnx_import::registerNNHandlers(
    llvm::StringMap<OpHandler> &t) {
  t["Conv"] = importConv;
  t["Gemm"] = importGemm;
  t["MatMul"] = importMatMul;
  t["MaxUnpool"] = importMaxUnpool;
  t["MaxPool"] = pool<k::MaxPoolOp>(/*isMax=*/true);
  t["AveragePool"] = pool<k::AvgPoolOp>(/*isMax=*/false);
  t["GlobalAveragePool"] = globalPool<k::ReduceMeanOp>();
  t["GlobalMaxPool"] = globalPool<k::ReduceMaxOp>();
  t["ConvTranspose"] = importConvTranspose;
  t["Softmax"] = softmax<k::SoftmaxOp>();
  t["LogSoftmax"] = softmax<k::LogSoftmaxOp>();
  registerLossHandlers(t);
  registerNNNormHandlers(t);
  registerRecurrentHandlers(t);
  registerQuantHandlers(t);
  registerEinsumHandlers(t);
  registerDetHandlers(t);
  registerRoiAlignHandlers(t);
  registerNMSHandlers(t);
  registerDFTHandlers(t);
}
