//===- ImportIndexing.cpp - Gather/Scatter/TopK and other indexing ops ----===//
//
// Indexing ops with run-time indices map to kiln ops one to one. Ops whose
// result shape comes from an input (TopK's k, OneHot's depth, Compress's
// condition) need that input to be a compile-time constant; ops whose result
// size depends on the data itself have a result of run-time extent (NonZero
// and Unique here, NonMaxSuppression in ImportNMS.cpp; see
// docs/dynamic-shapes.md).
// Layout ops (Pad, Resize, DepthToSpace, ...) are in ImportIndexingLayout.cpp.
//
//===----------------------------------------------------------------------===//

#include "compiler/import/onnx/ImportIndexing.h"
#include "compiler/import/onnx/ImportNNBuilder.h"
#include "compiler/import/onnx/SymbolicShapes.h"

#include "onnx/onnx.pb.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

using namespace mlir;
using namespace mlir::kiln::onnx_import;
namespace k = mlir::kiln;

FailureOr<Value> mlir::kiln::onnx_import::reshapeTo(NodeContext &c, Value v,
                                                    ArrayRef<int64_t> shape) {
  if (c.type(v).getShape() == shape)
    return v;
  return c.make<k::ReshapeOp>(v, {c.named("shape", c.i64s(shape))});
}

Value mlir::kiln::onnx_import::vectorInput(NodeContext &c, size_t i, Type to) {
  if (!c.hasInput(i))
    return Value();
  auto type = c.type(c.input(i));
  Type from = type.getElementType();
  if (type.getRank() != 1 || !type.hasStaticShape() ||
      isa<IntegerType>(from) != isa<IntegerType>(to) ||
      isa<FloatType>(from) != isa<FloatType>(to))
    return Value();
  return NNBuilder(c).cast(c.input(i), to);
}

Value mlir::kiln::onnx_import::i64Tensor(NodeContext &c,
                                         ArrayRef<int64_t> shape,
                                         ArrayRef<int64_t> values) {
  auto type = RankedTensorType::get(shape, c.b.getI64Type());
  return c.constant(cast<ElementsAttr>(DenseElementsAttr::get(type, values)));
}

