//===- AtenNN.cpp - ATen's layers: linear, conv, norms, pools, SDPA -------===//
//
// Both forms torch.export users save: the ops as exported (conv2d,
// conv_transpose2d, linear, batch_norm, layer_norm,
// scaled_dot_product_attention) and their core ATen decompositions
// (convolution, transposed or not, addmm,
// _native_batch_norm_legit_no_training, native_layer_norm). SDPA imports
// straight to kiln.attention.
//
//===----------------------------------------------------------------------===//
#include "compiler/import/common/ConvTranspose.h"
#include "compiler/import/pt2/AtenContext.h"

#include <cmath>

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::pt2;

namespace {

FailureOr<Value> transpose2d(AtenContext &c, Value v) {
  return c.make<TransposeOp>({v}, {c.named("perm", c.i64s({1, 0}))});
}

Results linear(AtenContext &c) {
  FailureOr<Value> x = c.tensor("input"), w = c.tensor("weight"),
                   bias = c.optionalTensor("bias");
  if (failed(x) || failed(w) || failed(bias))
    return failure();
  FailureOr<Value> wt = transpose2d(c, *w);
  FailureOr<Value> y = failed(wt) ? wt : c.make<MatMulOp>({*x, *wt});
  if (succeeded(y) && *bias)
    y = c.make<AddOp>({*y, *bias});
  return one(y);
}

Results addmm(AtenContext &c) {
  FailureOr<Value> self = c.tensor("self"), a = c.tensor("mat1"),
                   b = c.tensor("mat2");
  FailureOr<double> beta = c.number("beta"), alpha = c.number("alpha");
  if (failed(self) || failed(a) || failed(b) || failed(beta) || failed(alpha))
    return failure();
  FailureOr<Value> y = c.make<MatMulOp>({*a, *b});
  Type element = c.type(*a).getElementType();
  if (succeeded(y) && *alpha != 1)
    y = c.make<MulOp>({*y, c.scalar(element, *alpha)});
  if (failed(y) || *beta == 0)
    return one(y);
  Value s = *self;
  if (*beta != 1) {
    FailureOr<Value> scaled = c.make<MulOp>({s, c.scalar(element, *beta)});
    if (failed(scaled))
      return failure();
    s = *scaled;
  }
  return one(c.make<AddOp>({*y, s}));
}

Results matmul(AtenContext &c, StringRef lhs, StringRef rhs) {
  FailureOr<Value> a = c.tensor(lhs), b = c.tensor(rhs);
  if (failed(a) || failed(b))
    return failure();
  return one(c.make<MatMulOp>({*a, *b}));
}

/// Conv attributes from torch's per-dim stride/padding/dilation; `full`:
/// aten.convolution (its transposed flag and output_padding read),
/// `transposed`: conv_transpose (output_padding read).
Results convolution(AtenContext &c, bool full, bool transposed = false) {
  FailureOr<Value> x = c.tensor("input"), w = c.tensor("weight"),
                   bias = c.optionalTensor("bias");
  FailureOr<SmallVector<int64_t>> stride = c.ints("stride"),
                                  padding = c.ints("padding"),
                                  dilation = c.ints("dilation");
  FailureOr<int64_t> groups = c.integer("groups");
  if (failed(x) || failed(w) || failed(bias) || failed(stride) ||
      failed(dilation) || failed(groups))
    return failure();
  if (failed(padding))
    return failure(); // conv2d.padding ('same', 'valid') has its own overload
  if (full) {
    FailureOr<bool> flag = c.boolean("transposed");
    if (failed(flag))
      return failure();
    transposed = *flag;
  }
  int64_t spatial = c.type(*w).getRank() - 2;
  auto perDim = [&](SmallVector<int64_t> v) {
    if ((int64_t)v.size() == 1)
      v.assign(spatial, v[0]);
    return v;
  };
  SmallVector<int64_t> pads = perDim(*padding);
  if ((int64_t)pads.size() != spatial)
    return c.fail("padding has " + llvm::Twine(pads.size()) + " entries for " +
                  llvm::Twine(spatial) + " spatial dims"),
           failure();
  pads.append(SmallVector<int64_t>(pads));
  if (transposed) {
    // x [N, C, ..], weight [C, M/groups, k..]; torch's padding trims both
    // ends of the output, output_padding extends its end.
    FailureOr<SmallVector<int64_t>> outputPadding = c.ints("output_padding");
    if (failed(outputPadding))
      return failure();
    SmallVector<int64_t> extra = perDim(*outputPadding);
    RankedTensorType xType = c.type(*x), wType = c.type(*w);
    int64_t channels = wType.getDimSize(0);
    if (xType.getRank() != spatial + 2 || (int64_t)extra.size() != spatial ||
        *groups < 1 || channels % *groups || xType.getDimSize(1) != channels)
      return c.fail("the input, weight, groups and output_padding of a "
                    "transposed convolution do not match"),
             failure();
    return one(buildConvTranspose(c, *x, *w, *bias, perDim(*stride), pads,
                                  perDim(*dilation), extra, *groups));
  }
  SmallVector<Value> operands = {*x, *w};
  if (*bias)
    operands.push_back(*bias);
  return one(c.make<ConvOp>(
      operands, {c.named("strides", c.i64s(perDim(*stride))),
                 c.named("pads", c.i64s(pads)),
                 c.named("dilations", c.i64s(perDim(*dilation))),
                 c.named("group", c.b.getI64IntegerAttr(*groups))}));
}

Results batchNorm(AtenContext &c, bool legit) {
  FailureOr<Value> x = c.tensor("input"), scale = c.optionalTensor("weight"),
                   bias = c.optionalTensor("bias"),
                   mean = c.tensor("running_mean"),
                   var = c.tensor("running_var");
  FailureOr<double> eps = c.number("eps");
  if (failed(x) || failed(scale) || failed(bias) || failed(mean) ||
      failed(var) || failed(eps))
    return failure();
  if (!legit) {
    FailureOr<bool> training = c.boolean("training");
    if (failed(training))
      return failure();
    if (*training)
      return c.fail("batch_norm in training mode is not supported (export "
                    "the model after model.eval())"),
             failure();
  }
  int64_t channels = c.type(*x).getDimSize(1);
  Type element = c.type(*x).getElementType();
  Value s = *scale ? *scale : c.filled({channels}, element, 1.0);
  Value b = *bias ? *bias : c.filled({channels}, element, 0.0);
  FailureOr<Value> y = c.make<BatchNormOp>(
      {*x, s, b, *mean, *var}, {c.named("epsilon", c.b.getF64FloatAttr(*eps))});
  if (failed(y))
    return failure();
  SmallVector<Value> results = {*y};
  if (legit) // the saved mean and rstd of training: nothing may use them
    results.append({Value(), Value()});
  return results;
}

Results layerNorm(AtenContext &c, bool native) {
  FailureOr<Value> x = c.tensor("input"), scale = c.optionalTensor("weight"),
                   bias = c.optionalTensor("bias");
  FailureOr<SmallVector<int64_t>> shape = c.ints("normalized_shape");
  FailureOr<double> eps = c.number("eps");
  if (failed(x) || failed(scale) || failed(bias) || failed(shape) ||
      failed(eps))
    return failure();
  int64_t rank = c.type(*x).getRank();
  int64_t axis = rank - (int64_t)shape->size();
  if (axis < 0)
    return c.fail("normalized_shape is longer than the input's rank"),
           failure();
  Value s =
      *scale ? *scale : c.filled(*shape, c.type(*x).getElementType(), 1.0);
  SmallVector<Value> operands = {*x, s};
  if (*bias)
    operands.push_back(*bias);
  FailureOr<Value> y = c.make<LayerNormOp>(
      operands, {c.named("axis", c.b.getI64IntegerAttr(axis)),
                 c.named("epsilon", c.b.getF64FloatAttr(*eps))});
  if (failed(y))
    return failure();
  SmallVector<Value> results = {*y};
  if (native)
    results.append({Value(), Value()});
  return results;
}

Results maxPool(AtenContext &c, bool withIndices) {
  FailureOr<Value> x = c.tensor("self");
  FailureOr<SmallVector<int64_t>> kernel = c.ints("kernel_size"),
                                  stride = c.ints("stride"),
                                  padding = c.ints("padding"),
                                  dilation = c.ints("dilation");
  FailureOr<bool> ceil = c.boolean("ceil_mode");
  if (failed(x) || failed(kernel) || failed(stride) || failed(padding) ||
      failed(dilation) || failed(ceil))
    return failure();
  auto two = [](SmallVector<int64_t> v, SmallVector<int64_t> dflt) {
    if (v.empty())
      return dflt;
    if (v.size() == 1)
      v.push_back(v[0]);
    return v;
  };
  SmallVector<int64_t> k = two(*kernel, {}), pads = two(*padding, {0, 0});
  pads.append(SmallVector<int64_t>(pads));
  FailureOr<Value> y = c.make<MaxPoolOp>(
      {*x}, {c.named("kernel_shape", c.i64s(k)),
             c.named("strides", c.i64s(two(*stride, k))),
             c.named("pads", c.i64s(pads)),
             c.named("dilations", c.i64s(two(*dilation, {1, 1}))),
             c.named("ceil_mode", c.b.getBoolAttr(*ceil))});
  if (failed(y))
    return failure();
  SmallVector<Value> results = {*y};
  if (withIndices) // the argmax indices: for max_unpool, which Kiln lacks
    results.push_back(Value());
  return results;
}

Results avgPool(AtenContext &c) {
  FailureOr<Value> x = c.tensor("self");
  FailureOr<SmallVector<int64_t>> kernel = c.ints("kernel_size"),
                                  stride = c.ints("stride"),
                                  padding = c.ints("padding");
  FailureOr<bool> ceil = c.boolean("ceil_mode"),
                  countPad = c.boolean("count_include_pad");
  if (failed(x) || failed(kernel) || failed(stride) || failed(padding) ||
      failed(ceil) || failed(countPad))
    return failure();
  if (!c.isNone("divisor_override"))
    return c.fail("avg_pool2d with divisor_override is not supported"),
           failure();
  SmallVector<int64_t> k = *kernel, s = stride->empty() ? k : *stride,
                       pads = *padding;
  if (k.size() == 1)
    k.push_back(k[0]);
  if (s.size() == 1)
    s.push_back(s[0]);
  if (pads.size() == 1)
    pads.push_back(pads[0]);
  pads.append(SmallVector<int64_t>(pads));
  return one(c.make<AvgPoolOp>(
      {*x},
      {c.named("kernel_shape", c.i64s(k)), c.named("strides", c.i64s(s)),
       c.named("pads", c.i64s(pads)), c.named("dilations", c.i64s({1, 1})),
       c.named("ceil_mode", c.b.getBoolAttr(*ceil)),
       c.named("count_include_pad", c.b.getBoolAttr(*countPad))}));
}

Results adaptiveAvgPool(AtenContext &c) {
  FailureOr<Value> x = c.tensor("self");
  FailureOr<SmallVector<int64_t>> size = c.ints("output_size");
  if (failed(x) || failed(size))
    return failure();
  ArrayRef<int64_t> shape = c.type(*x).getShape();
  int64_t rank = shape.size();
  if (rank < 3 || size->size() != 2)
    return c.fail("adaptive_avg_pool2d needs a [N, C, H, W] input and two "
                  "output sizes"),
           failure();
  int64_t h = shape[rank - 2], w = shape[rank - 1];
  if ((*size)[0] == 1 && (*size)[1] == 1)
    return one(c.make<ReduceMeanOp>(
        {*x}, {c.named("axes", c.i64s({rank - 2, rank - 1})),
               c.named("keepdims", c.b.getBoolAttr(true))}));
  if ((*size)[0] <= 0 || (*size)[1] <= 0 || h % (*size)[0] || w % (*size)[1])
    return c.fail("adaptive_avg_pool2d to " + llvm::Twine((*size)[0]) + "x" +
                  llvm::Twine((*size)[1]) + " from " + llvm::Twine(h) + "x" +
                  llvm::Twine(w) +
                  " needs uneven windows, which are not supported"),
           failure();
  SmallVector<int64_t> k = {h / (*size)[0], w / (*size)[1]};
  return one(c.make<AvgPoolOp>({*x}, {c.named("kernel_shape", c.i64s(k)),
                                      c.named("strides", c.i64s(k)),
                                      c.named("pads", c.i64s({0, 0, 0, 0})),
                                      c.named("dilations", c.i64s({1, 1}))}));
}

/// k and v repeated along the head dim to q's head count (enable_gqa).
FailureOr<Value> repeatHeads(AtenContext &c, Value v, int64_t heads) {
  ArrayRef<int64_t> shape = c.type(v).getShape();
  int64_t rank = shape.size(), kv = shape[rank - 3];
  if (kv == heads)
    return v;
  if (kv <= 0 || heads % kv)
    return c.fail("enable_gqa needs the query heads (" + llvm::Twine(heads) +
                  ") to be a multiple of the key/value heads (" +
                  llvm::Twine(kv) + ")");
  SmallVector<int64_t> grouped(shape), expanded(shape), merged(shape);
  grouped.insert(grouped.begin() + rank - 2, 1);
  expanded = grouped;
  expanded[rank - 2] = heads / kv;
  merged[rank - 3] = heads;
  FailureOr<Value> r = c.reshape(v, grouped);
  if (succeeded(r))
    r = c.make<ExpandOp>({*r}, {c.named("shape", c.i64s(expanded))});
  if (succeeded(r))
    r = c.reshape(*r, merged);
  return r;
}

Results attention(AtenContext &c) {
  FailureOr<Value> q = c.tensor("query"), k = c.tensor("key"),
                   v = c.tensor("value"), mask = c.optionalTensor("attn_mask");
  FailureOr<double> dropout = c.number("dropout_p");
  FailureOr<bool> causal = c.boolean("is_causal"),
                  gqa = c.boolean("enable_gqa");
  if (failed(q) || failed(k) || failed(v) || failed(mask) || failed(dropout) ||
      failed(causal) || failed(gqa))
    return failure();
  if (*dropout != 0)
    return c.fail("scaled_dot_product_attention with dropout_p > 0 is "
                  "training; export the model after model.eval()"),
           failure();
  RankedTensorType qType = c.type(*q);
  int64_t rank = qType.getRank(), depth = qType.getDimSize(rank - 1);
  // Batch, heads and sequence lengths may be symbolic, the head size not.
  for (Value operand : {*q, *k, *v})
    if (c.type(operand).isDynamicDim(rank - 1) ||
        (*gqa && rank >= 3 && c.type(operand).isDynamicDim(rank - 3)))
      return c.fail("scaled_dot_product_attention with a symbolic head "
                    "size or head count; compile with --input-shape"),
             failure();
  double scale = 1.0 / std::sqrt(double(depth));
  if (!c.isNone("scale")) {
    FailureOr<double> given = c.number("scale");
    if (failed(given))
      return failure();
    scale = *given;
  }
  if (*gqa && rank >= 3) {
    k = repeatHeads(c, *k, qType.getDimSize(rank - 3));
    v = succeeded(k) ? repeatHeads(c, *v, qType.getDimSize(rank - 3)) : v;
    if (failed(k) || failed(v))
      return failure();
  }
  SmallVector<Value> operands = {*q, *k, *v};
  if (*mask) {
    Value m = *mask;
    Type element = qType.getElementType();
    // A boolean mask keeps where true: 0 there, -inf elsewhere.
    if (c.type(m).getElementType().isInteger(1)) {
      FailureOr<Value> additive = c.make<WhereOp>(
          {m, c.scalar(element, 0.0), c.scalar(element, -HUGE_VAL)});
      if (failed(additive))
        return failure();
      m = *additive;
    }
    operands.push_back(m);
  }
  return one(c.make<AttentionOp>(
      operands, {c.named("scale", c.b.getF64FloatAttr(scale)),
                 c.named("causal", c.b.getBoolAttr(*causal))}));
}

Results softmax(AtenContext &c, bool internal) {
  FailureOr<Value> x = c.tensor("self");
  FailureOr<int64_t> axis = c.integer("dim");
  if (failed(x) || failed(axis))
    return failure();
  if (internal) {
    FailureOr<bool> toFloat = c.boolean("half_to_float");
    if (failed(toFloat))
      return failure();
    if (*toFloat)
      return c.fail("_softmax with half_to_float is not supported"), failure();
  } else if (!c.isNone("dtype")) {
    return c.fail("softmax with a dtype is not supported"), failure();
  }
  FailureOr<int64_t> d = c.dim(*axis, c.type(*x).getRank());
  if (failed(d))
    return failure();
  return one(
      c.make<SoftmaxOp>({*x}, {c.named("axis", c.b.getI64IntegerAttr(*d))}));
}
} // namespace

