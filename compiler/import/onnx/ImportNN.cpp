//===- ImportNN.cpp - Contractions, windows, normalization, softmax -------===//
//
// Conv/Gemm/MatMul, pooling, BatchNormalization/LayerNormalization and
// (Log)Softmax, with the opset differences the ONNX spec defines.
//
//===----------------------------------------------------------------------===//

#include "compiler/import/onnx/NodeContext.h"

#include "onnx/onnx.pb.h"

#include <fmt/format.h>

using namespace mlir;
using namespace mlir::kiln::onnx_import;
namespace k = mlir::kiln;

namespace {
using Results = FailureOr<SmallVector<Value>>;

Results one(FailureOr<Value> v) {
  if (failed(v))
    return failure();
  return SmallVector<Value>{*v};
}

/// Window attributes of Conv/Pool with auto_pad resolved to explicit pads.
struct Window {
  SmallVector<int64_t> kernel, strides, dilations, pads;
};

FailureOr<Window> readWindow(NodeContext &c, ArrayRef<int64_t> kernel) {
  auto input = c.type(c.input(0));
  int64_t n = input.getRank() - 2;
  if (n < 1) {
    c.error = fmt::format("input must have rank >= 3, got {}", input.getRank());
    return failure();
  }
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
  } else if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    for (int64_t i = 0; i < n; ++i) {
      int64_t in = input.getDimSize(i + 2);
      int64_t out = (in + w.strides[i] - 1) / w.strides[i];
      int64_t total = std::max<int64_t>(
          0, (out - 1) * w.strides[i] + (w.kernel[i] - 1) * w.dilations[i] +
                 1 - in);
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

Results importConv(NodeContext &c) {
  if (!c.hasInput(0) || !c.hasInput(1))
    return c.fail("needs X and W");
  auto weight = c.type(c.input(1));
  auto kernel = c.attrInts("kernel_shape")
                    .value_or(SmallVector<int64_t>(
                        weight.getShape().drop_front(2)));
  auto w = readWindow(c, kernel);
  if (failed(w))
    return failure();
  if (ArrayRef<int64_t>(w->kernel) != weight.getShape().drop_front(2))
    return c.fail("kernel_shape does not match the weight's shape");
  SmallVector<Value> operands = {c.input(0), c.input(1)};
  if (c.hasInput(2))
    operands.push_back(c.input(2));
  return one(c.make<k::ConvOp>(
      operands, {c.named("strides", c.i64s(w->strides)),
                 c.named("pads", c.i64s(w->pads)),
                 c.named("dilations", c.i64s(w->dilations)),
                 c.named("group", c.b.getI64IntegerAttr(c.attrInt("group", 1)))}));
}

template <typename OpTy> OpHandler pool(bool isMax) {
  return [isMax](NodeContext &c) -> Results {
    if (isMax && c.hasOutput(1))
      return c.unsupported("the Indices output is not supported");
    auto kernel = c.attrInts("kernel_shape");
    if (!kernel)
      return c.fail("kernel_shape is required");
    auto w = readWindow(c, *kernel);
    if (failed(w))
      return failure();
    SmallVector<NamedAttribute> attrs = {
        c.named("kernel_shape", c.i64s(w->kernel)),
        c.named("strides", c.i64s(w->strides)),
        c.named("pads", c.i64s(w->pads)),
        c.named("dilations", c.i64s(w->dilations)),
        c.named("ceil_mode", c.b.getBoolAttr(c.attrInt("ceil_mode", 0)))};
    if (!isMax)
      attrs.push_back(c.named("count_include_pad",
                              c.b.getBoolAttr(c.attrInt("count_include_pad", 0))));
    return one(c.make<OpTy>(c.input(0), attrs));
  };
}

template <typename OpTy> OpHandler globalPool() {
  return [](NodeContext &c) -> Results {
    int64_t rank = c.type(c.input(0)).getRank();
    SmallVector<int64_t> axes;
    for (int64_t d = 2; d < rank; ++d)
      axes.push_back(d);
    return one(c.make<OpTy>(c.input(0), {c.named("axes", c.i64s(axes)),
                                         c.named("keepdims",
                                                 c.b.getBoolAttr(true))}));
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

Results importBatchNorm(NodeContext &c) {
  if (c.attrInt("training_mode", 0) || c.hasOutput(1))
    return c.unsupported("training mode is not supported (inference only)");
  for (size_t i = 0; i < 5; ++i)
    if (!c.hasInput(i))
      return c.fail("needs X, scale, B, mean and var");
  return one(c.make<k::BatchNormOp>(
      {c.input(0), c.input(1), c.input(2), c.input(3), c.input(4)},
      {c.named("epsilon", c.b.getF64FloatAttr(c.attrFloat("epsilon", 1e-5)))}));
}

Results importLayerNorm(NodeContext &c) {
  if (c.hasOutput(1) || c.hasOutput(2))
    return c.unsupported("the Mean and InvStdDev outputs are not supported");
  int64_t rank = c.type(c.input(0)).getRank();
  auto axis = c.normalizeAxis(c.attrInt("axis", -1), rank);
  if (!axis)
    return c.fail("axis out of range");
  SmallVector<Value> operands = {c.input(0), c.input(1)};
  if (c.hasInput(2))
    operands.push_back(c.input(2));
  return one(c.make<k::LayerNormOp>(
      operands,
      {c.named("axis", c.b.getI64IntegerAttr(*axis)),
       c.named("epsilon", c.b.getF64FloatAttr(c.attrFloat("epsilon", 1e-5)))}));
}

/// InstanceNormalization: per (sample, channel) mean and variance over the
/// spatial dims, then the per-channel affine transform.
Results importInstanceNorm(NodeContext &c) {
  Value x = c.input(0);
  auto type = c.type(x);
  int64_t rank = type.getRank();
  if (rank < 3 || !c.hasInput(1) || !c.hasInput(2))
    return c.fail("needs an input of rank >= 3, scale and B");
  SmallVector<int64_t> axes, channelShape(rank - 1, 1);
  for (int64_t d = 2; d < rank; ++d)
    axes.push_back(d);
  channelShape[0] = type.getDimSize(1);
  auto keep = {c.named("axes", c.i64s(axes)),
               c.named("keepdims", c.b.getBoolAttr(true))};
  Type et = type.getElementType();
  auto mean = c.make<k::ReduceMeanOp>(x, keep);
  if (failed(mean))
    return failure();
  auto centered = c.make<k::SubOp>({x, *mean});
  if (failed(centered))
    return failure();
  auto squared = c.make<k::MulOp>({*centered, *centered});
  if (failed(squared))
    return failure();
  auto var = c.make<k::ReduceMeanOp>(*squared, keep);
  if (failed(var))
    return failure();
  auto shifted = c.make<k::AddOp>({*var, c.scalar(et, c.attrFloat("epsilon", 1e-5))});
  if (failed(shifted))
    return failure();
  auto std = c.make<k::SqrtOp>(*shifted);
  if (failed(std))
    return failure();
  auto normalized = c.make<k::DivOp>({*centered, *std});
  if (failed(normalized))
    return failure();
  auto reshapeChannel = [&](Value v) {
    return c.make<k::ReshapeOp>(v, {c.named("shape", c.i64s(channelShape))});
  };
  auto scale = reshapeChannel(c.input(1)), bias = reshapeChannel(c.input(2));
  if (failed(scale) || failed(bias))
    return failure();
  auto scaled = c.make<k::MulOp>({*normalized, *scale});
  if (failed(scaled))
    return failure();
  return one(c.make<k::AddOp>({*scaled, *bias}));
}

/// Softmax/LogSoftmax. Before opset 13 the input is coerced to 2-D at `axis`
/// and normalized over everything from `axis` on.
template <typename OpTy> OpHandler softmax() {
  return [](NodeContext &c) -> Results {
    auto type = c.type(c.input(0));
    int64_t rank = type.getRank();
    auto axis = c.normalizeAxis(c.attrInt("axis", c.opset < 13 ? 1 : -1),
                                rank);
    if (!axis)
      return c.fail("axis out of range");
    if (c.opset >= 13 || *axis == rank - 1)
      return one(c.make<OpTy>(c.input(0),
                              {c.named("axis", c.b.getI64IntegerAttr(*axis))}));
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < rank; ++d)
      (d < *axis ? outer : inner) *= type.getDimSize(d);
    auto flat = c.make<k::ReshapeOp>(c.input(0),
                                     {c.named("shape", c.i64s({outer, inner}))});
    if (failed(flat))
      return failure();
    auto y = c.make<OpTy>(*flat, {c.named("axis", c.b.getI64IntegerAttr(1))});
    if (failed(y))
      return failure();
    return one(c.make<k::ReshapeOp>(*y,
                                    {c.named("shape", c.i64s(type.getShape()))}));
  };
}
} // namespace

void mlir::kiln::onnx_import::registerNNHandlers(llvm::StringMap<OpHandler> &t) {
  t["Conv"] = importConv;
  t["Gemm"] = importGemm;
  t["MatMul"] = importMatMul;
  t["MaxPool"] = pool<k::MaxPoolOp>(/*isMax=*/true);
  t["AveragePool"] = pool<k::AvgPoolOp>(/*isMax=*/false);
  t["GlobalAveragePool"] = globalPool<k::ReduceMeanOp>();
  t["GlobalMaxPool"] = globalPool<k::ReduceMaxOp>();
  t["BatchNormalization"] = importBatchNorm;
  t["LayerNormalization"] = importLayerNorm;
  t["InstanceNormalization"] = importInstanceNorm;
  t["Softmax"] = softmax<k::SoftmaxOp>();
  t["LogSoftmax"] = softmax<k::LogSoftmaxOp>();
}
