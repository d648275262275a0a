//===- AtenTensor.cpp - ATen's elementwise, reduction and shape ops -------===//
#include "compiler/import/pt2/AtenContext.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <cmath>

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::pt2;

namespace {
template <typename OpTy> Results unary(AtenContext &c) {
  FailureOr<Value> x = c.tensor("self");
  return failed(x) ? Results(failure()) : one(c.make<OpTy>({*x}));
}

Results identity(AtenContext &c, StringRef name) {
  FailureOr<Value> x = c.tensor(name);
  return failed(x) ? Results(failure()) : Results(SmallVector<Value>{*x});
}

/// A symbolic scalar (i64, f64 or i1) as a rank-0 tensor of `type`: a
/// tensor of the scalar's own type, cast by kiln.cast (which converts
/// between every pair of element types, unsigned ones included).
FailureOr<Value> symbolAsTensor(AtenContext &c, Value v, Type type) {
  Value t = tensor::FromElementsOp::create(
      c.b, c.loc, RankedTensorType::get({}, v.getType()), v);
  if (v.getType() == type)
    return t;
  return c.make<CastOp>({t}, {c.named("to", TypeAttr::get(type))});
}

/// `other` of a .Tensor overload (a tensor) or a .Scalar one (a number, as a
/// rank-0 constant of self's element type; a symbolic scalar the program
/// computes, as a rank-0 tensor of it). Python's promotion: an integer
/// `self` with a float scalar computes in f32, `self` converted.
FailureOr<Value> operand(AtenContext &c, Value &self, StringRef name) {
  const llvm::json::Object *a = c.arg(name);
  if (a && a->getObject("as_tensor"))
    return c.tensor(name);
  if (a && (a->getObject("as_sym_int") || a->getObject("as_sym_float") ||
            a->getObject("as_sym_bool"))) {
    FailureOr<Value> v = c.symScalar(name);
    if (failed(v))
      return failure();
    // torch's promotion of a tensor with a Python number: a float number
    // makes an integer or bool tensor f32, an int makes a bool tensor i64.
    Type type = c.type(self).getElementType();
    Type promoted = isa<FloatType>(v->getType()) && !isa<FloatType>(type)
                        ? Type(c.b.getF32Type())
                    : v->getType().isInteger(64) && type.isInteger(1)
                        ? Type(c.b.getI64Type())
                        : type;
    if (promoted != type) {
      FailureOr<Value> cast =
          c.make<CastOp>({self}, {c.named("to", TypeAttr::get(promoted))});
      if (failed(cast))
        return failure();
      self = *cast;
    }
    return symbolAsTensor(c, *v, promoted);
  }
  FailureOr<double> v = c.number(name);
  if (failed(v))
    return failure();
  return c.scalar(c.type(self).getElementType(), *v);
}

/// self (+|-) alpha * other.
template <typename OpTy> Results addSub(AtenContext &c) {
  FailureOr<Value> self = c.tensor("self");
  FailureOr<Value> other = failed(self) ? self : operand(c, *self, "other");
  FailureOr<double> alpha = c.number("alpha");
  if (failed(other) || failed(alpha))
    return failure();
  if (*alpha != 1) {
    other = c.make<MulOp>(
        {*other, c.scalar(c.type(*other).getElementType(), *alpha)});
    if (failed(other))
      return failure();
  }
  return one(c.make<OpTy>({*self, *other}));
}

template <typename OpTy> Results binary(AtenContext &c) {
  FailureOr<Value> self = c.tensor("self");
  FailureOr<Value> other = failed(self) ? self : operand(c, *self, "other");
  if (failed(other))
    return failure();
  return one(c.make<OpTy>({*self, *other}));
}

/// aten.div: true division, so integer and bool operands divide as f32
/// (`arange(s) / s`), as torch does.
Results divide(AtenContext &c) {
  auto toFloat = [&](FailureOr<Value> v) -> FailureOr<Value> {
    if (failed(v) || isa<FloatType>(c.type(*v).getElementType()))
      return v;
    return c.make<CastOp>({*v},
                          {c.named("to", TypeAttr::get(c.b.getF32Type()))});
  };
  // self first, so that a number `other` takes its (float) type.
  FailureOr<Value> self = toFloat(c.tensor("self"));
  FailureOr<Value> other =
      failed(self) ? self : toFloat(operand(c, *self, "other"));
  if (failed(other))
    return failure();
  return one(c.make<DivOp>({*self, *other}));
}

Results gelu(AtenContext &c) {
  FailureOr<Value> x = c.tensor("self");
  FailureOr<std::string> approximate = c.string("approximate");
  if (failed(x) || failed(approximate))
    return failure();
  if (*approximate != "none" && *approximate != "tanh")
    return c.fail("gelu approximate='" + *approximate + "' is unknown"),
           failure();
  return one(
      c.make<GeluOp>({*x}, {c.named("tanh_approximation",
                                    c.b.getBoolAttr(*approximate == "tanh"))}));
}

Results clip(AtenContext &c, Value x, double lo, double hi) {
  return one(c.make<ClipOp>({x}, {c.named("min", c.b.getF64FloatAttr(lo)),
                                  c.named("max", c.b.getF64FloatAttr(hi))}));
}

Results hardtanh(AtenContext &c) {
  FailureOr<Value> x = c.tensor("self");
  FailureOr<double> lo = c.number("min_val"), hi = c.number("max_val");
  if (failed(x) || failed(lo) || failed(hi))
    return failure();
  return clip(c, *x, *lo, *hi);
}

/// x * relu6(x + 3) / 6 (hardswish) or relu6(x + 3) / 6 (hardsigmoid).
Results hardSigmoidLike(AtenContext &c, bool timesInput) {
  FailureOr<Value> x = c.tensor("self");
  if (failed(x))
    return failure();
  Type element = c.type(*x).getElementType();
  FailureOr<Value> t = c.make<AddOp>({*x, c.scalar(element, 3.0)});
  Results r = failed(t) ? Results(failure()) : clip(c, *t, 0.0, 6.0);
  if (failed(r))
    return failure();
  FailureOr<Value> y = c.make<MulOp>({(*r)[0], c.scalar(element, 1.0 / 6)});
  if (succeeded(y) && timesInput)
    y = c.make<MulOp>({*x, *y});
  return one(y);
}

Results silu(AtenContext &c) {
  FailureOr<Value> x = c.tensor("self");
  FailureOr<Value> s = failed(x) ? x : c.make<SigmoidOp>({*x});
  return failed(s) ? Results(failure()) : one(c.make<MulOp>({*x, *s}));
}

Results rsqrt(AtenContext &c) {
  FailureOr<Value> x = c.tensor("self");
  FailureOr<Value> s = failed(x) ? x : c.make<SqrtOp>({*x});
  return failed(s) ? Results(failure()) : one(c.make<ReciprocalOp>({*s}));
}

Results where(AtenContext &c) {
  FailureOr<Value> cond = c.tensor("condition"), a = c.tensor("self"),
                   b = c.tensor("other");
  if (failed(cond) || failed(a) || failed(b))
    return failure();
  return one(c.make<WhereOp>({*cond, *a, *b}));
}

FailureOr<SmallVector<int64_t>> dims(AtenContext &c, Value x, StringRef name) {
  FailureOr<SmallVector<int64_t>> given = c.ints(name);
  if (failed(given))
    return failure();
  int64_t rank = c.type(x).getRank();
  SmallVector<int64_t> result;
  if (given->empty()) // an empty dim list reduces every dim
    for (int64_t d = 0; d < rank; ++d)
      result.push_back(d);
  for (int64_t d : *given) {
    FailureOr<int64_t> n = c.dim(d, rank);
    if (failed(n))
      return failure();
    result.push_back(*n);
  }
  return result;
}

/// Reduction dims: normalized, sorted, each once.
FailureOr<SmallVector<int64_t>> axesOf(AtenContext &c, Value x,
                                       StringRef name) {
  FailureOr<SmallVector<int64_t>> axes = dims(c, x, name);
  if (succeeded(axes)) {
    llvm::sort(*axes);
    axes->erase(std::unique(axes->begin(), axes->end()), axes->end());
  }
  return axes;
}

/// A reduction's input and its `dim`/`keepdim` as kiln attributes.
struct Reduction {
  Value input;
  SmallVector<NamedAttribute> attrs;
};
FailureOr<Reduction> reduction(AtenContext &c) {
  FailureOr<Value> x = c.tensor("self");
  FailureOr<SmallVector<int64_t>> axes =
      failed(x) ? FailureOr<SmallVector<int64_t>>(failure())
                : axesOf(c, *x, "dim");
  FailureOr<bool> keep = c.boolean("keepdim");
  if (failed(axes) || failed(keep))
    return failure();
  return Reduction{*x,
                   {c.named("axes", c.i64s(*axes)),
                    c.named("keepdims", c.b.getBoolAttr(*keep))}};
}

Results mean(AtenContext &c) {
  FailureOr<Reduction> r = reduction(c);
  if (failed(r))
    return failure();
  if (!c.isNone("dtype"))
    return c.fail("mean with a dtype is not supported"), failure();
  return one(c.make<ReduceMeanOp>({r->input}, r->attrs));
}

/// sum over `dim` (every dim when it is None or empty). Bool and integer
/// inputs sum in int64, as torch does, unless `dtype` says otherwise.
Results sum(AtenContext &c) {
  FailureOr<Value> x = c.tensor("self");
  FailureOr<bool> keep = c.boolean("keepdim");
  if (failed(x) || failed(keep))
    return failure();
  SmallVector<int64_t> axes;
  const llvm::json::Object *dim = c.arg("dim");
  const llvm::json::Array *list = dim ? dim->getArray("as_ints") : nullptr;
  if (!c.isNone("dim") && !(list && list->empty())) {
    FailureOr<SmallVector<int64_t>> given = axesOf(c, *x, "dim");
    if (failed(given))
      return failure();
    axes = *given;
  } else {
    axes = llvm::to_vector(llvm::seq<int64_t>(0, c.type(*x).getRank()));
  }
  Type element = c.type(*x).getElementType();
  FailureOr<Type> type = c.scalarType(
      "dtype", isa<IntegerType>(element) ? c.b.getI64Type() : element);
  if (failed(type))
    return failure();
  Value input = *x;
  if (*type != element) {
    FailureOr<Value> cast =
        c.make<CastOp>({input}, {c.named("to", TypeAttr::get(*type))});
    if (failed(cast))
      return failure();
    input = *cast;
  }
  return one(c.make<ReduceSumOp>(
      {input}, {c.named("axes", c.i64s(axes)),
                c.named("keepdims", c.b.getBoolAttr(*keep))}));
}

/// any over a dim: the max of the values as 0/1.
Results anyDim(AtenContext &c) {
  FailureOr<Reduction> r = reduction(c);
  if (failed(r))
    return failure();
  Type f32 = c.b.getF32Type(), i1 = c.b.getI1Type();
  FailureOr<Value> v =
      c.make<CastOp>({r->input}, {c.named("to", TypeAttr::get(f32))});
  if (succeeded(v))
    v = c.make<ReduceMaxOp>({*v}, r->attrs);
  if (succeeded(v))
    v = c.make<CastOp>({*v}, {c.named("to", TypeAttr::get(i1))});
  return one(v);
}

/// view/reshape to `size`, one entry of which may be -1.
/// A view whose sizes the program computes ([b * t, d]): the shape as a
/// run-time i64 vector (sizes kept in place read from the input), the
/// static extents the archive records for the result kept in its type.
FailureOr<Value> computedView(AtenContext &c, Value x, ArrayRef<int64_t> shape,
                              ArrayRef<Value> runTime) {
  Type i64 = c.b.getI64Type();
  SmallVector<Value> elements;
  for (auto [i, d] : llvm::enumerate(shape)) {
    if (runTime[i]) {
      elements.push_back(runTime[i]);
    } else if (ShapedType::isDynamic(d)) {
      elements.push_back(c.extent(x, i));
    } else {
      elements.push_back(arith::ConstantIntOp::create(c.b, c.loc, i64, d));
    }
  }
  Value shapeValue = tensor::FromElementsOp::create(
      c.b, c.loc, RankedTensorType::get({(int64_t)shape.size()}, i64),
      elements);
  return c.make<DynamicReshapeOp>(
      {x, shapeValue},
      {c.named("allow_zero", c.b.getBoolAttr(true)),
       c.named("static_shape", c.i64s(c.outputStaticShape(shape.size())))});
}

Results view(AtenContext &c, StringRef name) {
  FailureOr<Value> x = c.tensor("self");
  SmallVector<Value> runTime;
  FailureOr<SmallVector<int64_t>> size = c.viewSizes(name, "self", &runTime);
  if (failed(x) || failed(size))
    return failure();
  SmallVector<int64_t> shape = *size;
  runTime.resize(shape.size()); // empty when every size is a constant
  if (llvm::any_of(runTime, [](Value v) { return bool(v); }))
    return one(computedView(c, *x, shape, runTime));
  // Symbolic dims of the input stay where they are (viewSizes checked
  // that each is the input's own); the static ones are given. A -1 beside
  // them (x.view(x.size(0), -1)), or static sizes only, is resolved when
  // the model runs: a kiln.dynamic_reshape, whose lowering checks the
  // element count.
  if (!c.type(*x).hasStaticShape()) {
    bool kept = llvm::any_of(shape, ShapedType::isDynamic);
    if (!kept || llvm::is_contained(shape, -1))
      return one(computedView(c, *x, shape, runTime));
    return one(c.reshape(*x, shape));
  }
  int64_t total = c.type(*x).getNumElements(), known = 1, infer = -1;
  for (auto [i, d] : llvm::enumerate(shape)) {
    if (d == -1 && infer < 0)
      infer = i;
    else if (d < 0)
      return c.fail("size " + llvm::Twine(d) + " is not allowed"), failure();
    else
      known *= d;
  }
  if (infer >= 0)
    shape[infer] = known ? total / known : 0;
  return one(c.reshape(*x, shape));
}

Results flatten(AtenContext &c) {
  FailureOr<Value> x = c.tensor("self");
  FailureOr<int64_t> start = c.integer("start_dim"), end = c.integer("end_dim");
  if (failed(x) || failed(start) || failed(end))
    return failure();
  ArrayRef<int64_t> in = c.type(*x).getShape();
  int64_t rank = in.size();
  FailureOr<int64_t> s = c.dim(*start, rank), e = c.dim(*end, rank);
  if (failed(s) || failed(e))
    return failure();
  SmallVector<int64_t> shape(in.begin(), in.begin() + *s);
  int64_t merged = 1;
  for (int64_t d = *s; d <= *e && d < rank; ++d) {
    if (ShapedType::isDynamic(in[d]))
      return c.fail("flatten merges the symbolic dim " + llvm::Twine(d) +
                    "; compile with --input-shape to specialize it"),
             failure();
    merged *= in[d];
  }
  shape.push_back(rank ? merged : 1);
  if (rank)
    shape.append(in.begin() + *e + 1, in.end());
  return one(c.reshape(*x, shape));
}

Results permute(AtenContext &c) {
  FailureOr<Value> x = c.tensor("self");
  FailureOr<SmallVector<int64_t>> perm =
      failed(x) ? FailureOr<SmallVector<int64_t>>(failure())
                : dims(c, *x, "dims");
  if (failed(perm))
    return failure();
  return one(c.make<TransposeOp>({*x}, {c.named("perm", c.i64s(*perm))}));
}

Results transpose(AtenContext &c, bool t) {
  FailureOr<Value> x = c.tensor("self");
  if (failed(x))
    return failure();
  int64_t rank = c.type(*x).getRank();
  if (t && rank < 2)
    return SmallVector<Value>{*x};
  FailureOr<int64_t> a = t ? FailureOr<int64_t>(0) : c.integer("dim0");
  FailureOr<int64_t> b = t ? FailureOr<int64_t>(1) : c.integer("dim1");
  if (failed(a) || failed(b) || failed(a = c.dim(*a, rank)) ||
      failed(b = c.dim(*b, rank)))
    return failure();
  SmallVector<int64_t> perm;
  for (int64_t d = 0; d < rank; ++d)
    perm.push_back(d);
  std::swap(perm[*a], perm[*b]);
  return one(c.make<TransposeOp>({*x}, {c.named("perm", c.i64s(perm))}));
}

Results unsqueeze(AtenContext &c) {
  FailureOr<Value> x = c.tensor("self");
  FailureOr<int64_t> d = c.integer("dim");
  if (failed(x) || failed(d))
    return failure();
  SmallVector<int64_t> shape(c.type(*x).getShape());
  FailureOr<int64_t> at = c.dim(*d, shape.size() + 1);
  if (failed(at))
    return failure();
  shape.insert(shape.begin() + *at, 1);
  return one(c.reshape(*x, shape));
}

Results squeeze(AtenContext &c) {
  FailureOr<Value> x = c.tensor("self");
  FailureOr<int64_t> d = c.integer("dim");
  if (failed(x) || failed(d))
    return failure();
  SmallVector<int64_t> shape(c.type(*x).getShape());
  FailureOr<int64_t> at = c.dim(*d, shape.size());
  if (failed(at))
    return failure();
  if (shape.empty() || shape[*at] != 1)
    return SmallVector<Value>{*x};
  shape.erase(shape.begin() + *at);
  return one(c.reshape(*x, shape));
}

/// An expand to sizes the program computes (a weight broadcast over a
/// symbolic batch): kiln.dynamic_expand of the run-time shape, -1 entries
/// reading the input's extent; the static extents the archive records
/// for the result kept in its type.
FailureOr<Value> computedExpand(AtenContext &c, Value x) {
  const llvm::json::Array *list =
      c.arg("size") ? c.arg("size")->getArray("as_sym_ints") : nullptr;
  RankedTensorType in = c.type(x);
  int64_t rank = list ? list->size() : 0, lead = rank - in.getRank();
  if (!list || lead < 0)
    return c.fail("expand to fewer dims than the input has"), failure();
  Type i64 = c.b.getI64Type();
  SmallVector<Value> elements;
  for (auto [i, v] : llvm::enumerate(*list)) {
    const llvm::json::Object *entry = v.getAsObject();
    std::optional<int64_t> constant =
        entry ? entry->getInteger("as_int") : std::nullopt;
    std::optional<StringRef> symbol =
        entry ? entry->getString("as_name") : std::nullopt;
    Value value;
    if (constant && *constant == -1 && (int64_t)i >= lead) {
      value = c.extent(x, i - lead);
    } else if (constant) {
      value = arith::ConstantIntOp::create(c.b, c.loc, i64, *constant);
    } else if (symbol && c.symScalars) {
      value = c.symScalars->lookup(*symbol);
      if (value && value.getType().isInteger(1))
        value = arith::ExtUIOp::create(c.b, c.loc, i64, value);
      if (value && !value.getType().isInteger(64))
        return c.fail("argument 'size' entry " + llvm::Twine(i) +
                      " is a float, not a size"),
               failure();
    }
    if (!value)
      return c.fail("argument 'size' entry " + llvm::Twine(i) +
                    " is not a size computed before this node"),
             failure();
    elements.push_back(value);
  }
  Value shape = tensor::FromElementsOp::create(
      c.b, c.loc, RankedTensorType::get({rank}, i64), elements);
  return c.make<DynamicExpandOp>(
      {x, shape}, {c.named("static_shape", c.i64s(c.outputStaticShape(rank)))});
}

Results expand(AtenContext &c) {
  FailureOr<Value> x = c.tensor("self");
  if (failed(x))
    return failure();
  const llvm::json::Object *arg = c.arg("size");
  const llvm::json::Array *list = arg ? arg->getArray("as_sym_ints") : nullptr;
  bool symbolic = list && llvm::any_of(*list, [](const llvm::json::Value &v) {
                    return v.getAsObject() && v.getAsObject()->get("as_name");
                  });
  ArrayRef<int64_t> in = c.type(*x).getShape();
  if (symbolic || !c.type(*x).hasStaticShape()) {
    // Each symbolic dim expanded to itself (core ATen's attention expands
    // q, k and v to their own shapes) is no op; anything else is
    // broadcast at run time.
    FailureOr<SmallVector<int64_t>> same = c.viewSizes("size", "self");
    bool identity = succeeded(same) && same->size() == in.size();
    for (size_t i = 0; identity && i < in.size(); ++i)
      identity = (*same)[i] == -1 || (*same)[i] == in[i];
    c.error.clear();
    if (identity)
      return SmallVector<Value>{*x};
    return one(computedExpand(c, *x));
  }
  FailureOr<SmallVector<int64_t>> size = c.ints("size");
  if (failed(size))
    return failure();
  SmallVector<int64_t> shape = *size;
  int64_t lead = shape.size() - in.size();
  if (lead < 0)
    return c.fail("expand to fewer dims than the input has"), failure();
  for (size_t i = 0; i < shape.size(); ++i)
    if (shape[i] == -1)
      shape[i] = (int64_t)i >= lead ? in[i - lead] : 1;
  return one(c.make<ExpandOp>({*x}, {c.named("shape", c.i64s(shape))}));
}

Results cat(AtenContext &c) {
  FailureOr<SmallVector<Value>> xs = c.tensors("tensors");
  FailureOr<int64_t> d = c.integer("dim");
  if (failed(xs) || failed(d))
    return failure();
  if (xs->empty())
    return c.fail("cat of no tensors"), failure();
  FailureOr<int64_t> axis = c.dim(*d, c.type(xs->front()).getRank());
  if (failed(axis))
    return failure();
  return one(
      c.make<ConcatOp>(*xs, {c.named("axis", c.b.getI64IntegerAttr(*axis))}));
}

/// split.Tensor (one size, the last piece smaller) and split_with_sizes.
Results split(AtenContext &c, bool sizes) {
  FailureOr<Value> x = c.tensor("self");
  FailureOr<SmallVector<int64_t>> given =
      c.ints(sizes ? "split_sizes" : "split_size");
  FailureOr<int64_t> d = c.integer("dim");
  if (failed(x) || failed(given) || failed(d))
    return failure();
  FailureOr<int64_t> axis = c.dim(*d, c.type(*x).getRank());
  if (failed(axis))
    return failure();
  int64_t extent = c.type(*x).getDimSize(*axis);
  if (ShapedType::isDynamic(extent))
    return c.fail("split along the symbolic dim " + llvm::Twine(*axis) +
                  "; compile with --input-shape to specialize it"),
           failure();
  SmallVector<int64_t> pieces = *given;
  if (!sizes) {
    int64_t size = pieces.empty() ? 0 : pieces[0];
    if (size <= 0)
      return c.fail("split_size must be positive"), failure();
    pieces.clear();
    for (int64_t at = 0; at < extent || (extent == 0 && pieces.empty());
         at += size)
      pieces.push_back(std::min(size, extent - at));
  }
  SmallVector<Value> results;
  int64_t at = 0;
  for (int64_t size : pieces) {
    FailureOr<Value> s = c.slice(*x, *axis, at, at + size, 1);
    if (failed(s))
      return failure();
    results.push_back(*s);
    at += size;
  }
  if (at != extent)
    return c.fail("split sizes add up to " + llvm::Twine(at) + ", dim " +
                  llvm::Twine(*axis) + " is " + llvm::Twine(extent)),
           failure();
  return results;
}

Results sliceTensor(AtenContext &c) {
  FailureOr<Value> x = c.tensor("self");
  FailureOr<int64_t> d = c.integer("dim"), step = c.integer("step");
  if (failed(x) || failed(d) || failed(step))
    return failure();
  FailureOr<int64_t> axis = c.dim(*d, c.type(*x).getRank());
  if (failed(axis))
    return failure();
  if (*step <= 0)
    return c.fail("slice step must be positive"), failure();
  int64_t extent = c.type(*x).getDimSize(*axis);
  FailureOr<int64_t> start = c.sliceBound("start", 0, extent),
                     end = c.sliceBound("end", extent, extent);
  if (failed(start) || failed(end))
    return failure();
  return one(c.slice(*x, *axis, *start, std::max(*start, *end), *step));
}

Results fullLike(AtenContext &c) {
  FailureOr<Value> x = c.tensor("self");
  FailureOr<double> v = c.number("fill_value");
  if (failed(x) || failed(v))
    return failure();
  if (!c.isNone("dtype"))
    return c.fail("full_like with a dtype is not supported"), failure();
  RankedTensorType type = c.type(*x);
  if (type.hasStaticShape())
    return SmallVector<Value>{
        c.filled(type.getShape(), type.getElementType(), *v)};
  // Symbolic sizes: where(true, value, x) has x's shape and only the value.
  return one(c.make<WhereOp>({c.filled({}, c.b.getI1Type(), 1),
                              c.filled({}, type.getElementType(), *v), *x}));
}

/// The dtype torch gives a number with no dtype: bool, int64 or float32.
Type defaultType(AtenContext &c, StringRef name) {
  const llvm::json::Object *a = c.arg(name);
  if (a && a->get("as_bool"))
    return c.b.getI1Type();
  if (a && a->get("as_int"))
    return c.b.getI64Type();
  return c.b.getF32Type();
}

Results full(AtenContext &c) {
  FailureOr<SmallVector<int64_t>> size = c.ints("size");
  FailureOr<double> v = c.number("fill_value");
  FailureOr<Type> type = c.scalarType("dtype", defaultType(c, "fill_value"));
  if (failed(size) || failed(v) || failed(type))
    return failure();
  return SmallVector<Value>{c.filled(*size, *type, *v)};
}

Results scalarTensor(AtenContext &c) {
  FailureOr<double> v = c.number("s");
  FailureOr<Type> type = c.scalarType("dtype", c.b.getF32Type());
  if (failed(v) || failed(type))
    return failure();
  return SmallVector<Value>{c.filled({}, *type, *v)};
}

/// arange(start, end, step) as a constant: int64 when every bound is an
/// integer, else float32 (torch's rule), or the given dtype.
Results arange(AtenContext &c, bool hasStart, bool hasStep) {
  FailureOr<double> start = hasStart ? c.number("start") : 0.0;
  FailureOr<double> end = c.number("end");
  FailureOr<double> step = hasStep ? c.number("step") : 1.0;
  if (failed(start) || failed(end) || failed(step))
    return failure();
  bool integral = defaultType(c, "end").isInteger(64) &&
                  (!hasStart || defaultType(c, "start").isInteger(64)) &&
                  (!hasStep || defaultType(c, "step").isInteger(64));
  FailureOr<Type> type = c.scalarType(
      "dtype", integral ? Type(c.b.getI64Type()) : Type(c.b.getF32Type()));
  if (failed(type))
    return failure();
  if (*step == 0)
    return c.fail("arange step is 0"), failure();
  int64_t n = std::max<int64_t>(0, std::ceil((*end - *start) / *step));
  if (n > (1 << 24))
    return c.fail("arange of " + llvm::Twine(n) +
                  " elements is too long for a constant"),
           failure();
  auto tensorType = RankedTensorType::get({n}, *type);
  SmallVector<Attribute> values;
  for (int64_t i = 0; i < n; ++i) {
    double v = *start + i * *step;
    values.push_back(isa<FloatType>(*type)
                         ? Attribute(FloatAttr::get(*type, v))
                         : Attribute(IntegerAttr::get(*type, (int64_t)v)));
  }
  return SmallVector<Value>{c.constant(
      cast<ElementsAttr>(DenseElementsAttr::get(tensorType, values)))};
}

/// a != b as not(a == b).
Results notEqual(AtenContext &c) {
  Results eq = binary<EqualOp>(c);
  if (failed(eq))
    return failure();
  return one(c.make<NotOp>({(*eq)[0]}));
}

Results dropout(AtenContext &c) {
  FailureOr<bool> train = c.boolean("train");
  if (failed(train))
    return failure();
  if (*train)
    return c.fail("dropout in training mode; export the model after "
                  "model.eval()"),
           failure();
  return identity(c, c.op == "aten.dropout_.default" ? "self" : "input");
}
} // namespace

