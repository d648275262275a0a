//===- AtenSchemas.cpp - ATen op arguments and their defaults -------------===//
//
// torch.export writes an argument only when it differs from its default
// (gelu's `approximate`, SDPA's `scale`, max_pool2d's `dilation`), so the
// importer needs each op's schema. This is the one table of them, taken
// from ATen's native_functions.yaml: the argument names in order, with the
// defaults as Python writes them (None, True, 1, 1e-05, [1, 1], 'none').
//
//===----------------------------------------------------------------------===//
#include "compiler/import/pt2/AtenContext.h"
#include "compiler/import/pt2/Pt2Archive.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include "llvm/ADT/StringExtras.h"

#include <cmath>

using namespace mlir;
using namespace mlir::kiln::pt2;
using llvm::StringRef;
using llvm::json::Object;

namespace {
const char *const kSchemas[][2] = {
    // Linear algebra.
    {"aten.linear.default", "input, weight, bias=None"},
    {"aten.addmm.default", "self, mat1, mat2, beta=1, alpha=1"},
    {"aten.mm.default", "self, mat2"},
    {"aten.bmm.default", "self, mat2"},
    {"aten.matmul.default", "self, other"},
    // Convolution, normalization, pooling.
    {"aten.conv2d.default", "input, weight, bias=None, stride=[1, 1], "
                            "padding=[0, 0], dilation=[1, 1], groups=1"},
    {"aten.conv_transpose2d.input",
     "input, weight, bias=None, stride=[1, 1], padding=[0, 0], "
     "output_padding=[0, 0], groups=1, dilation=[1, 1]"},
    {"aten.conv_transpose1d.default",
     "input, weight, bias=None, stride=[1], padding=[0], "
     "output_padding=[0], groups=1, dilation=[1]"},
    {"aten.convolution.default", "input, weight, bias, stride, padding, "
                                 "dilation, transposed, output_padding, "
                                 "groups"},
    {"aten.batch_norm.default", "input, weight, bias, running_mean, "
                                "running_var, training, momentum, eps, "
                                "cudnn_enabled"},
    {"aten._native_batch_norm_legit_no_training.default",
     "input, weight, bias, running_mean, running_var, momentum, eps"},
    {"aten.layer_norm.default", "input, normalized_shape, weight=None, "
                                "bias=None, eps=1e-05, cudnn_enable=True"},
    {"aten.native_layer_norm.default",
     "input, normalized_shape, weight, bias, eps"},
    {"aten.max_pool2d.default", "self, kernel_size, stride=[], padding=[0, 0], "
                                "dilation=[1, 1], ceil_mode=False"},
    {"aten.max_pool2d_with_indices.default",
     "self, kernel_size, stride=[], padding=[0, 0], dilation=[1, 1], "
     "ceil_mode=False"},
    {"aten.avg_pool2d.default",
     "self, kernel_size, stride=[], padding=[0, 0], ceil_mode=False, "
     "count_include_pad=True, divisor_override=None"},
    {"aten.adaptive_avg_pool2d.default", "self, output_size"},
    {"aten.scaled_dot_product_attention.default",
     "query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, "
     "scale=None, enable_gqa=False"},
    {"aten.dropout.default", "input, p, train"},
    // Activations and elementwise math.
    {"aten.relu.default", "self"},
    {"aten.relu_.default", "self"},
    {"aten.gelu.default", "self, approximate='none'"},
    {"aten.silu.default", "self"},
    {"aten.silu_.default", "self"},
    {"aten.sigmoid.default", "self"},
    {"aten.tanh.default", "self"},
    {"aten.exp.default", "self"},
    {"aten.sqrt.default", "self"},
    {"aten.rsqrt.default", "self"},
    {"aten.neg.default", "self"},
    {"aten.hardtanh.default", "self, min_val=-1, max_val=1"},
    {"aten.hardtanh_.default", "self, min_val=-1, max_val=1"},
    {"aten.hardswish.default", "self"},
    {"aten.hardswish_.default", "self"},
    {"aten.hardsigmoid.default", "self"},
    {"aten.add.Tensor", "self, other, alpha=1"},
    {"aten.add_.Tensor", "self, other, alpha=1"},
    {"aten.sub.Tensor", "self, other, alpha=1"},
    {"aten.mul.Tensor", "self, other"},
    {"aten.mul_.Tensor", "self, other"},
    {"aten.div.Tensor", "self, other"},
    {"aten.add.Scalar", "self, other, alpha=1"},
    {"aten.mul.Scalar", "self, other"},
    {"aten.div.Scalar", "self, other"},
    {"aten.eq.Scalar", "self, other"},
    {"aten.ne.Scalar", "self, other"},
    {"aten.lt.Scalar", "self, other"},
    {"aten.le.Scalar", "self, other"},
    {"aten.gt.Scalar", "self, other"},
    {"aten.ge.Scalar", "self, other"},
    {"aten.eq.Tensor", "self, other"},
    {"aten.lt.Tensor", "self, other"},
    {"aten.gt.Tensor", "self, other"},
    {"aten.logical_and.default", "self, other"},
    {"aten.logical_or.default", "self, other"},
    {"aten.logical_not.default", "self"},
    {"aten.where.self", "condition, self, other"},
    {"aten._softmax.default", "self, dim, half_to_float"},
    {"aten.softmax.int", "self, dim, dtype=None"},
    // Reductions.
    {"aten.mean.dim", "self, dim, keepdim=False, dtype=None"},
    {"aten.sum.dim_IntList", "self, dim, keepdim=False, dtype=None"},
    {"aten.any.dim", "self, dim, keepdim=False"},
    // Shapes and copies.
    {"aten.view.default", "self, size"},
    {"aten._unsafe_view.default", "self, size"},
    {"aten.reshape.default", "self, shape"},
    {"aten.flatten.using_ints", "self, start_dim=0, end_dim=-1"},
    {"aten.permute.default", "self, dims"},
    {"aten.t.default", "self"},
    {"aten.transpose.int", "self, dim0, dim1"},
    {"aten.unsqueeze.default", "self, dim"},
    {"aten.squeeze.dim", "self, dim"},
    {"aten.expand.default", "self, size, implicit=False"},
    {"aten.clone.default", "self, memory_format=None"},
    {"aten.alias.default", "self"},
    {"aten.detach.default", "self"},
    {"aten.cat.default", "tensors, dim=0"},
    {"aten.split.Tensor", "self, split_size, dim=0"},
    {"aten.split_with_sizes.default", "self, split_sizes, dim=0"},
    {"aten.slice.Tensor", "self, dim=0, start=None, end=None, step=1"},
    {"aten.full.default", "size, fill_value, dtype=None, layout=None, "
                          "device=None, pin_memory=None"},
    {"aten.scalar_tensor.default", "s, dtype=None, layout=None, device=None, "
                                   "pin_memory=None"},
    {"aten.arange.default", "end, dtype=None, layout=None, device=None, "
                            "pin_memory=None"},
    {"aten.arange.start", "start, end, dtype=None, layout=None, device=None, "
                          "pin_memory=None"},
    {"aten.arange.start_step", "start, end, step=1, dtype=None, layout=None, "
                               "device=None, pin_memory=None"},
    {"aten.contiguous.default", "self, memory_format=0"},
    {"aten.dropout_.default", "self, p, train"},
    {"aten.as_strided.default", "self, size, stride, storage_offset=None"},
    {"aten.slice_scatter.default",
     "self, src, dim=0, start=None, end=None, step=1"},
    {"aten.clamp.default", "self, min=None, max=None"},
    {"aten.fmod.Scalar", "self, other"},
    {"aten.select.int", "self, dim, index"},
    {"aten.squeeze.dims", "self, dim"},
    {"aten.unflatten.int", "self, dim, sizes"},
    {"aten.constant_pad_nd.default", "self, pad, value=0"},
    {"aten.pad.default", "self, pad, mode='constant', value=None"},
    {"aten.roll.default", "self, shifts, dims=[]"},
    {"aten.index_select.default", "self, dim, index"},
    {"aten.index.Tensor", "self, indices"},
    {"aten.masked_fill.Scalar", "self, mask, value"},
    {"aten.embedding.default", "weight, indices, padding_idx=-1, "
                               "scale_grad_by_freq=False, sparse=False"},
    {"aten.zeros_like.default", "self, dtype=None, layout=None, device=None, "
                                "pin_memory=None, memory_format=None"},
    {"aten.ones_like.default", "self, dtype=None, layout=None, device=None, "
                               "pin_memory=None, memory_format=None"},
    {"aten.sym_size.int", "self, dim"},
    // Arithmetic on symbolic sizes (a view to [b * t, d]): every operator
    // torch.export serializes (AtenSymbolic.cpp).
    {"_operator.add", "a, b"},
    {"_operator.sub", "a, b"},
    {"_operator.mul", "a, b"},
    {"_operator.truediv", "a, b"},
    {"_operator.floordiv", "a, b"},
    {"_operator.mod", "a, b"},
    {"_operator.pow", "a, b"},
    {"_operator.lshift", "a, b"},
    {"_operator.rshift", "a, b"},
    {"_operator.and_", "a, b"},
    {"_operator.or_", "a, b"},
    {"_operator.eq", "a, b"},
    {"_operator.ne", "a, b"},
    {"_operator.lt", "a, b"},
    {"_operator.le", "a, b"},
    {"_operator.gt", "a, b"},
    {"_operator.ge", "a, b"},
    {"_operator.neg", "a"},
    {"_operator.pos", "a"},
    {"math.trunc", "x"},
    {"torch.sym_max", "a, b"},
    {"torch.sym_min", "a, b"},
    {"torch.sym_not", "a"},
    {"torch.sym_int", "a"},
    {"torch.sym_float", "a"},
    {"torch._sym_sqrt", "a"},
    {"torch.sym_ite", "b, t, f"},
    {"aten._assert_scalar.default", "self, assert_msg"},
    {"aten.sym_constrain_range.default", "size, min=None, max=None"},
    {"aten.sym_constrain_range_for_size.default", "size, min=None, max=None"},
    {"aten._assert_tensor_metadata.default",
     "a, size=None, stride=None, dtype=None, device=None, layout=None"},
    {"aten.to.dtype", "self, dtype, non_blocking=False, copy=False, "
                      "memory_format=None"},
    {"aten._to_copy.default", "self, dtype=None, layout=None, device=None, "
                              "pin_memory=None, non_blocking=False, "
                              "memory_format=None"},
    {"aten.new_zeros.default", "self, size, dtype=None, layout=None, "
                               "device=None, pin_memory=None"},
    {"aten.full_like.default", "self, fill_value, dtype=None, layout=None, "
                               "device=None, pin_memory=None, "
                               "memory_format=None"},
};

/// A Python literal default as the archive's union object.
llvm::json::Value unionOf(StringRef text) {
  text = text.trim();
  if (text == "None")
    return Object{{"as_none", true}};
  if (text == "True" || text == "False")
    return Object{{"as_bool", text == "True"}};
  if (text.starts_with("'"))
    return Object{{"as_string", text.drop_front().drop_back().str()}};
  if (text.starts_with("[")) {
    llvm::json::Array values;
    SmallVector<StringRef> items;
    text.drop_front().drop_back().split(items, ',', -1, false);
    for (StringRef item : items)
      values.push_back(std::stoll(item.trim().str()));
    return Object{{"as_ints", std::move(values)}};
  }
  int64_t integer;
  if (!text.getAsInteger(10, integer))
    return Object{{"as_int", integer}};
  return Object{{"as_float", std::stod(text.str())}};
}

llvm::StringMap<OpSchema> buildSchemas() {
  llvm::StringMap<OpSchema> schemas;
  for (const auto &[op, args] : kSchemas) {
    OpSchema &schema = schemas[op];
    // Split at the commas outside brackets.
    StringRef rest = args;
    while (!rest.empty()) {
      size_t depth = 0, i = 0;
      for (; i < rest.size(); ++i) {
        depth += rest[i] == '[';
        depth -= rest[i] == ']';
        if (rest[i] == ',' && depth == 0)
          break;
      }
      auto [name, value] = rest.take_front(i).split('=');
      schema.args.emplace_back(name.trim().str(),
                               value.empty() ? llvm::json::Value(nullptr)
                                             : unionOf(value));
      rest = rest.drop_front(std::min(i + 1, rest.size())).ltrim();
    }
  }
  return schemas;
}
} // namespace

