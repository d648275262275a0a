//===- ImportNMS.cpp - NonMaxSuppression ----------------------------------===//
//
// NonMaxSuppression's optional scalar inputs (one-element tensors, possibly
// fed at run time) become rank-0 operands of kiln.non_max_suppression;
// absent or empty ones take ONNX's defaults: no box per class, IoU threshold
// 0, no score threshold. The result's row count is known only after the
// run.
//
//===----------------------------------------------------------------------===//

#include "compiler/import/onnx/ImportIndexing.h"
#include "compiler/import/onnx/ImportNNBuilder.h"

#include "onnx/onnx.pb.h"

#include <fmt/format.h>

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::onnx_import;
namespace k = mlir::kiln;

namespace {
Results importNonMaxSuppression(NodeContext &c) {
  if (!c.hasInput(0) || !c.hasInput(1))
    return c.fail("needs boxes and scores");
  Type ft = c.type(c.input(0)).getElementType();
  if (!isa<FloatType>(ft))
    return c.fail("boxes must be floats");
  NNBuilder e(c);
  // Input `i` as a rank-0 tensor of `type`, or `dflt` when absent or empty;
  // null (with an error) when it has more than one element.
  auto scalarInput = [&](size_t i, Type type, Value dflt) -> Value {
    if (!c.hasInput(i) || c.type(c.input(i)).getNumElements() == 0)
      return dflt;
    if (c.type(c.input(i)).getNumElements() != 1) {
      (void)c.fail(
          fmt::format("input {} '{}' must hold one value", i, c.node.input(i)));
      return Value();
    }
    return e.scalarOf(c.input(i), type);
  };
  Value maxOut =
      scalarInput(2, c.b.getI64Type(), c.scalar(c.b.getI64Type(), 0));
  Value iou = scalarInput(3, ft, c.scalar(ft, 0));
  bool useThreshold = c.hasInput(4) && c.type(c.input(4)).getNumElements() != 0;
  Value threshold = scalarInput(4, ft, c.scalar(ft, 0));
  if (!maxOut || !iou || !threshold)
    return failure();
  int64_t center = c.attrInt("center_point_box", 0);
  if (center != 0 && center != 1)
    return c.fail("center_point_box must be 0 or 1");
  Value boxes = c.input(0), scores = c.input(1);
  if (c.type(scores).getElementType() != ft)
    scores = e.cast(scores, ft);
  return e.done({e.op<k::NonMaxSuppressionOp>(
      {boxes, scores, maxOut, iou, threshold},
      {c.named("center_point_box", c.b.getBoolAttr(center == 1)),
       c.named("use_score_threshold", c.b.getBoolAttr(useThreshold))})});
}
} // namespace

void mlir::kiln::onnx_import::registerNMSHandlers(
    llvm::StringMap<OpHandler> &t) {
  t["NonMaxSuppression"] = importNonMaxSuppression;
}
