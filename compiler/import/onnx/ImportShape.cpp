//===- ImportShape.cpp - Shape and data-movement ONNX ops -----------------===//
//
// Reshape/Flatten/Squeeze/Unsqueeze become kiln.reshape with a resolved
// shape; Slice/Split become normalized kiln.slice ops. Shape-valued inputs
// must be compile-time constants: Shape of a static tensor is a constant, and
// the folders reduce the usual Shape -> Gather -> Concat chains; anything
// else gets a "needs data-dependent shape" error.
//
//===----------------------------------------------------------------------===//

#include "compiler/import/onnx/ImportIndexing.h"
#include "compiler/import/onnx/ImportNNBuilder.h"
#include "compiler/import/onnx/NodeContext.h"
#include "compiler/import/onnx/SymbolicShapes.h"

#include "onnx/onnx.pb.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

using namespace mlir;
using namespace mlir::kiln::onnx_import;
namespace k = mlir::kiln;

namespace {
/// Reshape to `shape` (NNBuilder::reshape: with run-time dims, only
/// reshapes that insert or drop 1-dims, as Squeeze and Unsqueeze do).
FailureOr<Value> reshape(NodeContext &c, Value v, ArrayRef<int64_t> shape) {
  NNBuilder e(c);
  Value reshaped = e.reshape(v, shape);
  if (!reshaped)
    return failure();
  return reshaped;
}

Value i64Constant(NodeContext &c, ArrayRef<int64_t> values) {
  auto type = RankedTensorType::get({(int64_t)values.size()}, c.b.getI64Type());
  return c.constant(cast<ElementsAttr>(DenseElementsAttr::get(type, values)));
}

/// Integer list from attribute `name` (opset < `inputSince`) or input `i`.
/// nullopt with c.error set when the input exists but is not constant.
std::optional<SmallVector<int64_t>> intsFrom(NodeContext &c, StringRef name,
                                             size_t i, int64_t inputSince,
                                             bool &notConstant) {
  notConstant = false;
  if (c.opset < inputSince)
    return c.attrInts(name);
  if (!c.hasInput(i))
    return std::nullopt;
  auto v = c.constantInts(i);
  notConstant = !v.has_value();
  return v;
}

/// Whether input `i` can be a run-time shape operand of a kiln dynamic op:
/// 1-D i64 of static length.
bool isShapeOperand(NodeContext &c, size_t i) {
  auto type = c.type(c.input(i));
  return type.getRank() == 1 && !type.isDynamicDim(0) &&
         type.getElementType().isSignlessInteger(64);
}

Results importReshape(NodeContext &c) {
  auto input = c.type(c.input(0));
  bool notConstant;
  auto target = intsFrom(c, "shape", 1, 5, notConstant);
  bool allowZero = c.attrInt("allowzero", 0);
  // A shape computed from symbolic dims, or a constant one for an input
  // with run-time dims.
  if (auto symbolic = symbolicInts(c, 1);
      symbolic && (notConstant || !input.hasStaticShape()))
    return one(reshapeSymbolic(c, c.input(0), *symbolic, allowZero));
  if (notConstant) {
    // A run-time shape: the result has its rank and `?` dims; the lowering
    // resolves 0 and -1 and checks the values when the model runs.
    if (!isShapeOperand(c, 1))
      return c.needsConstant(1);
    return one(c.make<k::DynamicReshapeOp>(
        {c.input(0), c.input(1)},
        {c.named("allow_zero", c.b.getBoolAttr(allowZero))}));
  }
  if (!target)
    return c.fail("shape is required");
  SmallVector<int64_t> shape;
  int64_t known = 1, inferIndex = -1;
  for (auto [i, d] : llvm::enumerate(*target)) {
    if (d == 0 && !allowZero) {
      if ((int64_t)i >= input.getRank())
        return c.fail("shape copies dim " + std::to_string(i) +
                      " that the input does not have");
      d = input.getDimSize(i);
    }
    if (d == -1) {
      if (inferIndex >= 0)
        return c.fail("shape has more than one -1");
      inferIndex = i;
    } else if (d < 0) {
      return c.fail("shape has a negative dim");
    } else {
      known *= d;
    }
    shape.push_back(d);
  }
  if (inferIndex >= 0) {
    if (known == 0 || input.getNumElements() % known)
      return c.fail("cannot infer the -1 dim of the shape");
    shape[inferIndex] = input.getNumElements() / known;
  }
  return one(reshape(c, c.input(0), shape));
}

Results importFlatten(NodeContext &c) {
  auto input = c.type(c.input(0));
  int64_t rank = input.getRank();
  int64_t axis = c.attrInt("axis", 1);
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis > rank)
    return c.fail("axis out of range");
  if (!input.hasStaticShape()) {
    SymInt outer = c.b.getI64IntegerAttr(1), inner = outer;
    for (int64_t d = 0; d < rank; ++d)
      (d < axis ? outer : inner) =
          mulSym(c, d < axis ? outer : inner, dimOf(c, c.input(0), d));
    return one(reshapeSymbolic(c, c.input(0), {outer, inner}, true));
  }
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < rank; ++d)
    (d < axis ? outer : inner) *= input.getDimSize(d);
  return one(reshape(c, c.input(0), {outer, inner}));
}

