//===- ImportPadRunTime.cpp - Pad with run-time pads ----------------------===//
//
// Pad whose pads are a run-time value, when the model declares the result
// shape: the result is that static shape and each dim gathers its source
// rows from indices computed when the model runs (negative pads crop the
// same way). Per dim d with begin pad b[d] and result extent out[d]:
//
//   src      = iota(out[d]) - b[d]
//   constant : index = clamp(src, 0, in - 1), inside = 0 <= src < in
//   edge     : index = clamp(src, 0, in - 1)
//   reflect  : m = src mod 2(in - 1), index = m < in ? m : 2(in - 1) - m
//   wrap     : index = src mod in
//   kiln.assert in + b + e == out, every dim
//   y = gather(x, index, axis d) per dim; constant mode then selects the
//   fill value where any dim is outside.
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

Results mlir::kiln::onnx_import::importRunTimePad(NodeContext &c,
                                                  StringRef mode, Value value) {
  auto declared = c.declaredShape(0);
  auto in = c.type(c.input(0));
  int64_t rank = in.getRank();
  if (!declared || (int64_t)declared->size() != rank || !in.hasStaticShape())
    return failure();
  Type i64 = c.b.getI64Type();
  Value pads = vectorInput(c, 1, i64);
  if (!pads)
    return failure();
  NNBuilder e(c);
  // Begin and end pads per dim: all dims, or those a constant `axes` names.
  SmallVector<int64_t> axes = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  if (c.hasInput(3)) {
    auto constAxes = c.constantInts(3);
    if (!constAxes)
      return c.needsConstant(3);
    axes.clear();
    for (int64_t a : *constAxes) {
      auto axis = c.normalizeAxis(a, rank);
      if (!axis)
        return c.fail(fmt::format("axis {} is out of range", a));
      axes.push_back(*axis);
    }
  }
  int64_t n = axes.size();
  int64_t given = c.type(pads).getDimSize(0);
  if (given != 2 * n)
    return c.fail(fmt::format("expected {} pads, got {}", 2 * n, given));
  Value zero = i64Tensor(c, {1}, {0});
  SmallVector<Value> begin(rank, zero), end(rank, zero);
  for (auto [i, axis] : llvm::enumerate(axes)) {
    begin[axis] = e.slice(pads, 0, i, i + 1);
    end[axis] = e.slice(pads, 0, n + i, n + i + 1);
  }
  Value added = e.add(e.concat(begin, 0), e.concat(end, 0));
  Value actual = e.add(i64Tensor(c, {rank}, in.getShape()), added);
  if (e.failed ||
      failed(c.requireValues(
          actual, *declared,
          fmt::format("Pad: input 1 '{}' gives a result shape other than "
                      "the declared [{}] of '{}'",
                      c.node.input(1), fmt::join(*declared, ", "),
                      c.node.output(0)))))
    return failure();

  Value result = c.input(0), inside;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t out = (*declared)[d], extent = in.getDimSize(d);
    if (out == 0 || extent == 0)
      break;
    Value iota =
        i64Tensor(c, {out}, llvm::to_vector(llvm::seq<int64_t>(0, out)));
    Value src = e.sub(iota, begin[d]);
    Value lo = e.k(src, 0), hi = e.k(src, extent - 1);
    Value index = e.min(e.max(src, lo), hi);
    if (mode == "reflect" && extent > 1) {
      Value period = e.k(src, 2 * (extent - 1));
      Value m = e.op<k::ModOp>({src, period});
      index = e.select(e.less(m, e.k(src, extent)), m, e.sub(period, m));
    } else if (mode == "wrap") {
      index = e.op<k::ModOp>({src, e.k(src, extent)});
    } else if (mode == "constant") {
      Value ok = e.op<k::AndOp>(
          {e.greater(src, e.k(src, -1)), e.less(src, e.k(src, extent))});
      SmallVector<int64_t> shape(rank, 1);
      shape[d] = out;
      ok = e.reshape(ok, shape);
      inside = inside ? e.op<k::AndOp>({inside, ok}) : ok;
    }
    result = e.op<k::GatherOp>({result, index},
                               {c.named("axis", c.b.getI64IntegerAttr(d))});
  }
  if (llvm::is_contained(*declared, 0)) {
    auto type = RankedTensorType::get(*declared, in.getElementType());
    return SmallVector<Value>{c.constant(cast<ElementsAttr>(
        DenseElementsAttr::get(type, ArrayRef<Attribute>{})))};
  }
  if (inside)
    result = e.select(inside, result, value);
  return e.done({result});
}
