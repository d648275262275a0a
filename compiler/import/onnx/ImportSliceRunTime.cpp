//===- ImportSliceRunTime.cpp - Slice with run-time bounds ----------------===//
//
// Slice whose starts/ends (and possibly axes/steps) are run-time values,
// when the model declares the result shape: the result is that static
// shape, and the elements are gathered from run-time indices. Per input dim
// d, ONNX's bounds are computed in i64 vector ops over the dims, as the ONNX
// spec resolves them (the entry of `axes` equal to d, or the whole dim;
// negative values counted from the end; clamped by the step's sign):
//
//   start[d], step[d]        (rank-sized vectors, from starts/ends/axes/steps)
//   count[d] = ceil((end - start) / step), at least 0
//   kiln.assert all(count == declared) and all(step != 0)
//   y = gather(x, start[d] + iota(declared[d]) * step[d], axis d) per dim
//
// Only the dims a constant `axes` names are gathered (every dim when axes
// are computed at run time).
//
//===----------------------------------------------------------------------===//
#include "compiler/import/onnx/ImportIndexing.h"
#include "compiler/import/onnx/ImportNNBuilder.h"

#include "onnx/onnx.pb.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::onnx_import;
namespace k = mlir::kiln;

Results mlir::kiln::onnx_import::importRunTimeSlice(NodeContext &c) {
  auto declared = c.declaredShape(0);
  auto in = c.type(c.input(0));
  int64_t rank = in.getRank();
  if (!declared || (int64_t)declared->size() != rank)
    return failure();
  NNBuilder e(c);
  Type i64 = c.b.getI64Type();
  Value starts = vectorInput(c, 1, i64), ends = vectorInput(c, 2, i64);
  if (!starts || !ends)
    return failure();
  int64_t n = e.shape(starts)[0];
  if (e.shape(ends)[0] != n)
    return c.fail("starts and ends differ in length");
  Value axes =
      c.hasInput(3)
          ? vectorInput(c, 3, i64)
          : i64Tensor(c, {n}, llvm::to_vector(llvm::seq<int64_t>(0, n)));
  Value steps = c.hasInput(4) ? vectorInput(c, 4, i64)
                              : i64Tensor(c, {n}, SmallVector<int64_t>(n, 1));
  if (!axes || !steps || e.shape(axes)[0] != n || e.shape(steps)[0] != n)
    return c.fail("starts, ends, axes and steps differ in length");

  // Which dims are sliced, when that is known at compile time.
  SmallVector<bool> sliced(rank, true);
  if (auto constAxes = c.hasInput(3)
                           ? c.constantInts(3)
                           : std::optional<SmallVector<int64_t>>(
                                 llvm::to_vector(llvm::seq<int64_t>(0, n)))) {
    sliced.assign(rank, false);
    for (int64_t a : *constAxes) {
      auto axis = c.normalizeAxis(a, rank);
      if (!axis)
        return c.fail(fmt::format("axis {} is out of range", a));
      sliced[*axis] = true;
    }
  }

  // [rank, n]: entry k of the ONNX vectors applies to dim d.
  Value dims =
      i64Tensor(c, {rank, 1}, llvm::to_vector(llvm::seq<int64_t>(0, rank)));
  Value zero = e.k(starts, 0), one = e.k(starts, 1);
  Value normAxes =
      e.select(e.less(axes, zero), e.add(axes, e.k(axes, rank)), axes);
  Value applies = e.equal(e.reshape(normAxes, {1, n}), dims);
  auto perDim = [&](Value v, Value dflt) {
    Value spread = e.select(applies, e.reshape(v, {1, n}), zero);
    Value sum = e.reshape(e.reduceSum(spread, {1}, false), {rank});
    Value named =
        e.reshape(e.reduceSum(e.cast(applies, i64), {1}, false), {rank});
    return e.select(e.greater(named, zero), sum, dflt);
  };
  Value extent = i64Tensor(c, {rank}, in.getShape());
  Value start =
      perDim(starts, i64Tensor(c, {rank}, SmallVector<int64_t>(rank, 0)));
  Value end = perDim(ends, extent);
  Value step =
      perDim(steps, i64Tensor(c, {rank}, SmallVector<int64_t>(rank, 1)));

  // ONNX's clamping: negative bounds from the end, then into [0, dim] for a
  // positive step, [0, dim - 1] and [-1, dim - 1] for a negative one.
  Value forward = e.greater(step, zero);
  start = e.select(e.less(start, zero), e.add(start, extent), start);
  end = e.select(e.less(end, zero), e.add(end, extent), end);
  Value last = e.sub(extent, one);
  Value minusOne = e.k(starts, -1);
  start = e.select(forward, e.min(e.max(start, zero), extent),
                   e.min(e.max(start, zero), last));
  end = e.select(forward, e.min(e.max(end, zero), extent),
                 e.min(e.max(end, minusOne), last));
  // count = ceil(|end - start| / |step|) in the step's direction, >= 0.
  Value nonZero = e.select(e.equal(step, zero), one, step);
  Value magnitude = e.select(forward, nonZero, e.sub(zero, nonZero));
  Value span =
      e.max(e.select(forward, e.sub(end, start), e.sub(start, end)), zero);
  Value count = e.div(e.sub(e.add(span, magnitude), one), magnitude);
  // count == declared and step != 0, for every dim.
  Value ok = e.cast(e.equal(count, i64Tensor(c, {rank}, *declared)), i64);
  ok = e.min(ok, e.sub(one, e.cast(e.equal(step, zero), i64)));
  Value all = e.reduceMin(ok, {0}, false);
  if (e.failed)
    return failure();
  auto good = c.make<k::EqualOp>({all, c.scalar(i64, 1)});
  if (failed(good))
    return failure();
  k::AssertOp::create(
      c.b, c.loc, *good,
      c.b.getStringAttr(fmt::format(
          "Slice: the run-time starts/ends/axes/steps give a result of a "
          "shape other than [{}], the one the model declares for '{}'",
          fmt::join(*declared, ", "), c.node.output(0))));

  Value result = c.input(0);
  if (llvm::is_contained(*declared, 0)) {
    auto type = RankedTensorType::get(*declared, in.getElementType());
    return SmallVector<Value>{c.constant(cast<ElementsAttr>(
        DenseElementsAttr::get(type, ArrayRef<Attribute>{})))};
  }
  for (int64_t d = 0; d < rank; ++d) {
    if (!sliced[d])
      continue;
    int64_t size = (*declared)[d];
    Value iota =
        i64Tensor(c, {size}, llvm::to_vector(llvm::seq<int64_t>(0, size)));
    Value indices = e.add(e.slice(start, 0, d, d + 1),
                          e.mul(iota, e.slice(step, 0, d, d + 1)));
    if (e.failed)
      return failure();
    auto gathered = c.make<k::GatherOp>(
        {result, indices}, {c.named("axis", c.b.getI64IntegerAttr(d))});
    if (failed(gathered))
      return failure();
    result = *gathered;
  }
  return e.done({result});
}