Results importTranspose(NodeContext &c) {
  int64_t rank = c.type(c.input(0)).getRank();
  SmallVector<int64_t> perm;
  for (int64_t d = rank - 1; d >= 0; --d)
    perm.push_back(d);
  if (auto p = c.attrInts("perm"))
    perm = *p;
  return one(
      c.make<k::TransposeOp>(c.input(0), {c.named("perm", c.i64s(perm))}));
}

Results importSqueeze(NodeContext &c) {
  auto input = c.type(c.input(0));
  bool notConstant;
  auto axes = intsFrom(c, "axes", 1, 13, notConstant);
  if (notConstant) {
    if (!isShapeOperand(c, 1))
      return c.needsConstant(1);
    return one(c.make<k::DynamicSqueezeOp>({c.input(0), c.input(1)}));
  }
  SmallVector<bool> drop(input.getRank(), false);
  if (axes) {
    for (int64_t a : *axes) {
      auto axis = c.normalizeAxis(a, input.getRank());
      if (!axis || input.getDimSize(*axis) != 1)
        return c.fail(fmt::format("cannot squeeze axis {}", a));
      drop[*axis] = true;
    }
  } else {
    for (int64_t d = 0; d < input.getRank(); ++d)
      drop[d] = input.getDimSize(d) == 1;
  }
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < input.getRank(); ++d)
    if (!drop[d])
      shape.push_back(input.getDimSize(d));
  return one(reshape(c, c.input(0), shape));
}

Results importUnsqueeze(NodeContext &c) {
  auto input = c.type(c.input(0));
  bool notConstant;
  auto axes = intsFrom(c, "axes", 1, 13, notConstant);
  if (notConstant) {
    if (!isShapeOperand(c, 1))
      return c.needsConstant(1);
    return one(c.make<k::DynamicUnsqueezeOp>({c.input(0), c.input(1)}));
  }
  if (!axes)
    return c.fail("axes are required");
  int64_t rank = input.getRank() + axes->size();
  SmallVector<bool> inserted(rank, false);
  for (int64_t a : *axes) {
    auto axis = c.normalizeAxis(a, rank);
    if (!axis || inserted[*axis])
      return c.fail(fmt::format("bad unsqueeze axis {}", a));
    inserted[*axis] = true;
  }
  SmallVector<int64_t> shape;
  int64_t next = 0;
  for (int64_t d = 0; d < rank; ++d)
    shape.push_back(inserted[d] ? 1 : input.getDimSize(next++));
  return one(reshape(c, c.input(0), shape));
}

