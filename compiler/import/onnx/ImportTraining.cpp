//===- ImportTraining.cpp - ai.onnx.preview.training optimizers -----------===//
//
// Adagrad, Adam and Momentum of the ai.onnx.preview.training domain: one
// optimizer step, elementwise, for each of N tensors sharing the learning
// rate R and the step count T (both scalars). The inputs are R, T, then N of
// each per-tensor operand in turn (X..., G..., V..., H...), and the outputs
// are grouped the same way. Each step is written as the ONNX spec's formula
// in kiln elementwise ops; decisions on T (bias correction, first-step
// momentum) are kiln.where selects, as T is known only at run time.
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

/// Checks that the node has R, T and `perTensor` groups of N inputs, and
/// `outputsPerTensor` groups of N outputs; returns N.
FailureOr<int64_t> tensorCount(NodeContext &c, int64_t perTensor,
                               int64_t outputsPerTensor) {
  int64_t operands = (int64_t)c.numInputs() - 2;
  if (operands <= 0 || operands % perTensor != 0) {
    c.error = fmt::format("expects R, T and {} groups of N inputs, got {} "
                          "inputs",
                          perTensor, c.numInputs());
    return failure();
  }
  int64_t n = operands / perTensor;
  if ((int64_t)c.numOutputs() > n * outputsPerTensor) {
    c.error = fmt::format("has {} outputs, at most {} for {} tensors",
                          c.numOutputs(), n * outputsPerTensor, n);
    return failure();
  }
  for (size_t i = 0; i < c.numInputs(); ++i)
    if (!c.hasInput(i)) {
      c.error = fmt::format("input {} is missing", i);
      return failure();
    }
  return n;
}

/// The scalar `v` converted to the element type of `like` (R and T are
/// scalars of their own types; the update runs in the tensor's type).
Value asTypeOf(NNBuilder &e, Value v, Value like) {
  if (e.elementType(v) == e.elementType(like))
    return v;
  return e.cast(v, e.elementType(like));
}

/// T > 0: the optimizer has taken steps before this one.
Value afterFirstStep(NNBuilder &e, Value t) { return e.greater(t, e.k(t, 0)); }

/// g + norm * x: the gradient with the L2 regularization term added.
Value regularized(NNBuilder &e, Value x, Value g, double norm) {
  return e.add(e.mul(e.k(x, norm), x), g);
}

/// Adagrad: r' = R / (1 + T * decay); g' = g + norm * x; h' = h + g'^2;
/// x' = x - r' * g' / (sqrt(h') + epsilon). Outputs X'..., H'....
Results importAdagrad(NodeContext &c) {
  auto n = tensorCount(c, 3, 2);
  if (failed(n))
    return failure();
  double decay = c.attrFloat("decay_factor", 0.0);
  double epsilon = c.attrFloat("epsilon", 1e-6);
  double norm = c.attrFloat("norm_coefficient", 0.0);
  NNBuilder e(c);
  Value r = c.input(0), t = c.input(1);
  SmallVector<Value> xs, hs;
  for (int64_t i = 0; i < *n; ++i) {
    Value x = c.input(2 + i), g = c.input(2 + *n + i),
          h = c.input(2 + 2 * *n + i);
    Value steps = asTypeOf(e, t, x);
    Value rate =
        e.div(asTypeOf(e, r, x), e.add(e.k(x, 1), e.mul(steps, e.k(x, decay))));
    Value grad = regularized(e, x, g, norm);
    Value hNew = e.add(h, e.mul(grad, grad));
    Value scale = e.add(e.sqrt(hNew), e.k(x, epsilon));
    xs.push_back(e.sub(x, e.div(e.mul(rate, grad), scale)));
    hs.push_back(hNew);
  }
  xs.append(hs);
  return e.done(xs);
}