namespace {
Attribute axisAttr(NodeContext &c, int64_t axis) {
  return c.b.getI64IntegerAttr(axis);
}

Results importGatherElements(NodeContext &c) {
  auto axis =
      c.normalizeAxis(c.attrInt("axis", 0), c.type(c.input(0)).getRank());
  if (!axis)
    return c.fail("axis out of range");
  return one(c.make<k::GatherElementsOp>(
      {c.input(0), c.input(1)}, {c.named("axis", axisAttr(c, *axis))}));
}

Results importGatherND(NodeContext &c) {
  return one(c.make<k::GatherNDOp>(
      {c.input(0), c.input(1)},
      {c.named("batch_dims", axisAttr(c, c.attrInt("batch_dims", 0)))}));
}

/// ScatterElements (opset 11+) and the deprecated Scatter (opset 9-10).
Results importScatterElements(NodeContext &c) {
  auto axis =
      c.normalizeAxis(c.attrInt("axis", 0), c.type(c.input(0)).getRank());
  if (!axis)
    return c.fail("axis out of range");
  std::string reduction = c.attrString("reduction", "none");
  return one(c.make<k::ScatterElementsOp>(
      {c.input(0), c.input(1), c.input(2)},
      {c.named("axis", axisAttr(c, *axis)),
       c.named("reduction", c.b.getStringAttr(reduction))}));
}

Results importScatterND(NodeContext &c) {
  std::string reduction = c.attrString("reduction", "none");
  return one(c.make<k::ScatterNDOp>(
      {c.input(0), c.input(1), c.input(2)},
      {c.named("reduction", c.b.getStringAttr(reduction))}));
}

/// k stays an operand: it moves the diagonal but not the result shape, so
/// it may be a graph input.
Results importTrilu(NodeContext &c) {
  Value kValue;
  if (c.hasInput(1)) {
    auto kType = c.type(c.input(1));
    if (kType.getNumElements() != 1 || !kType.getElementType().isInteger(64))
      return c.fail("k must be a single int64");
    auto reshaped = reshapeTo(c, c.input(1), {});
    if (failed(reshaped))
      return failure();
    kValue = *reshaped;
  } else {
    kValue = c.scalar(c.b.getI64Type(), 0);
  }
  return one(c.make<k::TriluOp>(
      {c.input(0), kValue},
      {c.named("upper", c.b.getBoolAttr(c.attrInt("upper", 1) != 0))}));
}

Results importReverseSequence(NodeContext &c) {
  return one(c.make<k::ReverseSequenceOp>(
      {c.input(0), c.input(1)},
      {c.named("batch_axis", axisAttr(c, c.attrInt("batch_axis", 1))),
       c.named("time_axis", axisAttr(c, c.attrInt("time_axis", 0)))}));
}

Results importTopK(NodeContext &c) {
  int64_t rank = c.type(c.input(0)).getRank();
  auto axis = c.normalizeAxis(c.attrInt("axis", -1), rank);
  if (!axis)
    return c.fail("axis out of range");
  int64_t kValue;
  if (c.opset < 10) {
    kValue = c.attrInt("k", -1);
  } else {
    // A run-time k: the declared result's extent along the axis, checked.
    auto ks = c.shapeInput(1, [&]() -> std::optional<SmallVector<int64_t>> {
      auto declared = c.declaredShape(0);
      if (!declared || (int64_t)declared->size() != rank ||
          c.type(c.input(1)).getNumElements() != 1)
        return std::nullopt;
      return SmallVector<int64_t>{(*declared)[*axis]};
    });
    if (!ks && c.type(c.input(1)).getNumElements() == 1 &&
        isa<IntegerType>(c.type(c.input(1)).getElementType())) {
      // A run-time k and no declared shape: results of run-time extent.
      NNBuilder e(c);
      Value k64 = e.scalarOf(c.input(1), c.b.getI64Type());
      if (e.failed)
        return failure();
      auto op = k::TopKOp::create(
          c.b, c.loc, c.input(0), k64, c.b.getI64IntegerAttr(*axis),
          c.b.getI64IntegerAttr(-1),
          c.b.getBoolAttr(c.attrInt("largest", 1) != 0));
      return SmallVector<Value>{op.getValues(), op.getIndices()};
    }
    if (!ks)
      return c.needsConstant(1);
    if (ks->size() != 1)
      return c.fail("K must have one element");
    kValue = (*ks)[0];
  }
  // Checked here: the generated builder aborts when inference fails, and
  // NodeContext::make builds single-result ops only.
  int64_t dim = c.type(c.input(0)).getDimSize(*axis);
  if (kValue < 0 || kValue > dim)
    return c.fail(
        fmt::format("k = {} out of range for a dim of {}", kValue, dim));
  auto op = k::TopKOp::create(c.b, c.loc, c.input(0), Value(),
                              c.b.getI64IntegerAttr(*axis),
                              c.b.getI64IntegerAttr(kValue),
                              c.b.getBoolAttr(c.attrInt("largest", 1) != 0));
  return SmallVector<Value>{op.getValues(), op.getIndices()};
}

/// OneHot = where(indices == iota(depth), on, off), from existing kiln ops:
/// indices (negative ones wrapped) get a unit dim at `axis`, the iota is laid
/// along `axis`, and the comparison broadcasts to the result shape.
Results importOneHot(NodeContext &c) {
  auto indicesType = c.type(c.input(0));
  int64_t outRank = indicesType.getRank() + 1;
  auto axis = c.normalizeAxis(c.attrInt("axis", -1), outRank);
  if (!axis)
    return c.fail("axis out of range");
  auto depths = c.constantFloats(1);
  auto declared = c.declaredShape(0);
  if (!depths && declared && (int64_t)declared->size() == outRank &&
      c.type(c.input(1)).getNumElements() == 1) {
    // A run-time depth: the declared result's extent along the axis.
    int64_t implied = (*declared)[*axis];
    if (failed(c.requireValues(
            c.input(1), {implied},
            fmt::format("OneHot: input 1 '{}' must be {}, as the model "
                        "declares '{}' as [{}]",
                        c.node.input(1), implied, c.node.output(0),
                        fmt::join(*declared, ", ")))))
      return failure();
    depths = SmallVector<double>{(double)implied};
  }
  if (!depths)
    return c.needsConstant(1);
  if (depths->size() != 1 || (*depths)[0] < 1)
    return c.fail("depth must be one positive number");
  int64_t depth = (int64_t)(*depths)[0];
  auto valuesType = c.type(c.input(2));
  if (valuesType.getNumElements() != 2)
    return c.fail("values must be [off_value, on_value]");

  Value indices = c.input(0);
  Type i64 = c.b.getI64Type();
  if (indicesType.getElementType() != i64) {
    auto cast = c.make<k::CastOp>(indices, {c.named("to", TypeAttr::get(i64))});
    if (failed(cast))
      return failure();
    indices = *cast;
  }
  Value zero = c.scalar(i64, 0), depthValue = c.scalar(i64, (double)depth);
  auto negative = c.make<k::LessOp>({indices, zero});
  auto wrapped = c.make<k::AddOp>({indices, depthValue});
  if (failed(negative) || failed(wrapped))
    return failure();
  auto fixed = c.make<k::WhereOp>({*negative, *wrapped, indices});
  if (failed(fixed))
    return failure();
  SmallVector<int64_t> withUnitDim(indicesType.getShape());
  withUnitDim.insert(withUnitDim.begin() + *axis, 1);
  auto spread = reshapeTo(c, *fixed, withUnitDim);
  if (failed(spread))
    return failure();

  SmallVector<int64_t> iotaShape(outRank, 1), iota;
  iotaShape[*axis] = depth;
  for (int64_t i = 0; i < depth; ++i)
    iota.push_back(i);
  auto hot = c.make<k::EqualOp>({*spread, i64Tensor(c, iotaShape, iota)});
  if (failed(hot))
    return failure();

  auto flatValues = reshapeTo(c, c.input(2), {2});
  if (failed(flatValues))
    return failure();
  SmallVector<Value> offOn;
  for (int64_t i = 0; i < 2; ++i) {
    auto element =
        c.make<k::SliceOp>(*flatValues, {c.named("starts", c.i64s({i})),
                                         c.named("ends", c.i64s({i + 1})),
                                         c.named("steps", c.i64s({1}))});
    if (failed(element))
      return failure();
    auto scalar = reshapeTo(c, *element, {});
    if (failed(scalar))
      return failure();
    offOn.push_back(*scalar);
  }
  return one(c.make<k::WhereOp>({*hot, offOn[1], offOn[0]}));
}

/// With a constant condition, Compress is a Gather of the selected
/// positions; otherwise its result size depends on run-time data.
/// Compress with a condition known only at run time: the positions of its
/// nonzero elements (those within the input's extent along the axis) are
/// gathered; the result's extent along the axis is their count.
Results importRunTimeCompress(NodeContext &c, Value input, int64_t axis) {
  Value condition = c.input(1);
  auto condType = c.type(condition);
  int64_t dim = c.type(input).getDimSize(axis);
  if (condType.getRank() != 1 || ShapedType::isDynamic(dim) ||
      condType.isDynamicDim(0))
    return c.fail("condition must be 1-D and the input's axis static");
  if (condType.getDimSize(0) > dim) {
    auto head = c.make<k::SliceOp>(condition, {c.named("starts", c.i64s({0})),
                                               c.named("ends", c.i64s({dim})),
                                               c.named("steps", c.i64s({1}))});
    if (failed(head))
      return failure();
    condition = *head;
  }
  auto positions = c.make<k::NonZeroIndicesOp>(condition);
  if (failed(positions))
    return failure();
  return one(c.make<k::GatherOp>({input, *positions},
                                 {c.named("axis", axisAttr(c, axis))}));
}

Results importCompress(NodeContext &c) {
  auto condition = c.constantInts(1);
  Value input = c.input(0);
  auto type = c.type(input);
  int64_t axis = 0;
  if (c.hasAttr("axis")) {
    auto a = c.normalizeAxis(c.attrInt("axis", 0), type.getRank());
    if (!a)
      return c.fail("axis out of range");
    axis = *a;
  } else {
    auto flat = reshapeTo(c, input, {type.getNumElements()});
    if (failed(flat))
      return failure();
    input = *flat;
  }
  if (!condition)
    return importRunTimeCompress(c, input, axis);
  int64_t dim = c.type(input).getDimSize(axis);
  SmallVector<int64_t> selected;
  for (int64_t i = 0; i < (int64_t)condition->size() && i < dim; ++i)
    if ((*condition)[i] != 0)
      selected.push_back(i);
  Value indices = i64Tensor(c, {(int64_t)selected.size()}, selected);
  return one(c.make<k::GatherOp>({input, indices},
                                 {c.named("axis", axisAttr(c, axis))}));
}

/// The result only depends on the input's shape: a constant.
Results importEyeLike(NodeContext &c) {
  auto type = c.type(c.input(0));
  if (type.getRank() != 2)
    return c.fail("input must be 2-D");
  Type elementType = type.getElementType();
  if (c.hasAttr("dtype")) {
    elementType = elementTypeFor(c.ctx(), c.attrInt("dtype", 1));
    if (!elementType)
      return c.unsupported("dtype " + onnxTypeName(c.attrInt("dtype", 1)));
  }
  int64_t rows = type.getDimSize(0), cols = type.getDimSize(1);
  int64_t diagonal = c.attrInt("k", 0);
  auto resultType = RankedTensorType::get({rows, cols}, elementType);
  auto scalarAttr = [&](double v) -> Attribute {
    if (isa<FloatType>(elementType))
      return FloatAttr::get(elementType, v);
    return IntegerAttr::get(
        elementType, APInt(elementType.getIntOrFloatBitWidth(), (uint64_t)v));
  };
  Attribute zero = scalarAttr(0), oneValue = scalarAttr(1);
  SmallVector<Attribute> values;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      values.push_back(j - i == diagonal ? oneValue : zero);
  return SmallVector<Value>{c.constant(
      cast<ElementsAttr>(DenseElementsAttr::get(resultType, values)))};
}

/// NonZero: the flat positions of the nonzero elements, turned into one row
/// of coordinates per dim ([rank, count], i64).
Results importNonZero(NodeContext &c) {
  Value input = c.input(0);
  auto type = c.type(input);
  if (!type.hasStaticShape() || type.getRank() == 0)
    return c.unsupported("NonZero of a scalar or of run-time extents");
  auto flat = reshapeTo(c, input, {type.getNumElements()});
  if (failed(flat))
    return failure();
  auto positions = c.make<k::NonZeroIndicesOp>(*flat);
  if (failed(positions))
    return failure();
  Type i64 = c.b.getI64Type();
  SmallVector<Value> rows;
  int64_t stride = type.getNumElements();
  for (int64_t d = 0; d < type.getRank(); ++d) {
    stride /= type.getDimSize(d);
    auto coordinate = c.make<k::DivOp>({*positions, c.scalar(i64, stride)});
    if (succeeded(coordinate))
      coordinate =
          c.make<k::ModOp>({*coordinate, c.scalar(i64, type.getDimSize(d))});
    if (failed(coordinate))
      return failure();
    // [count] -> [1, count]
    auto row = reshapeSymbolic(
        c, *coordinate, {c.b.getI64IntegerAttr(1), dimOf(c, *coordinate, 0)},
        /*allowZero=*/true);
    if (failed(row))
      return failure();
    rows.push_back(*row);
  }
  return one(c.make<k::ConcatOp>(rows, {c.named("axis", axisAttr(c, 0))}));
}

/// Unique: results whose extent is the distinct count, known after the run.
Results importUnique(NodeContext &c) {
  std::optional<int64_t> axis;
  if (c.hasAttr("axis")) {
    int64_t rank = c.type(c.input(0)).getRank();
    axis = c.normalizeAxis(c.attrInt("axis", 0), rank);
    if (!axis)
      return c.fail(fmt::format("axis {} out of range for rank {}",
                                c.attrInt("axis", 0), rank));
  }
  if (!c.type(c.input(0)).hasStaticShape())
    return c.unsupported("Unique of an input with run-time extents");
  auto op =
      k::UniqueOp::create(c.b, c.loc, c.input(0),
                          axis ? c.b.getI64IntegerAttr(*axis) : IntegerAttr(),
                          c.b.getBoolAttr(c.attrInt("sorted", 1) != 0));
  return SmallVector<Value>{op.getValues(), op.getIndices(),
                            op.getInverseIndices(), op.getCounts()};
}
} // namespace

void mlir::kiln::onnx_import::registerIndexingHandlers(
    llvm::StringMap<OpHandler> &t) {
  t["GatherElements"] = importGatherElements;
  t["GatherND"] = importGatherND;
  t["ScatterElements"] = importScatterElements;
  t["Scatter"] = importScatterElements;
  t["ScatterND"] = importScatterND;
  t["Trilu"] = importTrilu;
  t["ReverseSequence"] = importReverseSequence;
  t["TopK"] = importTopK;
  t["OneHot"] = importOneHot;
  t["Compress"] = importCompress;
  t["EyeLike"] = importEyeLike;
  t["NonZero"] = importNonZero;
  t["Unique"] = importUnique;
  registerIndexingLayoutHandlers(t);
  registerTfIdfHandlers(t);
}