Results importConcat(NodeContext &c) {
  SmallVector<Value> inputs;
  for (size_t i = 0; i < c.numInputs(); ++i)
    if (c.hasInput(i) && (!c.type(c.input(i)).hasStaticShape() ||
                          c.type(c.input(i)).getNumElements() > 0))
      inputs.push_back(c.input(i));
  if (inputs.empty())
    inputs.push_back(c.input(0));
  auto axis =
      c.normalizeAxis(c.attrInt("axis", 0), c.type(inputs[0]).getRank());
  if (!axis)
    return c.fail("axis out of range");
  return one(c.make<k::ConcatOp>(
      inputs, {c.named("axis", c.b.getI64IntegerAttr(*axis))}));
}

/// Builds a kiln.slice from per-axis ONNX bounds, clamped as ONNX specifies.
FailureOr<Value> slice(NodeContext &c, Value v, ArrayRef<int64_t> starts,
                       ArrayRef<int64_t> ends, ArrayRef<int64_t> axes,
                       ArrayRef<int64_t> steps) {
  auto type = c.type(v);
  int64_t rank = type.getRank();
  SmallVector<int64_t> s(rank, 0), e(type.getShape()), st(rank, 1);
  for (size_t i = 0; i < starts.size(); ++i) {
    auto axis = c.normalizeAxis(axes[i], rank);
    if (!axis || steps[i] == 0) {
      c.error = "slice axis out of range or step 0";
      return failure();
    }
    int64_t dim = type.getDimSize(*axis), step = steps[i];
    if (ShapedType::isDynamic(dim)) {
      // Only the whole of a run-time dim, as exports write it.
      if (starts[i] == 0 && step == 1 && ends[i] >= INT32_MAX)
        continue;
      c.error = fmt::format("slicing run-time dim {} with constant bounds is "
                            "not supported (give a static shape with "
                            "--input-shape)",
                            *axis);
      return failure();
    }
    int64_t start = starts[i] < 0 ? starts[i] + dim : starts[i];
    int64_t end =
        ends[i] < 0 && ends[i] > INT64_MIN / 2 ? ends[i] + dim : ends[i];
    if (step > 0) {
      start = std::clamp<int64_t>(start, 0, dim);
      end = std::clamp<int64_t>(end, start, dim);
    } else if (dim == 0) {
      start = end = 0;
    } else {
      start = std::clamp<int64_t>(start, 0, dim - 1);
      end = std::clamp<int64_t>(end, -1, start);
    }
    s[*axis] = start, e[*axis] = end, st[*axis] = step;
  }
  return c.make<k::SliceOp>(v, {c.named("starts", c.i64s(s)),
                                c.named("ends", c.i64s(e)),
                                c.named("steps", c.i64s(st))});
}