/// Momentum, standard: v' = alpha * v + beta' * g'; x' = x - R * v'.
/// Nesterov: the same v', and x' = x - R * (g' + alpha * v'). beta' is beta
/// after the first step (T > 0) and 1 on it. Outputs X'..., V'....
Results importMomentum(NodeContext &c) {
  auto n = tensorCount(c, 3, 2);
  if (failed(n))
    return failure();
  for (const char *name : {"alpha", "beta", "mode", "norm_coefficient"})
    if (!c.hasAttr(name))
      return c.fail(fmt::format("attribute '{}' is required", name));
  double alpha = c.attrFloat("alpha", 0), beta = c.attrFloat("beta", 0);
  double norm = c.attrFloat("norm_coefficient", 0);
  std::string mode = c.attrString("mode", "");
  if (mode != "standard" && mode != "nesterov")
    return c.unsupported("mode '" + mode +
                         "' (expected 'standard' or "
                         "'nesterov')");
  NNBuilder e(c);
  Value r = c.input(0), t = c.input(1);
  SmallVector<Value> xs, vs;
  for (int64_t i = 0; i < *n; ++i) {
    Value x = c.input(2 + i), g = c.input(2 + *n + i),
          v = c.input(2 + 2 * *n + i);
    Value rate = asTypeOf(e, r, x);
    Value gradScale = e.select(afterFirstStep(e, t), e.k(x, beta), e.k(x, 1));
    Value grad = regularized(e, x, g, norm);
    Value vNew = e.add(e.mul(e.k(x, alpha), v), e.mul(gradScale, grad));
    Value step =
        mode == "standard" ? vNew : e.add(grad, e.mul(e.k(x, alpha), vNew));
    xs.push_back(e.sub(x, e.mul(rate, step)));
    vs.push_back(vNew);
  }
  xs.append(vs);
  return e.done(xs);
}

/// Adam: v' = alpha * v + (1 - alpha) * g'; h' = beta * h + (1 - beta) * g'^2;
/// r' = R * sqrt(1 - beta^T) / (1 - alpha^T) after the first step (T > 0),
/// else R; x' = (1 - norm_post) * (x - r' * v' / (sqrt(h') + epsilon)).
/// Outputs X'..., V'..., H'....
Results importAdam(NodeContext &c) {
  auto n = tensorCount(c, 4, 3);
  if (failed(n))
    return failure();
  double alpha = c.attrFloat("alpha", 0.9), beta = c.attrFloat("beta", 0.999);
  double epsilon = c.attrFloat("epsilon", 1e-6);
  double norm = c.attrFloat("norm_coefficient", 0.0);
  double normPost = c.attrFloat("norm_coefficient_post", 0.0);
  NNBuilder e(c);
  Value r = c.input(0), t = c.input(1);
  SmallVector<Value> xs, vs, hs;
  for (int64_t i = 0; i < *n; ++i) {
    Value x = c.input(2 + i), g = c.input(2 + *n + i),
          v = c.input(2 + 2 * *n + i), h = c.input(2 + 3 * *n + i);
    Value grad = regularized(e, x, g, norm);
    Value vNew = e.add(e.mul(e.k(x, alpha), v), e.mul(e.k(x, 1 - alpha), grad));
    Value hNew = e.add(e.mul(e.k(x, beta), h),
                       e.mul(e.k(x, 1 - beta), e.mul(grad, grad)));
    Value rate = asTypeOf(e, r, x), steps = asTypeOf(e, t, x);
    Value one = e.k(x, 1);
    Value corrected =
        e.div(e.mul(rate, e.sqrt(e.sub(one, e.pow(e.k(x, beta), steps)))),
              e.sub(one, e.pow(e.k(x, alpha), steps)));
    rate = e.select(afterFirstStep(e, t), corrected, rate);
    Value scale = e.add(e.sqrt(hNew), e.k(x, epsilon));
    Value xNew = e.sub(x, e.mul(rate, e.div(vNew, scale)));
    xs.push_back(e.mul(e.k(x, 1 - normPost), xNew));
    vs.push_back(vNew);
    hs.push_back(hNew);
  }
  xs.append(vs);
  xs.append(hs);
  return e.done(xs);
}
} // namespace

void mlir::kiln::onnx_import::registerTrainingHandlers(
    llvm::StringMap<OpHandler> &t) {
  t["Adagrad"] = importAdagrad;
  t["Adam"] = importAdam;
  t["Momentum"] = importMomentum;
}
