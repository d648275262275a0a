//===- ImportReduction.cpp - Reduce* ONNX ops -----------------------------===//
//
// ReduceSum takes its axes as an input since opset 13, the others since
// opset 18; before that they are an attribute. Empty axes reduce everything
// unless noop_with_empty_axes is set.
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

template <typename OpTy> OpHandler reduce(int64_t axesInputSince) {
  return [axesInputSince](NodeContext &c) -> Results {
    int64_t rank = c.type(c.input(0)).getRank();
    std::optional<SmallVector<int64_t>> axes;
    if (c.opset < axesInputSince) {
      axes = c.attrInts("axes");
    } else if (c.hasInput(1)) {
      axes = c.constantInts(1);
      if (!axes)
        return c.needsConstant(1);
    }
    if (!axes || axes->empty()) {
      if (c.attrInt("noop_with_empty_axes", 0))
        return SmallVector<Value>{c.input(0)};
      axes.emplace();
      for (int64_t d = 0; d < rank; ++d)
        axes->push_back(d);
    }
    SmallVector<int64_t> normalized;
    for (int64_t a : *axes) {
      auto axis = c.normalizeAxis(a, rank);
      if (!axis)
        return c.fail(fmt::format("axis {} out of range for rank {}", a, rank));
      if (!llvm::is_contained(normalized, *axis))
        normalized.push_back(*axis);
    }
    llvm::sort(normalized);
    auto y = c.make<OpTy>(
        c.input(0),
        {c.named("axes", c.i64s(normalized)),
         c.named("keepdims", c.b.getBoolAttr(c.attrInt("keepdims", 1)))});
    if (failed(y))
      return failure();
    return SmallVector<Value>{*y};
  };
}
} // namespace

void mlir::kiln::onnx_import::registerReductionHandlers(
    llvm::StringMap<OpHandler> &t) {
  t["ReduceSum"] = reduce<k::ReduceSumOp>(13);
  t["ReduceMean"] = reduce<k::ReduceMeanOp>(18);
  t["ReduceMax"] = reduce<k::ReduceMaxOp>(18);
  t["ReduceMin"] = reduce<k::ReduceMinOp>(18);
  t["ReduceProd"] = reduce<k::ReduceProdOp>(18);
}