/// Slice with bounds computed from symbolic dims (`mask[:, :, :seq, :seq]`),
/// or with constant bounds on a run-time dim, with constant steps
/// (`x[:, ::2]`, `x[:, ::-1]`): kiln.dynamic_slice with one start and end
/// per dim. nullopt when it does not apply (static bounds on static dims,
/// run-time axes or steps).
std::optional<Results> symbolicSlice(NodeContext &c) {
  Value input = c.input(0);
  auto type = c.type(input);
  int64_t rank = type.getRank();
  auto starts = symbolicInts(c, 1), ends = symbolicInts(c, 2);
  if (!starts || !ends || starts->size() != ends->size())
    return std::nullopt;
  bool runTime = !type.hasStaticShape() || isSymbolicShape(c.input(1)) ||
                 isSymbolicShape(c.input(2));
  if (!runTime)
    return std::nullopt;
  SmallVector<int64_t> axes;
  if (c.hasInput(3)) {
    auto a = c.constantInts(3);
    if (!a)
      return std::nullopt;
    axes = *a;
  } else {
    for (size_t i = 0; i < starts->size(); ++i)
      axes.push_back(i);
  }
  SmallVector<int64_t> givenSteps(axes.size(), 1);
  if (c.hasInput(4)) {
    auto s = c.constantInts(4);
    if (!s || s->size() != axes.size() || llvm::is_contained(*s, 0))
      return std::nullopt;
    givenSteps = *s;
    // A step past the dim takes one element either way; -INT64_MIN would
    // overflow.
    for (int64_t &step : givenSteps)
      step = std::max<int64_t>(step, -INT64_MAX);
  }
  if (axes.size() != starts->size())
    return std::nullopt;
  // Every dim: 0..dim unless sliced.
  SymInts allStarts, allEnds;
  SmallVector<int64_t> known, steps(rank, 1);
  for (int64_t d = 0; d < rank; ++d) {
    allStarts.push_back(c.b.getI64IntegerAttr(0));
    allEnds.push_back(dimOf(c, input, d));
    known.push_back(type.isDynamicDim(d) ? -1 : type.getDimSize(d));
  }
  for (auto [i, a] : llvm::enumerate(axes)) {
    auto axis = c.normalizeAxis(a, rank);
    if (!axis)
      return Results(c.fail("slice axis out of range"));
    allStarts[*axis] = (*starts)[i];
    allEnds[*axis] = (*ends)[i];
    steps[*axis] = givenSteps[i];
    // A run-time end on a static dim (GPT-2's `bias[:, :, :s, :s]` of a
    // registered [1024, 1024] buffer): a size beyond the dim would be
    // clamped, and the result would no longer match the other operands of
    // its consumers. The run fails instead, as onnxruntime's does.
    int64_t extent = type.getDimSize(*axis);
    // (A negative step's end is clamped into the dim, as ONNX says.)
    if (!ShapedType::isDynamic(extent) && !constantOf((*ends)[i]) &&
        givenSteps[i] > 0) {
      Value end = materialize(c, {(*ends)[i]},
                              RankedTensorType::get({}, c.b.getI64Type()));
      auto ok = c.make<k::LessEqualOp>(
          {end, c.scalar(c.b.getI64Type(), double(extent))});
      if (failed(ok))
        return Results(failure());
      k::AssertOp::create(
          c.b, c.loc, *ok,
          c.b.getStringAttr(fmt::format(
              "Slice: the end computed for axis {} is beyond that dim's "
              "extent {} (the model supports sizes up to {})",
              *axis, extent, extent)));
    }
    // Static only when both bounds are constants within a static dim.
    auto s = constantOf((*starts)[i]), e = constantOf((*ends)[i]);
    int64_t dim = type.getDimSize(*axis);
    known[*axis] = -1;
    if (s && e && !ShapedType::isDynamic(dim)) {
      auto clamp = [&](int64_t v, int64_t lo, int64_t hi) {
        v = v < 0 && v > INT64_MIN / 2 ? v + dim : v;
        return std::clamp<int64_t>(v, lo, hi);
      };
      int64_t step = steps[*axis];
      known[*axis] =
          step > 0
              ? llvm::divideCeil(
                    std::max<int64_t>(clamp(*e, 0, dim) - clamp(*s, 0, dim), 0),
                    step)
          : dim == 0
              ? 0
              : llvm::divideCeil(std::max<int64_t>(clamp(*s, 0, dim - 1) -
                                                       clamp(*e, -1, dim - 1),
                                                   0),
                                 -step);
    }
  }
  auto boundsType = RankedTensorType::get({rank}, c.b.getI64Type());
  SmallVector<NamedAttribute> attrs = {c.named("static_shape", c.i64s(known))};
  if (llvm::any_of(steps, [](int64_t s) { return s != 1; }))
    attrs.push_back(c.named("steps", c.i64s(steps)));
  return one(
      c.make<k::DynamicSliceOp>({input, materialize(c, allStarts, boundsType),
                                 materialize(c, allEnds, boundsType)},
                                attrs));
}

