//===- ImportLoss.cpp - NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss ===//
//
// Both losses pick one class score per sample position. Instead of a gather
// (whose out-of-range and ignored targets would need clamping), the target is
// compared with the class index to give a one-hot mask, and the picked score
// and weight are masked sums over the class axis: an ignored or out-of-range
// target matches no class and contributes nothing, which is exactly the
// spec's behavior, and it all fuses into elementwise loops and one reduction.
//
//===----------------------------------------------------------------------===//

#include "compiler/import/onnx/ImportNNBuilder.h"

#include "onnx/onnx.pb.h"

#include <fmt/format.h>

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::onnx_import;

namespace {
using Results = FailureOr<SmallVector<Value>>;

/// The NLL loss of `logProb` [N, C, d...] against `target` [N, d...] with
/// optional class weights [C], reduced as `reduction` says.
Value negativeLogLikelihood(NNBuilder &e, Value logProb, Value target,
                            Value weight, std::optional<int64_t> ignoreIndex,
                            StringRef reduction) {
  NodeContext &c = e.c;
  ArrayRef<int64_t> shape = e.shape(logProb);
  int64_t rank = shape.size(), classes = shape[1];
  Type targetType = e.elementType(target);

  // Class index along axis 1, broadcast over every other dim.
  SmallVector<int64_t> classShape(rank, 1);
  classShape[1] = classes;
  SmallVector<APInt> indices;
  for (int64_t i = 0; i < classes; ++i)
    indices.push_back(APInt(targetType.getIntOrFloatBitWidth(), i, true));
  Value classIndex = c.constant(cast<ElementsAttr>(DenseElementsAttr::get(
      RankedTensorType::get(classShape, targetType), indices)));

  SmallVector<int64_t> targetWithClassDim(e.shape(target));
  targetWithClassDim.insert(targetWithClassDim.begin() + 1, 1);
  Value oneHot = e.equal(e.reshape(target, targetWithClassDim), classIndex);
  Value zero = e.k(logProb, 0);
  Value picked = e.reduceSum(e.select(oneHot, logProb, zero), {1}, false);

  Value perPosition;
  if (weight)
    perPosition = e.reduceSum(
        e.select(oneHot, e.reshape(weight, classShape), zero), {1}, false);
  else
    perPosition = e.splat(e.shape(target), e.elementType(logProb), 1);
  if (ignoreIndex)
    perPosition = e.select(e.equal(target, c.scalar(targetType, *ignoreIndex)),
                           zero, perPosition);
  Value loss = e.mul(e.neg(picked), perPosition);
  if (e.failed || reduction == "none")
    return loss;
  SmallVector<int64_t> all = dimRange(0, e.rank(loss));
  Value total = e.reduceSum(loss, all, false);
  if (reduction == "sum")
    return total;
  return e.div(total, e.reduceSum(perPosition, all, false));
}

/// What is wrong with the operands both losses share, or "" if nothing.
std::string checkLossOperands(NodeContext &c, StringRef reduction) {
  if (reduction != "none" && reduction != "sum" && reduction != "mean")
    return "unknown reduction '" + reduction.str() + "'";
  Value scores = c.input(0), target = c.input(1), weight = c.input(2);
  if (!scores || !target)
    return "needs scores and a target";
  auto scoresType = c.type(scores), targetType = c.type(target);
  if (scoresType.getRank() < 2)
    return "scores must have rank >= 2";
  SmallVector<int64_t> expected(scoresType.getShape());
  expected.erase(expected.begin() + 1);
  if (targetType.getShape() != ArrayRef<int64_t>(expected))
    return "target shape does not match the scores without the class dim";
  if (!isa<IntegerType>(targetType.getElementType()))
    return "target must be an integer tensor";
  if (weight && (c.type(weight).getRank() != 1 ||
                 c.type(weight).getDimSize(0) != scoresType.getDimSize(1)))
    return "weight must be [C]";
  return "";
}

std::optional<int64_t> ignoreIndexOf(NodeContext &c) {
  if (!c.hasAttr("ignore_index"))
    return std::nullopt;
  return c.attrInt("ignore_index", 0);
}

Results importNegativeLogLikelihoodLoss(NodeContext &c) {
  std::string reduction = c.attrString("reduction", "mean");
  std::string problem = checkLossOperands(c, reduction);
  if (!problem.empty())
    return c.fail(problem);
  NNBuilder e(c);
  return e.done({negativeLogLikelihood(e, c.input(0), c.input(1), c.input(2),
                                       ignoreIndexOf(c), reduction)});
}

/// NLL of log_softmax over the class axis; the log-probabilities are the
/// optional second output.
Results importSoftmaxCrossEntropyLoss(NodeContext &c) {
  std::string reduction = c.attrString("reduction", "mean");
  std::string problem = checkLossOperands(c, reduction);
  if (!problem.empty())
    return c.fail(problem);
  NNBuilder e(c);
  Value logProb = e.op<LogSoftmaxOp>(
      {c.input(0)}, {c.named("axis", c.b.getI64IntegerAttr(1))});
  Value loss = negativeLogLikelihood(e, logProb, c.input(1), c.input(2),
                                     ignoreIndexOf(c), reduction);
  return e.done({loss, c.hasOutput(1) ? logProb : Value()});
}
} // namespace

void mlir::kiln::onnx_import::registerLossHandlers(
    llvm::StringMap<OpHandler> &t) {
  t["NegativeLogLikelihoodLoss"] = importNegativeLogLikelihoodLoss;
  t["SoftmaxCrossEntropyLoss"] = importSoftmaxCrossEntropyLoss;
}
