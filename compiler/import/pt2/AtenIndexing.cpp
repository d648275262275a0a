//===- AtenIndexing.cpp - ATen's indexing, padding and rolling ops --------===//
//
// What the torchvision models add beyond the layers: select and unflatten
// (ViT), pad, roll, index and masked_fill (Swin's shifted windows),
// clamp (MobileNet's hardtanh after decomposition).
//
//===----------------------------------------------------------------------===//
#include "compiler/import/pt2/AtenContext.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::pt2;

namespace {
Results clampOp(AtenContext &c) {
  FailureOr<Value> x = c.tensor("self");
  if (failed(x))
    return failure();
  SmallVector<NamedAttribute> attrs;
  for (StringRef bound : {"min", "max"})
    if (!c.isNone(bound)) {
      FailureOr<double> v = c.number(bound);
      if (failed(v))
        return failure();
      attrs.push_back(c.named(bound, c.b.getF64FloatAttr(*v)));
    }
  return one(c.make<ClipOp>({*x}, attrs));
}

Results fmodOp(AtenContext &c) {
  FailureOr<Value> x = c.tensor("self");
  FailureOr<double> v = c.number("other");
  if (failed(x) || failed(v))
    return failure();
  return one(c.make<ModOp>({*x, c.scalar(c.type(*x).getElementType(), *v)},
                           {c.named("fmod", c.b.getBoolAttr(true))}));
}

Results selectInt(AtenContext &c) {
  FailureOr<Value> x = c.tensor("self");
  FailureOr<int64_t> d = c.integer("dim"), index = c.integer("index");
  if (failed(x) || failed(d) || failed(index))
    return failure();
  SmallVector<int64_t> shape(c.type(*x).getShape());
  FailureOr<int64_t> dim = c.dim(*d, shape.size());
  if (failed(dim))
    return failure();
  int64_t i = *index < 0 ? *index + shape[*dim] : *index;
  if (i < 0 || i >= shape[*dim])
    return c.fail("index " + llvm::Twine(*index) + " is out of range for dim " +
                  llvm::Twine(*dim) + " of size " + llvm::Twine(shape[*dim])),
           failure();
  FailureOr<Value> s = c.slice(*x, *dim, i, i + 1);
  shape.erase(shape.begin() + *dim);
  return one(failed(s) ? s : c.reshape(*s, shape));
}

Results squeezeDims(AtenContext &c) {
  FailureOr<Value> x = c.tensor("self");
  FailureOr<SmallVector<int64_t>> dims = c.ints("dim");
  if (failed(x) || failed(dims))
    return failure();
  ArrayRef<int64_t> in = c.type(*x).getShape();
  SmallVector<bool> drop(in.size(), false);
  for (int64_t d : *dims) {
    FailureOr<int64_t> n = c.dim(d, in.size());
    if (failed(n))
      return failure();
    drop[*n] = !in.empty() && in[*n] == 1;
  }
  SmallVector<int64_t> shape;
  for (size_t d = 0; d < in.size(); ++d)
    if (!drop[d])
      shape.push_back(in[d]);
  return one(c.reshape(*x, shape));
}

Results unflatten(AtenContext &c) {
  FailureOr<Value> x = c.tensor("self");
  FailureOr<int64_t> d = c.integer("dim");
  FailureOr<SmallVector<int64_t>> sizes = c.ints("sizes");
  if (failed(x) || failed(d) || failed(sizes))
    return failure();
  SmallVector<int64_t> in(c.type(*x).getShape());
  FailureOr<int64_t> dim = c.dim(*d, in.size());
  if (failed(dim))
    return failure();
  SmallVector<int64_t> parts = *sizes;
  int64_t known = 1, infer = -1;
  for (auto [i, s] : llvm::enumerate(parts))
    s == -1 ? (void)(infer = i) : (void)(known *= s);
  if (infer >= 0)
    parts[infer] = known ? in[*dim] / known : 0;
  SmallVector<int64_t> shape(in.begin(), in.begin() + *dim);
  shape.append(parts);
  shape.append(in.begin() + *dim + 1, in.end());
  return one(c.reshape(*x, shape));
}

/// constant_pad_nd / pad: torch lists (begin, end) pairs from the last dim
/// backwards; negative pads crop.
Results pad(AtenContext &c, bool generic) {
  FailureOr<Value> x = c.tensor("self");
  FailureOr<SmallVector<int64_t>> given = c.ints("pad");
  if (failed(x) || failed(given))
    return failure();
  std::string mode = "constant";
  if (generic) {
    FailureOr<std::string> m = c.string("mode");
    if (failed(m))
      return failure();
    mode = *m == "reflect"     ? "reflect"
           : *m == "replicate" ? "edge"
           : *m == "circular"  ? "wrap"
                               : *m;
    if (mode != "constant" && mode != "reflect" && mode != "edge" &&
        mode != "wrap")
      return c.fail("pad mode '" + *m + "' is not supported"), failure();
  }
  double value = 0;
  if (!c.isNone("value")) {
    FailureOr<double> v = c.number("value");
    if (failed(v))
      return failure();
    value = *v;
  }
  int64_t rank = c.type(*x).getRank();
  if (given->size() % 2 || (int64_t)given->size() / 2 > rank)
    return c.fail("pad has " + llvm::Twine(given->size()) +
                  " entries for a rank-" + llvm::Twine(rank) + " tensor"),
           failure();
  SmallVector<int64_t> pads(2 * rank, 0);
  Value v = *x;
  for (size_t i = 0; i < given->size() / 2; ++i) {
    int64_t d = rank - 1 - i, begin = (*given)[2 * i],
            end = (*given)[2 * i + 1];
    if (begin < 0 || end < 0) { // crop first
      int64_t extent = c.type(v).getDimSize(d);
      FailureOr<Value> s = c.slice(v, d, std::max<int64_t>(0, -begin),
                                   extent - std::max<int64_t>(0, -end));
      if (failed(s))
        return failure();
      v = *s;
    }
    pads[d] = std::max<int64_t>(0, begin);
    pads[rank + d] = std::max<int64_t>(0, end);
  }
  return one(c.make<PadOp>({v, c.scalar(c.type(v).getElementType(), value)},
                           {c.named("pads", c.i64s(pads)),
                            c.named("mode", c.b.getStringAttr(mode))}));
}

/// roll: each dim's last `shift` elements move to the front.
Results roll(AtenContext &c) {
  FailureOr<Value> x = c.tensor("self");
  FailureOr<SmallVector<int64_t>> shifts = c.ints("shifts"),
                                  dims = c.ints("dims");
  if (failed(x) || failed(shifts) || failed(dims))
    return failure();
  Value v = *x;
  if (dims->empty()) { // roll the flattened tensor
    RankedTensorType type = c.type(v);
    FailureOr<Value> flat = c.reshape(v, {type.getNumElements()});
    if (failed(flat))
      return failure();
    v = *flat;
    dims->push_back(0);
  }
  if (shifts->size() != dims->size())
    return c.fail("roll has " + llvm::Twine(shifts->size()) + " shifts for " +
                  llvm::Twine(dims->size()) + " dims"),
           failure();
  for (auto [shift, d] : llvm::zip(*shifts, *dims)) {
    FailureOr<int64_t> dim = c.dim(d, c.type(v).getRank());
    if (failed(dim))
      return failure();
    int64_t n = c.type(v).getDimSize(*dim);
    int64_t s = n ? ((shift % n) + n) % n : 0;
    if (!s)
      continue;
    FailureOr<Value> tail = c.slice(v, *dim, n - s, n),
                     head = c.slice(v, *dim, 0, n - s);
    if (failed(tail) || failed(head))
      return failure();
    FailureOr<Value> r = c.make<ConcatOp>(
        {*tail, *head}, {c.named("axis", c.b.getI64IntegerAttr(*dim))});
    if (failed(r))
      return failure();
    v = *r;
  }
  if (v.getType() != x->getType())
    return one(c.reshape(v, c.type(*x).getShape()));
  return SmallVector<Value>{v};
}

FailureOr<Value> gather(AtenContext &c, Value x, Value index, int64_t dim) {
  return c.make<GatherOp>({x, index},
                          {c.named("axis", c.b.getI64IntegerAttr(dim))});
}

Results indexSelect(AtenContext &c) {
  FailureOr<Value> x = c.tensor("self"), index = c.tensor("index");
  FailureOr<int64_t> d = c.integer("dim");
  if (failed(x) || failed(index) || failed(d))
    return failure();
  FailureOr<int64_t> dim = c.dim(*d, c.type(*x).getRank());
  return failed(dim) ? Results(failure()) : one(gather(c, *x, *index, *dim));
}

/// x[..., idx, ...] with one index tensor (the others None): a gather.
Results indexOp(AtenContext &c) {
  FailureOr<Value> x = c.tensor("self");
  const llvm::json::Object *a = c.arg("indices");
  // Written as_tensors when no entry is None, else as_optional_tensors.
  const llvm::json::Array *list =
      a ? a->getArray("as_optional_tensors") : nullptr;
  if (!list && a)
    list = a->getArray("as_tensors");
  if (failed(x))
    return failure();
  if (!list)
    return c.fail("indices is not a list of optional tensors"), failure();
  Value idx;
  int64_t dim = -1;
  for (auto [i, item] : llvm::enumerate(*list)) {
    const llvm::json::Object *o = item.getAsObject();
    const llvm::json::Object *t = o ? o->getObject("as_tensor") : nullptr;
    if (!t && o && o->getString("name"))
      t = o; // an as_tensors entry is the tensor reference itself
    if (!t)
      continue;
    if (idx)
      return c.fail("index with several index tensors is not supported"),
             failure();
    idx = c.lookup(t->getString("name").value_or(""));
    dim = i;
  }
  if (!idx)
    return c.fail("index without an index tensor"), failure();
  if (c.type(idx).getElementType().isInteger(1))
    return c.fail("index with a boolean mask is not supported"), failure();
  return one(gather(c, *x, idx, dim));
}

/// as_strided over the input's row-major elements: a reshape when the view
/// is the contiguous layout of `size`, else a gather of the flattened input
/// at the offsets the strides give.
Results asStrided(AtenContext &c) {
  FailureOr<Value> x = c.tensor("self");
  FailureOr<SmallVector<int64_t>> size = c.ints("size"),
                                  stride = c.ints("stride");
  if (failed(x) || failed(size) || failed(stride))
    return failure();
  int64_t offset = 0;
  if (!c.isNone("storage_offset")) {
    FailureOr<int64_t> o = c.integer("storage_offset");
    if (failed(o))
      return failure();
    offset = *o;
  }
  if (size->size() != stride->size())
    return c.fail("as_strided has " + llvm::Twine(size->size()) +
                  " sizes and " + llvm::Twine(stride->size()) + " strides"),
           failure();
  int64_t total = c.type(*x).getNumElements(), count = 1, expected = 1,
          last = offset;
  bool contiguous = offset == 0;
  for (int64_t d = size->size() - 1; d >= 0; --d) {
    contiguous &= (*size)[d] == 1 || (*stride)[d] == expected;
    expected *= (*size)[d];
    count *= (*size)[d];
    last += ((*size)[d] - 1) * (*stride)[d];
  }
  if (count > 0 && (last >= total || offset < 0 ||
                    llvm::any_of(*stride, [](int64_t s) { return s < 0; })))
    return c.fail("as_strided reaches element " + llvm::Twine(last) + " of a " +
                  llvm::Twine(total) + "-element input"),
           failure();
  if (contiguous && count == total)
    return one(c.reshape(*x, *size));
  if (count > (1 << 24))
    return c.fail("as_strided gathers too many elements"), failure();
  SmallVector<int64_t> offsets, index(size->size(), 0);
  for (int64_t i = 0; i < count; ++i) {
    int64_t at = offset;
    for (size_t d = 0; d < size->size(); ++d)
      at += index[d] * (*stride)[d];
    offsets.push_back(at);
    for (int64_t d = size->size() - 1; d >= 0 && ++index[d] == (*size)[d]; --d)
      index[d] = 0;
  }
  auto indexType = RankedTensorType::get(*size, c.b.getI64Type());
  Value indices = c.constant(cast<ElementsAttr>(
      DenseElementsAttr::get(indexType, ArrayRef<int64_t>(offsets))));
  FailureOr<Value> flat = c.reshape(*x, {total});
  return one(failed(flat) ? flat : gather(c, *flat, indices, 0));
}

/// self with self[start:end] along dim replaced by src (step 1): the parts
/// before and after, concatenated around src.
Results sliceScatter(AtenContext &c) {
  FailureOr<Value> x = c.tensor("self"), src = c.tensor("src");
  FailureOr<int64_t> d = c.integer("dim"), step = c.integer("step");
  if (failed(x) || failed(src) || failed(d) || failed(step))
    return failure();
  FailureOr<int64_t> dim = c.dim(*d, c.type(*x).getRank());
  if (failed(dim))
    return failure();
  if (*step != 1)
    return c.fail("slice_scatter with step " + llvm::Twine(*step) +
                  " is not supported"),
           failure();
  int64_t n = c.type(*x).getDimSize(*dim);
  FailureOr<int64_t> start = c.sliceBound("start", 0, n),
                     end = c.sliceBound("end", n, n);
  if (failed(start) || failed(end))
    return failure();
  SmallVector<Value> parts;
  if (*start > 0) {
    FailureOr<Value> before = c.slice(*x, *dim, 0, *start);
    if (failed(before))
      return failure();
    parts.push_back(*before);
  }
  parts.push_back(*src);
  if (*end < n) {
    FailureOr<Value> after = c.slice(*x, *dim, *end, n);
    if (failed(after))
      return failure();
    parts.push_back(*after);
  }
  if (parts.size() == 1)
    return SmallVector<Value>{*src};
  return one(
      c.make<ConcatOp>(parts, {c.named("axis", c.b.getI64IntegerAttr(*dim))}));
}

Results maskedFill(AtenContext &c) {
  FailureOr<Value> x = c.tensor("self"), mask = c.tensor("mask");
  FailureOr<double> v = c.number("value");
  if (failed(x) || failed(mask) || failed(v))
    return failure();
  return one(
      c.make<WhereOp>({*mask, c.scalar(c.type(*x).getElementType(), *v), *x}));
}

/// weight[indices] along dim 0 (padding_idx only matters for training).
Results embedding(AtenContext &c) {
  FailureOr<Value> weight = c.tensor("weight"), indices = c.tensor("indices");
  if (failed(weight) || failed(indices))
    return failure();
  return one(gather(c, *weight, *indices, 0));
}

/// zeros_like / ones_like: a constant of self's shape.
Results filledLike(AtenContext &c, double value) {
  FailureOr<Value> x = c.tensor("self");
  FailureOr<Type> type =
      failed(x) ? FailureOr<Type>(failure())
                : c.scalarType("dtype", c.type(*x).getElementType());
  if (failed(type))
    return failure();
  return SmallVector<Value>{c.filled(c.type(*x).getShape(), *type, value)};
}

/// to.dtype / _to_copy: a cast (devices and layouts mean nothing here).
Results convert(AtenContext &c) {
  FailureOr<Value> x = c.tensor("self");
  FailureOr<Type> type =
      failed(x) ? FailureOr<Type>(failure())
                : c.scalarType("dtype", c.type(*x).getElementType());
  if (failed(type))
    return failure();
  if (*type == c.type(*x).getElementType())
    return SmallVector<Value>{*x};
  return one(c.make<CastOp>({*x}, {c.named("to", TypeAttr::get(*type))}));
}

/// The metadata torch asserts at run time, checked at import: dtype and
/// sizes are static here. No outputs.
Results assertMetadata(AtenContext &c) {
  FailureOr<Value> x = c.tensor("a");
  if (failed(x))
    return failure();
  FailureOr<Type> type = c.scalarType("dtype", c.type(*x).getElementType());
  if (failed(type))
    return failure();
  if (*type != c.type(*x).getElementType())
    return c.fail("the program asserts another dtype than the tensor has"),
           failure();
  if (!c.isNone("size")) {
    FailureOr<SmallVector<int64_t>> size = c.ints("size");
    if (failed(size))
      return failure();
    ArrayRef<int64_t> shape = c.type(*x).getShape();
    bool same = size->size() == shape.size();
    for (size_t d = 0; same && d < shape.size(); ++d)
      same = ShapedType::isDynamic(shape[d]) || shape[d] == (*size)[d];
    if (!same)
      return c.fail("the program asserts other sizes than the tensor has"),
             failure();
  }
  return SmallVector<Value>{};
}

Results newZeros(AtenContext &c) {
  FailureOr<Value> x = c.tensor("self");
  FailureOr<SmallVector<int64_t>> size = c.ints("size");
  if (failed(x) || failed(size))
    return failure();
  FailureOr<Type> type = c.scalarType("dtype", c.type(*x).getElementType());
  if (failed(type))
    return failure();
  return SmallVector<Value>{c.filled(*size, *type, 0)};
}
} // namespace