Results importSlice(NodeContext &c) {
  int64_t rank = c.type(c.input(0)).getRank();
  SmallVector<int64_t> starts, ends, axes, steps;
  if (c.opset < 10) {
    starts = c.attrInts("starts").value_or(SmallVector<int64_t>());
    ends = c.attrInts("ends").value_or(SmallVector<int64_t>());
    if (auto a = c.attrInts("axes"))
      axes = *a;
  } else {
    if (auto sliced = symbolicSlice(c))
      return *sliced;
    for (size_t i = 1; i < 5; ++i)
      if (c.hasInput(i) && !c.constantInts(i)) {
        // Run-time bounds: gathered into the declared result shape.
        auto results = importRunTimeSlice(c);
        if (succeeded(results) || !c.error.empty())
          return results;
        return c.needsConstant(i);
      }
    starts = c.constantInts(1).value_or(SmallVector<int64_t>());
    ends = c.constantInts(2).value_or(SmallVector<int64_t>());
    if (auto a = c.constantInts(3))
      axes = *a;
    if (auto s = c.constantInts(4))
      steps = *s;
  }
  if (starts.size() != ends.size())
    return c.fail("starts and ends differ in length");
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i)
      axes.push_back(i);
  if (steps.empty())
    steps.assign(starts.size(), 1);
  if (axes.size() != starts.size() || steps.size() != starts.size() ||
      (int64_t)starts.size() > rank)
    return c.fail("starts, ends, axes and steps differ in length");
  return one(slice(c, c.input(0), starts, ends, axes, steps));
}

Results importSplit(NodeContext &c) {
  auto type = c.type(c.input(0));
  auto axis = c.normalizeAxis(c.attrInt("axis", 0), type.getRank());
  if (!axis)
    return c.fail("axis out of range");
  int64_t dim = type.getDimSize(*axis);
  int64_t parts = c.numOutputs();
  bool notConstant;
  auto sizes = intsFrom(c, "split", 1, 13, notConstant);
  if (notConstant) {
    // Run-time sizes: the ones the declared output shapes give, checked.
    sizes = c.shapeInput(1, [&]() -> std::optional<SmallVector<int64_t>> {
      SmallVector<int64_t> declared;
      for (int64_t o = 0; o < parts; ++o) {
        auto shape = c.declaredShape(o);
        if (!shape || (int64_t)shape->size() != type.getRank())
          return std::nullopt;
        declared.push_back((*shape)[*axis]);
      }
      return declared;
    });
    if (!sizes)
      return c.needsConstant(1);
  }
  if (!sizes) {
    // Equal parts; since opset 18 the last one may be smaller.
    int64_t chunk = (dim + parts - 1) / parts;
    sizes.emplace();
    for (int64_t i = 0, left = dim; i < parts; ++i, left -= chunk)
      sizes->push_back(std::min(chunk, std::max<int64_t>(left, 0)));
  }
  if ((int64_t)sizes->size() != parts)
    return c.fail("split sizes do not match the number of outputs");
  SmallVector<Value> results;
  int64_t offset = 0;
  for (int64_t size : *sizes) {
    auto v = slice(c, c.input(0), {offset}, {offset + size}, {*axis}, {1});
    if (failed(v))
      return failure();
    results.push_back(*v);
    offset += size;
  }
  if (offset != dim)
    return c.fail("split sizes do not add up to the dim");
  return results;
}

Results importGather(NodeContext &c) {
  auto axis =
      c.normalizeAxis(c.attrInt("axis", 0), c.type(c.input(0)).getRank());
  if (!axis)
    return c.fail("axis out of range");
  return one(
      c.make<k::GatherOp>({c.input(0), c.input(1)},
                          {c.named("axis", c.b.getI64IntegerAttr(*axis))}));
}