const OpSchema *mlir::kiln::pt2::schemaOf(StringRef op) {
  static const llvm::StringMap<OpSchema> schemas = buildSchemas();
  auto it = schemas.find(op);
  return it == schemas.end() ? nullptr : &it->second;
}

// ---- AtenContext: arguments by name ----

const Object *AtenContext::arg(StringRef name) const {
  if (const llvm::json::Array *inputs = node.getArray("inputs"))
    for (const llvm::json::Value &input : *inputs) {
      const Object *in = input.getAsObject();
      if (in && in->getString("name") == name)
        return in->getObject("arg");
    }
  for (const auto &[argName, value] : schema.args)
    if (argName == name)
      return value.getAsObject();
  return nullptr;
}

bool AtenContext::isNone(StringRef name) const {
  const Object *a = arg(name);
  return !a || a->get("as_none");
}

LogicalResult AtenContext::fail(const llvm::Twine &message) {
  if (error.empty())
    error = message.str();
  return failure();
}

FailureOr<Value> AtenContext::optionalTensor(StringRef name) {
  const Object *a = arg(name);
  if (!a || a->get("as_none"))
    return Value();
  const Object *t = a->getObject("as_tensor");
  std::optional<StringRef> ref = t ? t->getString("name") : std::nullopt;
  if (!ref)
    return fail("argument '" + name + "' is not a tensor");
  Value v = lookup(*ref);
  if (!v)
    return fail("argument '" + name + "' names '" + *ref +
                "', which is not computed before this node");
  return v;
}