void mlir::kiln::pt2::registerAtenTensorHandlers(
    llvm::StringMap<AtenHandler> &t) {
  for (const char *op : {"aten.relu.default", "aten.relu_.default"})
    t[op] = unary<ReluOp>;
  t["aten.sigmoid.default"] = unary<SigmoidOp>;
  t["aten.tanh.default"] = unary<kiln::TanhOp>;
  t["aten.exp.default"] = unary<ExpOp>;
  t["aten.sqrt.default"] = unary<SqrtOp>;
  t["aten.neg.default"] = unary<NegOp>;
  t["aten.logical_not.default"] = unary<NotOp>;
  t["aten.rsqrt.default"] = rsqrt;
  t["aten.gelu.default"] = gelu;
  for (const char *op : {"aten.silu.default", "aten.silu_.default"})
    t[op] = silu;
  for (const char *op : {"aten.hardtanh.default", "aten.hardtanh_.default"})
    t[op] = hardtanh;
  for (const char *op : {"aten.hardswish.default", "aten.hardswish_.default"})
    t[op] = [](AtenContext &c) { return hardSigmoidLike(c, true); };
  t["aten.hardsigmoid.default"] = [](AtenContext &c) {
    return hardSigmoidLike(c, false);
  };
  for (const char *op :
       {"aten.add.Tensor", "aten.add_.Tensor", "aten.add.Scalar"})
    t[op] = addSub<AddOp>;
  t["aten.sub.Tensor"] = addSub<SubOp>;
  for (const char *op :
       {"aten.mul.Tensor", "aten.mul_.Tensor", "aten.mul.Scalar"})
    t[op] = binary<MulOp>;
  for (const char *op : {"aten.div.Tensor", "aten.div.Scalar"})
    t[op] = divide;
  for (const char *op : {"aten.eq.Scalar", "aten.eq.Tensor"})
    t[op] = binary<EqualOp>;
  t["aten.ne.Scalar"] = notEqual;
  for (const char *op : {"aten.lt.Scalar", "aten.lt.Tensor"})
    t[op] = binary<LessOp>;
  t["aten.le.Scalar"] = binary<LessEqualOp>;
  for (const char *op : {"aten.gt.Scalar", "aten.gt.Tensor"})
    t[op] = binary<GreaterOp>;
  t["aten.ge.Scalar"] = binary<GreaterEqualOp>;
  t["aten.logical_and.default"] = binary<AndOp>;
  t["aten.logical_or.default"] = binary<OrOp>;
  t["aten.full.default"] = full;
  t["aten.scalar_tensor.default"] = scalarTensor;
  t["aten.arange.default"] = [](AtenContext &c) {
    return arange(c, false, false);
  };
  t["aten.arange.start"] = [](AtenContext &c) {
    return arange(c, true, false);
  };
  t["aten.arange.start_step"] = [](AtenContext &c) {
    return arange(c, true, true);
  };
  t["aten.where.self"] = where;
  t["aten.mean.dim"] = mean;
  t["aten.sum.dim_IntList"] = sum;
  t["aten.any.dim"] = anyDim;
  t["aten.view.default"] = [](AtenContext &c) { return view(c, "size"); };
  t["aten._unsafe_view.default"] = [](AtenContext &c) {
    return view(c, "size");
  };
  t["aten.reshape.default"] = [](AtenContext &c) { return view(c, "shape"); };
  t["aten.flatten.using_ints"] = flatten;
  t["aten.permute.default"] = permute;
  t["aten.t.default"] = [](AtenContext &c) { return transpose(c, true); };
  t["aten.transpose.int"] = [](AtenContext &c) { return transpose(c, false); };
  t["aten.unsqueeze.default"] = unsqueeze;
  t["aten.squeeze.dim"] = squeeze;
  t["aten.expand.default"] = expand;
  for (const char *op : {"aten.clone.default", "aten.alias.default",
                         "aten.detach.default", "aten.contiguous.default"})
    t[op] = [](AtenContext &c) { return identity(c, "self"); };
  for (const char *op : {"aten.dropout.default", "aten.dropout_.default"})
    t[op] = dropout;
  t["aten.cat.default"] = cat;
  t["aten.split.Tensor"] = [](AtenContext &c) { return split(c, false); };
  t["aten.split_with_sizes.default"] = [](AtenContext &c) {
    return split(c, true);
  };
  t["aten.slice.Tensor"] = sliceTensor;
  t["aten.full_like.default"] = fullLike;
}