/// Expand whose shape is a run-time value and whose result shape the model
/// declares: expanded to the declared shape, with a run-time check that the
/// shape input broadcasts the input to it (each value equal to the declared
/// dim, or 1 where the input already has that dim).
Results importRunTimeExpand(NodeContext &c) {
  auto declared = c.declaredShape(0);
  auto in = c.type(c.input(0)).getShape();
  auto shapeType = c.type(c.input(1));
  if (!declared || shapeType.getRank() != 1 || !shapeType.hasStaticShape() ||
      !shapeType.getElementType().isSignlessInteger(64))
    return c.needsConstant(1);
  int64_t rank = declared->size(), n = shapeType.getDimSize(0);
  auto full = k::broadcastShapes(in, *declared);
  if (n > rank || failed(full) || *full != *declared)
    return c.fail(fmt::format(
        "the declared result shape [{}] is not a broadcast of the input [{}] "
        "by a shape of {} values",
        fmt::join(*declared, ", "), fmt::join(in, ", "), n));
  // The input's dims aligned on the right with the result's.
  auto inDimAt = [&](int64_t d) {
    int64_t i = d - (rank - (int64_t)in.size());
    return i >= 0 ? in[i] : 1;
  };
  // Dims before the shape input's reach come from the input alone.
  for (int64_t d = 0; d < rank - n; ++d)
    if ((*declared)[d] != inDimAt(d))
      return c.fail(fmt::format("the declared result shape [{}] has more "
                                "dims than the input and the shape input",
                                fmt::join(*declared, ", ")));
  SmallVector<int64_t> inAligned, wanted;
  for (int64_t d = rank - n; d < rank; ++d) {
    inAligned.push_back(inDimAt(d));
    wanted.push_back((*declared)[d]);
  }
  Value shape = c.input(1);
  auto isOne = c.make<k::EqualOp>({shape, c.scalar(c.b.getI64Type(), 1)});
  if (failed(isOne))
    return failure();
  auto effective =
      c.make<k::WhereOp>({*isOne, i64Constant(c, inAligned), shape});
  if (failed(effective) ||
      failed(c.requireValues(
          *effective, wanted,
          fmt::format("Expand: input 1 '{}' does not expand [{}] to [{}], "
                      "the shape the model declares for '{}'",
                      c.node.input(1), fmt::join(in, ", "),
                      fmt::join(*declared, ", "), c.node.output(0)))))
    return failure();
  return one(
      c.make<k::ExpandOp>(c.input(0), {c.named("shape", c.i64s(*declared))}));
}

Results importExpand(NodeContext &c) {
  if (auto symbolic = symbolicInts(c, 1);
      symbolic &&
      (isSymbolicShape(c.input(1)) || !c.type(c.input(0)).hasStaticShape()))
    return one(expandSymbolic(c, c.input(0), *symbolic));
  auto shape = c.constantInts(1);
  if (!shape)
    return importRunTimeExpand(c);
  auto full = k::broadcastShapes(c.type(c.input(0)).getShape(), *shape);
  if (failed(full))
    return c.fail("shape does not broadcast with the input");
  return one(
      c.make<k::ExpandOp>(c.input(0), {c.named("shape", c.i64s(*full))}));
}

/// Tile = reshape to [1,d0,1,d1,...], expand to [r0,d0,r1,d1,...], reshape
/// to [r0*d0, r1*d1, ...]: no op of its own, and still one copy.
Results importTile(NodeContext &c) {
  auto shape = c.type(c.input(0)).getShape();
  // Run-time repeats: the declared result shape divided by the input's.
  auto repeats = c.shapeInput(1, [&]() -> std::optional<SmallVector<int64_t>> {
    auto declared = c.declaredShape(0);
    if (!declared || declared->size() != shape.size())
      return std::nullopt;
    SmallVector<int64_t> implied;
    for (size_t d = 0; d < shape.size(); ++d) {
      if (shape[d] == 0 || (*declared)[d] % shape[d] != 0)
        return std::nullopt;
      implied.push_back((*declared)[d] / shape[d]);
    }
    return implied;
  });
  if (!repeats)
    return c.needsConstant(1);
  if (repeats->size() != shape.size())
    return c.fail("repeats must have one entry per input dim");
  SmallVector<int64_t> interleaved, expanded, result;
  for (size_t d = 0; d < shape.size(); ++d) {
    if ((*repeats)[d] < 0)
      return c.fail("repeats must be non-negative");
    interleaved.append({1, shape[d]});
    expanded.append({(*repeats)[d], shape[d]});
    result.push_back((*repeats)[d] * shape[d]);
  }
  auto spread = reshape(c, c.input(0), interleaved);
  if (failed(spread))
    return failure();
  auto copies =
      c.make<k::ExpandOp>(*spread, {c.named("shape", c.i64s(expanded))});
  if (failed(copies))
    return failure();
  return one(reshape(c, *copies, result));
}