void mlir::kiln::pt2::registerAtenNNHandlers(llvm::StringMap<AtenHandler> &t) {
  t["aten.linear.default"] = linear;
  t["aten.addmm.default"] = addmm;
  t["aten.mm.default"] = [](AtenContext &c) {
    return matmul(c, "self", "mat2");
  };
  t["aten.bmm.default"] = [](AtenContext &c) {
    return matmul(c, "self", "mat2");
  };
  t["aten.matmul.default"] = [](AtenContext &c) {
    return matmul(c, "self", "other");
  };
  t["aten.conv2d.default"] = [](AtenContext &c) {
    return convolution(c, false);
  };
  t["aten.conv_transpose2d.input"] = [](AtenContext &c) {
    return convolution(c, false, /*transposed=*/true);
  };
  t["aten.conv_transpose1d.default"] = t["aten.conv_transpose2d.input"];
  t["aten.convolution.default"] = [](AtenContext &c) {
    return convolution(c, true);
  };
  t["aten.batch_norm.default"] = [](AtenContext &c) {
    return batchNorm(c, false);
  };
  t["aten._native_batch_norm_legit_no_training.default"] = [](AtenContext &c) {
    return batchNorm(c, true);
  };
  t["aten.layer_norm.default"] = [](AtenContext &c) {
    return layerNorm(c, false);
  };
  t["aten.native_layer_norm.default"] = [](AtenContext &c) {
    return layerNorm(c, true);
  };
  t["aten.max_pool2d.default"] = [](AtenContext &c) {
    return maxPool(c, false);
  };
  t["aten.max_pool2d_with_indices.default"] = [](AtenContext &c) {
    return maxPool(c, true);
  };
  t["aten.avg_pool2d.default"] = avgPool;
  t["aten.adaptive_avg_pool2d.default"] = adaptiveAvgPool;
  t["aten.scaled_dot_product_attention.default"] = attention;
  t["aten._softmax.default"] = [](AtenContext &c) { return softmax(c, true); };
  t["aten.softmax.int"] = [](AtenContext &c) { return softmax(c, false); };
}