FailureOr<Value> AtenContext::tensor(StringRef name) {
  FailureOr<Value> v = optionalTensor(name);
  if (succeeded(v) && !*v)
    return fail("argument '" + name + "' is missing");
  return v;
}

FailureOr<SmallVector<Value>> AtenContext::tensors(StringRef name) {
  const Object *a = arg(name);
  const llvm::json::Array *list = a ? a->getArray("as_tensors") : nullptr;
  if (!list)
    return fail("argument '" + name + "' is not a list of tensors");
  SmallVector<Value> values;
  for (const llvm::json::Value &item : *list) {
    const Object *t = item.getAsObject();
    std::optional<StringRef> ref = t ? t->getString("name") : std::nullopt;
    Value v = ref ? lookup(*ref) : Value();
    if (!v)
      return fail("argument '" + name +
                  "' names a tensor not computed "
                  "before this node");
    values.push_back(v);
  }
  return values;
}

FailureOr<int64_t> AtenContext::integer(StringRef name) {
  const Object *a = arg(name);
  if (std::optional<int64_t> v = a ? a->getInteger("as_int") : std::nullopt)
    return *v;
  if (const Object *sym = a ? a->getObject("as_sym_int") : nullptr)
    if (std::optional<int64_t> v = sym->getInteger("as_int"))
      return *v;
  return fail("argument '" + name + "' is not an integer" +
              (a && a->getObject("as_sym_int")
                   ? " (a symbolic size: compile with --input-shape)"
                   : ""));
}