Results importShape(NodeContext &c) {
  auto shape = c.type(c.input(0)).getShape();
  int64_t rank = shape.size();
  int64_t start = c.attrInt("start", 0), end = c.attrInt("end", rank);
  start = std::clamp<int64_t>(start < 0 ? start + rank : start, 0, rank);
  end = std::clamp<int64_t>(end < 0 ? end + rank : end, start, rank);
  if (!c.type(c.input(0)).hasStaticShape()) {
    SymInts dims;
    for (int64_t d = start; d < end; ++d)
      dims.push_back(dimOf(c, c.input(0), d));
    return SmallVector<Value>{materialize(
        c, dims, RankedTensorType::get({end - start}, c.b.getI64Type()))};
  }
  return SmallVector<Value>{i64Constant(c, shape.slice(start, end - start))};
}

Results importSize(NodeContext &c) {
  if (!c.type(c.input(0)).hasStaticShape())
    return SmallVector<Value>{
        materialize(c, {numElementsOf(c, c.input(0))},
                    RankedTensorType::get({}, c.b.getI64Type()))};
  return SmallVector<Value>{
      c.scalar(c.b.getI64Type(), (double)c.type(c.input(0)).getNumElements())};
}

Results importConstantOfShape(NodeContext &c) {
  auto symbolic = symbolicInts(c, 0);
  bool runTime = symbolic && isSymbolicShape(c.input(0));
  auto shape = runTime ? std::optional<SmallVector<int64_t>>()
                       : c.shapeInput(0, [&] { return c.declaredShape(0); });
  if (!shape && !runTime)
    return c.needsConstant(0);
  Attribute value = FloatAttr::get(c.b.getF32Type(), 0.0);
  if (const auto *t = c.attrTensor("value")) {
    std::string error;
    auto attr = convertTensor(c.ctx(), *t, c.modelDir, error);
    auto dense = succeeded(attr) ? dyn_cast<DenseElementsAttr>(*attr) : nullptr;
    if (!dense || dense.getNumElements() != 1)
      return c.fail("value must be a one-element tensor");
    value = dense.getValues<Attribute>()[0];
  }
  if (runTime) {
    auto scalarType =
        RankedTensorType::get({}, cast<TypedAttr>(value).getType());
    Value scalar = c.constant(
        cast<ElementsAttr>(DenseElementsAttr::get(scalarType, value)));
    return one(expandSymbolic(c, scalar, *symbolic));
  }
  auto type = RankedTensorType::get(*shape, cast<TypedAttr>(value).getType());
  return SmallVector<Value>{
      c.constant(cast<ElementsAttr>(DenseElementsAttr::get(type, value)))};
}