void mlir::kiln::pt2::registerAtenIndexingHandlers(
    llvm::StringMap<AtenHandler> &t) {
  t["aten.clamp.default"] = clampOp;
  t["aten.fmod.Scalar"] = fmodOp;
  t["aten.select.int"] = selectInt;
  t["aten.squeeze.dims"] = squeezeDims;
  t["aten.unflatten.int"] = unflatten;
  t["aten.constant_pad_nd.default"] = [](AtenContext &c) {
    return pad(c, false);
  };
  t["aten.pad.default"] = [](AtenContext &c) { return pad(c, true); };
  t["aten.roll.default"] = roll;
  t["aten.index_select.default"] = indexSelect;
  t["aten.index.Tensor"] = indexOp;
  t["aten.masked_fill.Scalar"] = maskedFill;
  t["aten.new_zeros.default"] = newZeros;
  t["aten.embedding.default"] = embedding;
  t["aten.zeros_like.default"] = [](AtenContext &c) {
    return filledLike(c, 0);
  };
  t["aten.ones_like.default"] = [](AtenContext &c) { return filledLike(c, 1); };
  t["aten.to.dtype"] = convert;
  t["aten._assert_tensor_metadata.default"] = assertMetadata;
  t["aten._to_copy.default"] = convert;
  t["aten.as_strided.default"] = asStrided;
  t["aten.slice_scatter.default"] = sliceScatter;
}
