//===- ImportSequence.cpp - ONNX sequence ops resolved at import time -----===//
//
// A sequence that lives inside the graph (built by SequenceConstruct,
// SequenceEmpty or SplitToSequence, read by SequenceAt, SequenceLength or
// ConcatFromSequence) never reaches the kiln dialect: the importer keeps it
// as a list of tensor values (TensorList) and each sequence op edits that
// list, so
//
//   s = SequenceConstruct(X, Y, Z); s2 = SequenceErase(s, pos=1)
//   out = ConcatFromSequence(s2, axis=0)
//
// imports as one kiln.concat of X and Z. Positions must be compile-time
// constants (initializers, Constant nodes); a sequence at a graph input or
// output, or a position computed at run time, is reported as unsupported.
// SplitToSequence with run-time split sizes yields a list whose length is
// known (from the split tensor's length) but whose elements are not: only
// SequenceLength may read it.
//
//===----------------------------------------------------------------------===//
#include "compiler/import/onnx/ImportIndexing.h"

#include "onnx/onnx.pb.h"

#include <fmt/format.h>

using namespace mlir;
using namespace mlir::kiln::onnx_import;
namespace k = mlir::kiln;

namespace {
/// The sequence input `i`, or null after recording an error.
const TensorList *sequenceIn(NodeContext &c, size_t i) {
  const TensorList *list = c.sequenceInput(i);
  if (!list)
    c.error = fmt::format("input {} is not a sequence", i);
  return list;
}

/// The elements of a sequence input, when they are known at compile time.
const TensorList *knownSequenceIn(NodeContext &c, size_t i) {
  const TensorList *list = sequenceIn(c, i);
  if (list && !list->elementsKnown) {
    c.errorIsUnsupported = true;
    c.error = fmt::format("needs data-dependent shape (the elements of "
                          "sequence '{}' are split at sizes computed at run "
                          "time)",
                          c.node.input(i));
    return nullptr;
  }
  return list;
}

/// The position input `i` (a scalar), normalized against a sequence of
/// `length` where `end` is the largest valid position (length for insert,
/// length - 1 otherwise); `dflt` when the input is absent.
FailureOr<int64_t> position(NodeContext &c, size_t i, int64_t length,
                            int64_t end, int64_t dflt) {
  if (!c.hasInput(i))
    return dflt;
  auto values = c.constantInts(i);
  if (!values) {
    (void)c.unsupported(fmt::format(
        "position input {} '{}' is computed at run time; only constant "
        "positions are supported",
        i, c.node.input(i)));
    return failure();
  }
  if (values->size() != 1) {
    c.error = "the position must be a scalar";
    return failure();
  }
  int64_t pos = (*values)[0];
  if (pos < -length || pos > end) {
    c.error = fmt::format("position {} is out of range for a sequence of {} "
                          "tensors",
                          pos, length);
    return failure();
  }
  return pos < 0 ? pos + length : pos;
}

Results produce(NodeContext &c, TensorList list) {
  c.setSequenceOutput(0, std::move(list));
  return SmallVector<Value>{Value()};
}

Results importSequenceEmpty(NodeContext &c) {
  Type element = elementTypeFor(c.ctx(), c.attrInt("dtype", 1));
  if (!element)
    return c.unsupported("dtype is not a supported tensor element type");
  return produce(c, TensorList{{}, 0, true, element});
}

Results importSequenceConstruct(NodeContext &c) {
  TensorList list{{}, 0, true, Type()};
  for (size_t i = 0; i < c.numInputs(); ++i) {
    if (!c.hasInput(i))
      return c.fail(fmt::format("input {} is not a tensor", i));
    list.elements.push_back(c.input(i));
  }
  list.length = list.elements.size();
  if (!list.elements.empty())
    list.elementType = c.type(list.elements[0]).getElementType();
  for (Value v : list.elements)
    if (c.type(v).getElementType() != list.elementType)
      return c.fail("the tensors differ in element type");
  return produce(c, std::move(list));
}

Results importSequenceInsert(NodeContext &c) {
  const TensorList *in = knownSequenceIn(c, 0);
  if (!in)
    return failure();
  if (!c.hasInput(1))
    return c.fail("input 1 (the tensor to insert) is not a tensor");
  Value tensor = c.input(1);
  if (in->elementType && c.type(tensor).getElementType() != in->elementType)
    return c.fail("the tensor's element type differs from the sequence's");
  auto pos = position(c, 2, in->length, in->length, in->length);
  if (failed(pos))
    return failure();
  TensorList out = *in;
  out.elements.insert(out.elements.begin() + *pos, tensor);
  out.length = out.elements.size();
  out.elementType = c.type(tensor).getElementType();
  return produce(c, std::move(out));
}

Results importSequenceErase(NodeContext &c) {
  const TensorList *in = knownSequenceIn(c, 0);
  if (!in)
    return failure();
  if (in->length == 0)
    return c.fail("erasing from an empty sequence");
  auto pos = position(c, 1, in->length, in->length - 1, in->length - 1);
  if (failed(pos))
    return failure();
  TensorList out = *in;
  out.elements.erase(out.elements.begin() + *pos);
  out.length = out.elements.size();
  return produce(c, std::move(out));
}

Results importSequenceAt(NodeContext &c) {
  const TensorList *in = knownSequenceIn(c, 0);
  if (!in)
    return failure();
  if (!c.hasInput(1))
    return c.fail("the position input is required");
  auto pos = position(c, 1, in->length, in->length - 1, 0);
  if (failed(pos))
    return failure();
  return SmallVector<Value>{in->elements[*pos]};
}

Results importSequenceLength(NodeContext &c) {
  const TensorList *in = sequenceIn(c, 0);
  if (!in)
    return failure();
  return SmallVector<Value>{i64Tensor(c, {}, {in->length})};
}

Results importConcatFromSequence(NodeContext &c) {
  const TensorList *in = knownSequenceIn(c, 0);
  if (!in)
    return failure();
  if (in->elements.empty())
    return c.fail("the sequence is empty");
  bool newAxis = c.attrInt("new_axis", 0) != 0;
  int64_t rank = c.type(in->elements[0]).getRank();
  auto axis = c.normalizeAxis(c.attrInt("axis", 0), rank + (newAxis ? 1 : 0));
  if (!axis)
    return c.fail("axis out of range");
  SmallVector<Value> parts;
  for (Value v : in->elements) {
    if (newAxis) {
      SmallVector<int64_t> shape(c.type(v).getShape());
      if ((int64_t)shape.size() != rank)
        return c.fail("the tensors differ in rank");
      shape.insert(shape.begin() + *axis, 1);
      auto r = reshapeTo(c, v, shape);
      if (failed(r))
        return failure();
      v = *r;
    }
    parts.push_back(v);
  }
  return one(c.make<k::ConcatOp>(
      parts, {c.named("axis", c.b.getI64IntegerAttr(*axis))}));
}

Results importSplitToSequence(NodeContext &c) {
  Value x = c.input(0);
  auto type = c.type(x);
  auto axis = c.normalizeAxis(c.attrInt("axis", 0), type.getRank());
  if (!axis)
    return c.fail("axis out of range");
  int64_t dim = type.getDimSize(*axis);
  SmallVector<int64_t> sizes;
  bool keepdims = true;
  if (!c.hasInput(1)) {
    // Pieces of 1; keepdims=0 drops the split axis.
    sizes.assign(dim, 1);
    keepdims = c.attrInt("keepdims", 1) != 0;
  } else if (auto split = c.constantInts(1)) {
    if (c.type(c.input(1)).getRank() == 0) {
      int64_t chunk = (*split)[0];
      if (chunk <= 0)
        return c.fail("the split size must be positive");
      for (int64_t left = dim; left > 0; left -= chunk)
        sizes.push_back(std::min(chunk, left));
    } else {
      sizes.assign(split->begin(), split->end());
    }
  } else {
    auto splitType = c.type(c.input(1));
    if (splitType.getRank() != 1)
      return c.needsConstant(1);
    // Run-time sizes: the number of pieces is known, their extents are not.
    return produce(
        c,
        TensorList{{}, splitType.getDimSize(0), false, type.getElementType()});
  }
  TensorList list{{}, 0, true, type.getElementType()};
  int64_t offset = 0;
  for (int64_t size : sizes) {
    if (size < 0 || offset + size > dim)
      return c.fail("the split sizes do not add up to the dim");
    SmallVector<int64_t> starts(type.getRank(), 0), ends(type.getShape()),
        steps(type.getRank(), 1);
    starts[*axis] = offset;
    ends[*axis] = offset + size;
    auto piece = c.make<k::SliceOp>(x, {c.named("starts", c.i64s(starts)),
                                        c.named("ends", c.i64s(ends)),
                                        c.named("steps", c.i64s(steps))});
    if (failed(piece))
      return failure();
    Value v = *piece;
    if (!keepdims) {
      SmallVector<int64_t> shape(c.type(v).getShape());
      shape.erase(shape.begin() + *axis);
      auto r = reshapeTo(c, v, shape);
      if (failed(r))
        return failure();
      v = *r;
    }
    list.elements.push_back(v);
    offset += size;
  }
  if (offset != dim)
    return c.fail("the split sizes do not add up to the dim");
  list.length = list.elements.size();
  return produce(c, std::move(list));
}
} // namespace

bool mlir::kiln::onnx_import::isSequenceOp(llvm::StringRef opType) {
  return llvm::is_contained(
      {"SequenceEmpty", "SequenceConstruct", "SequenceInsert", "SequenceErase",
       "SequenceAt", "SequenceLength", "ConcatFromSequence", "SplitToSequence"},
      opType);
}

void mlir::kiln::onnx_import::registerSequenceHandlers(
    llvm::StringMap<OpHandler> &t) {
  t["SequenceEmpty"] = importSequenceEmpty;
  t["SequenceConstruct"] = importSequenceConstruct;
  t["SequenceInsert"] = importSequenceInsert;
  t["SequenceErase"] = importSequenceErase;
  t["SequenceAt"] = importSequenceAt;
  t["SequenceLength"] = importSequenceLength;
  t["ConcatFromSequence"] = importConcatFromSequence;
  t["SplitToSequence"] = importSplitToSequence;
}