FailureOr<SmallVector<int64_t>> AtenContext::ints(StringRef name) {
  const Object *a = arg(name);
  SmallVector<int64_t> values;
  if (const llvm::json::Array *list = a ? a->getArray("as_ints") : nullptr) {
    for (const llvm::json::Value &v : *list)
      values.push_back(v.getAsInteger().value_or(0));
    return values;
  }
  // SymInt lists: every entry must be a known integer here.
  if (const llvm::json::Array *list =
          a ? a->getArray("as_sym_ints") : nullptr) {
    for (const llvm::json::Value &v : *list) {
      const Object *o = v.getAsObject();
      std::optional<int64_t> i = o ? o->getInteger("as_int") : std::nullopt;
      if (!i)
        return fail("argument '" + name +
                    "' holds a symbolic size; compile "
                    "with --input-shape to specialize it");
      values.push_back(*i);
    }
    return values;
  }
  if (std::optional<int64_t> v = a ? a->getInteger("as_int") : std::nullopt)
    return SmallVector<int64_t>{*v};
  return fail("argument '" + name + "' is not a list of integers");
}

namespace {
/// The sympy expression of a size entry ({"as_expr": {"expr_str": ...}}).
std::optional<StringRef> expressionOf(const Object *size) {
  const Object *expr = size ? size->getObject("as_expr") : nullptr;
  return expr ? expr->getString("expr_str") : std::nullopt;
}
} // namespace

