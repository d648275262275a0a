//===- ImportGradient.cpp - ai.onnx.preview.training Gradient -------------===//
//
// Gradient(xs, y) computes dy/dx for each x in xs from the part of the graph
// before it that leads from the xs to y, by reverse-mode differentiation at
// import time: the seed dy is ones of y's shape (the gradient of the sum of
// y's elements), and each node on a path from an x to y, walked from y back
// to the xs, adds its inputs' gradients in kiln elementwise ops:
//
//   c = Add(a, b); d = Mul(c, a); Gradient(xs=[a, b], y=d)
//   dd = 1;  dc = dd * a;  da = dd * c + dc;  db = dc
//
// A gradient of a broadcast operand is summed over the broadcast dims. The
// rules cover Add, Sub, Mul, Div, Neg and Identity; any other op on a path
// is reported as unsupported, naming it. An x with no path to y gets zeros.
//
//===----------------------------------------------------------------------===//

#include "compiler/import/onnx/ImportNNBuilder.h"

#include "onnx/onnx.pb.h"

#include <fmt/format.h>
#include <map>
#include <set>

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::onnx_import;

namespace {
/// `g` summed over the dims along which `shape` was broadcast to g's shape.
Value unbroadcast(NNBuilder &e, Value g, ArrayRef<int64_t> shape) {
  if (!g || e.shape(g) == shape)
    return g;
  int64_t extra = e.rank(g) - (int64_t)shape.size();
  SmallVector<int64_t> axes;
  for (int64_t d = 0; d < e.rank(g); ++d)
    if (d < extra || (shape[d - extra] == 1 && e.shape(g)[d] != 1))
      axes.push_back(d);
  Value summed = axes.empty() ? g : e.reduceSum(g, axes, /*keepdims=*/true);
  return e.reshape(summed, shape);
}

/// The gradients of `node`'s inputs given `g`, the gradient of its only
/// output; null entries for inputs that get none.
FailureOr<SmallVector<Value>> backward(NodeContext &c, NNBuilder &e,
                                       const onnx::NodeProto &node, Value g) {
  SmallVector<Value> in;
  for (const std::string &name : node.input()) {
    Value v = c.valueOf ? c.valueOf(name) : Value();
    if (!v) {
      c.error = fmt::format("input '{}' of node '{}' is not a known tensor",
                            name, node.name());
      return failure();
    }
    in.push_back(v);
  }
  const std::string &op = node.op_type();
  auto arity = [&](size_t n) { return in.size() == n; };
  if (op == "Identity" && arity(1))
    return SmallVector<Value>{g};
  if (op == "Neg" && arity(1))
    return SmallVector<Value>{e.neg(g)};
  if (op == "Add" && arity(2))
    return SmallVector<Value>{g, g};
  if (op == "Sub" && arity(2))
    return SmallVector<Value>{g, e.neg(g)};
  if (op == "Mul" && arity(2))
    return SmallVector<Value>{e.mul(g, in[1]), e.mul(g, in[0])};
  if (op == "Div" && arity(2)) {
    Value da = e.div(g, in[1]);
    // d(a/b)/db = -a/b^2 = -(a/b)/b
    Value db = e.neg(e.div(e.mul(g, e.div(in[0], in[1])), in[1]));
    return SmallVector<Value>{da, db};
  }
  (void)c.unsupported(fmt::format("no derivative rule for op '{}' (node "
                                  "'{}') on the path from xs to y",
                                  op, node.name()));
  return failure();
}

Results importGradient(NodeContext &c) {
  const auto *xsAttr = c.attr("xs");
  std::string y = c.attrString("y", "");
  if (!xsAttr || y.empty())
    return c.fail("attributes xs and y are required");
  if (!c.graph)
    return c.fail("needs the enclosing graph");
  SmallVector<std::string> xs(xsAttr->strings().begin(),
                              xsAttr->strings().end());
  if (c.numOutputs() != xs.size())
    return c.fail(
        fmt::format("has {} outputs for {} xs", c.numOutputs(), xs.size()));

  // The nodes before this one that depend on an x.
  std::set<std::string> reached(xs.begin(), xs.end());
  SmallVector<const onnx::NodeProto *> onPath;
  for (size_t i = 0; i < c.nodeIndex; ++i) {
    const onnx::NodeProto &node = c.graph->node(i);
    if (llvm::none_of(node.input(),
                      [&](const std::string &n) { return reached.count(n); }))
      continue;
    onPath.push_back(&node);
    for (const std::string &out : node.output())
      reached.insert(out);
  }
  Value yValue = c.valueOf ? c.valueOf(y) : Value();
  if (!yValue)
    return c.fail(fmt::format("y '{}' is not computed before the node", y));

  NNBuilder e(c);
  std::map<std::string, Value> grads;
  grads[y] = e.splat(e.shape(yValue), e.elementType(yValue), 1.0);
  for (const onnx::NodeProto *node : llvm::reverse(onPath)) {
    if (llvm::none_of(node->output(),
                      [&](const std::string &n) { return grads.count(n); }))
      continue;
    if (node->output_size() != 1)
      return c.unsupported(fmt::format("no derivative rule for op '{}' (node "
                                       "'{}') on the path from xs to y",
                                       node->op_type(), node->name()));
    auto inputGrads = backward(c, e, *node, grads[node->output(0)]);
    if (failed(inputGrads))
      return failure();
    for (auto [name, g] : llvm::zip_equal(node->input(), *inputGrads)) {
      if (!g || !reached.count(name))
        continue;
      g = unbroadcast(e, g, e.shape(c.valueOf(name)));
      auto [it, fresh] = grads.try_emplace(name, g);
      if (!fresh)
        it->second = e.add(it->second, g);
    }
  }
  SmallVector<Value> results;
  for (const std::string &x : xs) {
    Value xValue = c.valueOf(x);
    if (!xValue)
      return c.fail(fmt::format("x '{}' is not a known tensor", x));
    auto it = grads.find(x);
    results.push_back(it != grads.end() ? it->second
                                        : e.splat(e.shape(xValue),
                                                  e.elementType(xValue), 0.0));
  }
  return e.done(results);
}
} // namespace

void mlir::kiln::onnx_import::registerGradientHandlers(
    llvm::StringMap<OpHandler> &t) {
  t["Gradient"] = importGradient;
}