/// Range with run-time bounds and a declared length n: start + i * delta
/// for i < n, with a run-time check that max(ceil((limit - start) / delta),
/// 0) is n (computed in f64, as the ONNX definition does).
Results importRunTimeRange(NodeContext &c) {
  auto declared = c.declaredShape(0);
  Type et = c.type(c.input(0)).getElementType();
  for (size_t i = 0; i < 3; ++i)
    if (!c.hasInput(i) || c.type(c.input(i)).getNumElements() != 1 ||
        c.type(c.input(i)).getElementType() != et)
      return c.fail("start, limit and delta must be scalars of one type");
  if (!declared || declared->size() != 1)
    return one(c.make<k::DynamicRangeOp>({c.input(0), c.input(1), c.input(2)}));
  int64_t n = (*declared)[0];
  Type f64 = c.b.getF64Type();
  SmallVector<Value> wide;
  for (size_t i = 0; i < 3; ++i) {
    auto v = c.make<k::CastOp>(c.input(i), {c.named("to", TypeAttr::get(f64))});
    if (failed(v))
      return failure();
    wide.push_back(*v);
  }
  auto span = c.make<k::SubOp>({wide[1], wide[0]});
  auto steps = succeeded(span) ? c.make<k::DivOp>({*span, wide[2]}) : span;
  auto up = succeeded(steps) ? c.make<k::CeilOp>(*steps) : steps;
  auto count = succeeded(up) ? c.make<k::MaxOp>({*up, c.scalar(f64, 0)}) : up;
  if (failed(count) ||
      failed(c.requireValues(
          *count, {n},
          fmt::format("Range: the inputs give a length other than {}, the "
                      "one the model declares for '{}'",
                      n, c.node.output(0)))))
    return failure();
  auto iotaType = RankedTensorType::get({n}, et);
  SmallVector<Attribute> iota;
  for (int64_t i = 0; i < n; ++i)
    iota.push_back(isa<FloatType>(et) ? Attribute(FloatAttr::get(et, i))
                                      : Attribute(IntegerAttr::get(et, i)));
  Value index =
      c.constant(cast<ElementsAttr>(DenseElementsAttr::get(iotaType, iota)));
  auto offsets = c.make<k::MulOp>({index, c.input(2)});
  if (failed(offsets))
    return failure();
  return one(c.make<k::AddOp>({c.input(0), *offsets}));
}

Results importRange(NodeContext &c) {
  auto start = c.constantFloats(0), limit = c.constantFloats(1),
       delta = c.constantFloats(2);
  for (size_t i = 0; i < 3; ++i)
    if (!c.constantFloats(i))
      return importRunTimeRange(c);
  if (start->size() != 1 || limit->size() != 1 || delta->size() != 1 ||
      (*delta)[0] == 0)
    return c.fail("start, limit and delta must be scalars, delta non-zero");
  double s = (*start)[0], l = (*limit)[0], d = (*delta)[0];
  int64_t n = std::max<int64_t>(0, (int64_t)std::ceil((l - s) / d));
  Type et = c.type(c.input(0)).getElementType();
  auto type = RankedTensorType::get({n}, et);
  SmallVector<Attribute> values;
  for (int64_t i = 0; i < n; ++i) {
    double v = s + i * d;
    values.push_back(isa<FloatType>(et)
                         ? Attribute(FloatAttr::get(et, v))
                         : Attribute(IntegerAttr::get(et, (int64_t)v)));
  }
  return SmallVector<Value>{
      c.constant(cast<ElementsAttr>(DenseElementsAttr::get(type, values)))};
}
} // namespace

void mlir::kiln::onnx_import::registerShapeHandlers(
    llvm::StringMap<OpHandler> &t) {
  t["Reshape"] = importReshape;
  t["Flatten"] = importFlatten;
  t["Transpose"] = importTranspose;
  t["Squeeze"] = importSqueeze;
  t["Unsqueeze"] = importUnsqueeze;
  t["Concat"] = importConcat;
  t["Slice"] = importSlice;
  t["Split"] = importSplit;
  t["Gather"] = importGather;
  t["Expand"] = importExpand;
  t["Tile"] = importTile;
  t["Shape"] = importShape;
  t["Size"] = importSize;
  t["ConstantOfShape"] = importConstantOfShape;
  t["Range"] = importRange;
}