FailureOr<SmallVector<int64_t>>
AtenContext::viewSizes(StringRef name, StringRef input,
                       SmallVectorImpl<Value> *runTime) {
  const Object *a = arg(name);
  const llvm::json::Array *list = a ? a->getArray("as_sym_ints") : nullptr;
  if (!list || !graph)
    return ints(name);
  const Object *in = arg(input);
  const Object *t = in ? in->getObject("as_tensor") : nullptr;
  std::optional<StringRef> tensorName = t ? t->getString("name") : std::nullopt;
  const Object *values = graph->getObject("tensor_values");
  const Object *meta =
      values && tensorName ? values->getObject(*tensorName) : nullptr;
  const llvm::json::Array *dims = meta ? meta->getArray("sizes") : nullptr;
  const Object *symbolic = graph->getObject("sym_int_values");
  SmallVector<int64_t> sizes;
  if (runTime)
    runTime->assign(list->size(), Value());
  for (auto [i, v] : llvm::enumerate(*list)) {
    const Object *entry = v.getAsObject();
    if (std::optional<int64_t> constant =
            entry ? entry->getInteger("as_int") : std::nullopt) {
      sizes.push_back(*constant);
      continue;
    }
    std::optional<StringRef> symbol =
        entry ? entry->getString("as_name") : std::nullopt;
    std::optional<StringRef> expr =
        symbol && symbolic ? expressionOf(symbolic->getObject(*symbol))
                           : std::nullopt;
    std::optional<StringRef> own = dims && i < dims->size()
                                       ? expressionOf((*dims)[i].getAsObject())
                                       : std::nullopt;
    sizes.push_back(ShapedType::kDynamic);
    if (expr && own && *expr == *own)
      continue;
    Value computed =
        runTime && symbol && symScalars ? symScalars->lookup(*symbol) : Value();
    if (computed && computed.getType().isInteger(1))
      computed = arith::ExtUIOp::create(b, loc, b.getI64Type(), computed);
    if (computed && !computed.getType().isInteger(64))
      return fail("argument '" + name + "' entry " + llvm::Twine(i) +
                  " is a float, not a size");
    if (computed) {
      (*runTime)[i] = computed;
      continue;
    }
    return fail("argument '" + name + "' entry " + llvm::Twine(i) +
                " is a symbolic size" +
                (expr ? " (" + compactSympy(*expr) + ")" : std::string()) +
                " other than dim " + llvm::Twine(i) + " of '" +
                tensorName.value_or("?") +
                "'; compile with --input-shape to specialize it");
  }
  return sizes;
}

FailureOr<Value> AtenContext::symScalar(StringRef name) {
  const Object *a = arg(name);
  if (!a)
    return fail("argument '" + name + "' is missing");
  if (std::optional<int64_t> i = a->getInteger("as_int"))
    return Value(arith::ConstantIntOp::create(b, loc, b.getI64Type(), *i));
  if (std::optional<bool> v = a->getBoolean("as_bool"))
    return Value(arith::ConstantIntOp::create(b, loc, b.getI1Type(), *v));
  if (a->get("as_float")) {
    FailureOr<double> v = number(name);
    if (failed(v))
      return failure();
    return Value(arith::ConstantFloatOp::create(b, loc, b.getF64Type(),
                                                llvm::APFloat(*v)));
  }
  for (StringRef kind : {"as_sym_int", "as_sym_float", "as_sym_bool"}) {
    const Object *sym = a->getObject(kind);
    if (!sym)
      continue;
    // A SymInt the exporter knew to be constant is written in place.
    if (std::optional<int64_t> i = sym->getInteger("as_int"))
      return Value(arith::ConstantIntOp::create(b, loc, b.getI64Type(), *i));
    if (std::optional<bool> v = sym->getBoolean("as_bool"))
      return Value(arith::ConstantIntOp::create(b, loc, b.getI1Type(), *v));
    if (std::optional<double> f = sym->getNumber("as_float"))
      return Value(arith::ConstantFloatOp::create(b, loc, b.getF64Type(),
                                                  llvm::APFloat(*f)));
    std::optional<StringRef> symbol = sym->getString("as_name");
    if (Value known =
            symbol && symScalars ? symScalars->lookup(*symbol) : Value())
      return known;
    return fail("argument '" + name + "' names symbolic value '" +
                symbol.value_or("?") + "', not computed before this node");
  }
  return fail("argument '" + name + "' is not a number");
}

FailureOr<Value> AtenContext::symInt(StringRef name) {
  FailureOr<Value> v = symScalar(name);
  if (failed(v))
    return failure();
  if (v->getType().isInteger(1))
    return Value(arith::ExtUIOp::create(b, loc, b.getI64Type(), *v));
  if (!v->getType().isInteger(64))
    return fail("argument '" + name + "' is a float, not an integer"),
           failure();
  return *v;
}

void AtenContext::setSymOutput(Value value) {
  const llvm::json::Array *outputs = node.getArray("outputs");
  const Object *out =
      outputs && !outputs->empty() ? outputs->front().getAsObject() : nullptr;
  for (StringRef kind : {"as_sym_int", "as_sym_float", "as_sym_bool"}) {
    const Object *sym = out ? out->getObject(kind) : nullptr;
    std::optional<StringRef> name =
        sym ? sym->getString("as_name") : std::nullopt;
    if (name && symScalars)
      (*symScalars)[*name] = value;
  }
}

SmallVector<int64_t> AtenContext::outputStaticShape(int64_t rank) const {
  const llvm::json::Array *outputs = node.getArray("outputs");
  const Object *out =
      outputs && !outputs->empty() ? outputs->front().getAsObject() : nullptr;
  const Object *t = out ? out->getObject("as_tensor") : nullptr;
  std::optional<StringRef> name = t ? t->getString("name") : std::nullopt;
  const Object *values = graph ? graph->getObject("tensor_values") : nullptr;
  const Object *meta = values && name ? values->getObject(*name) : nullptr;
  const llvm::json::Array *sizes = meta ? meta->getArray("sizes") : nullptr;
  SmallVector<int64_t> extents(rank, -1);
  if (sizes && (int64_t)sizes->size() == rank)
    for (auto [d, v] : llvm::enumerate(*sizes))
      if (const Object *o = v.getAsObject())
        extents[d] = o->getInteger("as_int").value_or(-1);
  return extents;
}

Value AtenContext::extent(Value x, int64_t d) {
  Type i64 = b.getI64Type();
  if (!type(x).isDynamicDim(d))
    return arith::ConstantIntOp::create(b, loc, i64, type(x).getDimSize(d));
  return arith::IndexCastOp::create(b, loc, i64,
                                    tensor::DimOp::create(b, loc, x, d));
}

FailureOr<double> AtenContext::number(StringRef name) {
  const Object *a = arg(name);
  const llvm::json::Value *v = a ? a->get("as_float") : nullptr;
  if (!v && a)
    v = a->get("as_int");
  if (std::optional<bool> b = !v && a ? a->getBoolean("as_bool") : std::nullopt)
    return *b ? 1.0 : 0.0;
  if (v) {
    if (std::optional<double> d = v->getAsNumber())
      return *d;
    if (std::optional<StringRef> s = v->getAsString()) {
      if (*s == "Infinity")
        return HUGE_VAL;
      if (*s == "-Infinity")
        return -HUGE_VAL;
      if (*s == "NaN")
        return NAN;
    }
  }
  return fail("argument '" + name + "' is not a number");
}

FailureOr<Type> AtenContext::scalarType(StringRef name, Type dflt) {
  if (isNone(name))
    return dflt;
  const Object *a = arg(name);
  std::optional<int64_t> code = a->getInteger("as_scalar_type");
  Type type = code ? elementType(ctx(), *code) : Type();
  if (!type)
    return fail("argument '" + name + "' is not a dtype Kiln supports");
  return type;
}

FailureOr<bool> AtenContext::boolean(StringRef name) {
  const Object *a = arg(name);
  if (std::optional<bool> v = a ? a->getBoolean("as_bool") : std::nullopt)
    return *v;
  return fail("argument '" + name + "' is not a boolean");
}

FailureOr<std::string> AtenContext::string(StringRef name) {
  const Object *a = arg(name);
  if (std::optional<StringRef> v = a ? a->getString("as_string") : std::nullopt)
    return v->str();
  return fail("argument '" + name + "' is not a string");
}

Value AtenContext::filled(ArrayRef<int64_t> shape, Type type, double value) {
  auto tensorType = RankedTensorType::get(shape, type);
  Attribute scalar =
      isa<FloatType>(type) ? Attribute(FloatAttr::get(type, value))
      : type.isInteger(1)  ? Attribute(BoolAttr::get(ctx(), value != 0))
                           : Attribute(IntegerAttr::get(type, (int64_t)value));
  return constant(
      cast<ElementsAttr>(DenseElementsAttr::get(tensorType, scalar)));
}

FailureOr<Value> AtenContext::reshape(Value x, ArrayRef<int64_t> shape) {
  if (llvm::none_of(shape, ShapedType::isDynamic))
    return make<ReshapeOp>({x}, {named("shape", i64s(shape))});
  RankedTensorType in = type(x);
  SmallVector<int64_t> values, known;
  for (auto [i, d] : llvm::enumerate(shape)) {
    bool copied = ShapedType::isDynamic(d);
    if (copied && ((int64_t)i >= in.getRank() || !in.isDynamicDim(i)))
      return fail("a symbolic size moves to another dim");
    values.push_back(copied ? 0 : d);
    known.push_back(copied ? -1 : d);
  }
  auto shapeType =
      RankedTensorType::get({(int64_t)values.size()}, b.getI64Type());
  Value shapeValue = constant(cast<ElementsAttr>(
      DenseElementsAttr::get(shapeType, ArrayRef<int64_t>(values))));
  return make<DynamicReshapeOp>({x, shapeValue},
                                {named("static_shape", i64s(known))});
}

FailureOr<Value> AtenContext::slice(Value x, int64_t dim, int64_t start,
                                    int64_t end, int64_t step) {
  ArrayRef<int64_t> shape = type(x).getShape();
  SmallVector<int64_t> starts(shape.size(), 0), ends(shape),
      steps(shape.size(), 1);
  starts[dim] = start, ends[dim] = end, steps[dim] = step;
  return make<SliceOp>({x}, {named("starts", i64s(starts)),
                             named("ends", i64s(ends)),
                             named("steps", i64s(steps))});
}

FailureOr<int64_t> AtenContext::sliceBound(StringRef name, int64_t dflt,
                                           int64_t extent) {
  if (isNone(name))
    return dflt;
  FailureOr<int64_t> v = integer(name);
  if (failed(v))
    return failure();
  return std::clamp<int64_t>(*v < 0 ? *v + extent : *v, 0, extent);
}

FailureOr<int64_t> AtenContext::dim(int64_t d, int64_t rank) {
  int64_t r = std::max<int64_t>(rank, 1);
  if (d < -r || d >= r)
    return fail("dim " + llvm::Twine(d) + " is out of range for rank " +
                llvm::Twine(rank));
  return d < 0 ? d + r : d;
}
