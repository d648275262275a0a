//===- ImportActivations.cpp - Activations composed of kiln ops -----------===//
//
// ONNX activations with no kiln op of their own, written as the elementwise
// kiln ops they are defined by (the ONNX spec's formulas). Elementwise fusion
// in the backend turns each back into one loop.
//
//===----------------------------------------------------------------------===//

#include "compiler/import/onnx/NodeContext.h"

#include "onnx/onnx.pb.h"

using namespace mlir;
using namespace mlir::kiln::onnx_import;
namespace k = mlir::kiln;

namespace {
using Results = FailureOr<SmallVector<Value>>;

/// A little expression builder: each call builds one kiln op and threads
/// failure through, so the formulas below read like the spec.
struct Expr {
  NodeContext &c;
  bool failed = false;
  Value x() { return c.input(0); }
  Value k(double v) { return c.scalar(c.type(x()).getElementType(), v); }
  template <typename OpTy> Value op(ValueRange operands) {
    if (failed)
      return Value();
    for (Value v : operands)
      if (!v)
        return failed = true, Value();
    auto r = c.make<OpTy>(operands);
    if (mlir::failed(r))
      return failed = true, Value();
    return *r;
  }
  Value add(Value a, Value b) { return op<k::AddOp>({a, b}); }
  Value sub(Value a, Value b) { return op<k::SubOp>({a, b}); }
  Value mul(Value a, Value b) { return op<k::MulOp>({a, b}); }
  Value div(Value a, Value b) { return op<k::DivOp>({a, b}); }
  Value exp(Value a) { return op<k::ExpOp>({a}); }
  Value log(Value a) { return op<k::LogOp>({a}); }
  Value abs(Value a) { return op<k::AbsOp>({a}); }
  Value less(Value a, Value b) { return op<k::LessOp>({a, b}); }
  Value greater(Value a, Value b) { return op<k::GreaterOp>({a, b}); }
  Value select(Value c, Value a, Value b) { return op<k::WhereOp>({c, a, b}); }
  Results done(Value v) {
    if (failed || !v)
      return failure();
    return SmallVector<Value>{v};
  }
};

Results importElu(NodeContext &c) {
  Expr e{c};
  double alpha = c.attrFloat("alpha", 1.0);
  Value neg = e.mul(e.k(alpha), e.sub(e.exp(e.x()), e.k(1)));
  return e.done(e.select(e.less(e.x(), e.k(0)), neg, e.x()));
}

Results importSelu(NodeContext &c) {
  Expr e{c};
  double alpha = c.attrFloat("alpha", 1.67326319217681884765625);
  double gamma = c.attrFloat("gamma", 1.05070102214813232421875);
  Value neg = e.mul(e.k(alpha), e.sub(e.exp(e.x()), e.k(1)));
  Value y = e.select(e.greater(e.x(), e.k(0)), e.x(), neg);
  return e.done(e.mul(e.k(gamma), y));
}

Results importSoftplus(NodeContext &c) {
  // log(1 + exp(x)) = max(x, 0) + log(1 + exp(-|x|)), which never overflows.
  Expr e{c};
  Value tail = e.log(e.add(e.k(1), e.exp(e.sub(e.k(0), e.abs(e.x())))));
  return e.done(e.add(e.op<k::ReluOp>({e.x()}), tail));
}

Results importSoftsign(NodeContext &c) {
  Expr e{c};
  return e.done(e.div(e.x(), e.add(e.k(1), e.abs(e.x()))));
}

Results importPRelu(NodeContext &c) {
  Expr e{c};
  Value slope = c.input(1);
  auto xType = c.type(e.x()), sType = c.type(slope);
  // Opset < 7 PRelu aligns a [C] slope with axis 1, not the last axis.
  if (c.opset < 7 && sType.getRank() == 1 && xType.getRank() > 2 &&
      sType.getDimSize(0) == xType.getDimSize(1)) {
    SmallVector<int64_t> shape(xType.getRank() - 1, 1);
    shape[0] = sType.getDimSize(0);
    auto r = c.make<k::ReshapeOp>(slope, {c.named("shape", c.i64s(shape))});
    if (failed(r))
      return failure();
    slope = *r;
  }
  return e.done(e.select(e.less(e.x(), e.k(0)), e.mul(slope, e.x()), e.x()));
}

Results importSign(NodeContext &c) {
  Expr e{c};
  Value negOrZero = e.select(e.less(e.x(), e.k(0)), e.k(-1), e.k(0));
  return e.done(e.select(e.greater(e.x(), e.k(0)), e.k(1), negOrZero));
}

Results importShrink(NodeContext &c) {
  Expr e{c};
  double lambd = c.attrFloat("lambd", 0.5), bias = c.attrFloat("bias", 0.0);
  Value low =
      e.select(e.less(e.x(), e.k(-lambd)), e.add(e.x(), e.k(bias)), e.k(0));
  return e.done(
      e.select(e.greater(e.x(), e.k(lambd)), e.sub(e.x(), e.k(bias)), low));
}

Results importHardSigmoid(NodeContext &c) {
  Expr e{c};
  double alpha = c.attrFloat("alpha", 0.2), beta = c.attrFloat("beta", 0.5);
  Value y = e.add(e.mul(e.k(alpha), e.x()), e.k(beta));
  if (e.failed)
    return failure();
  auto clipped = c.make<k::ClipOp>(y, {c.named("min", c.b.getF64FloatAttr(0)),
                                       c.named("max", c.b.getF64FloatAttr(1))});
  return e.done(failed(clipped) ? Value() : *clipped);
}

Results importHardSwish(NodeContext &c) {
  Expr e{c};
  Value y = e.add(e.mul(e.k(1.0 / 6), e.x()), e.k(0.5));
  if (e.failed)
    return failure();
  auto clipped = c.make<k::ClipOp>(y, {c.named("min", c.b.getF64FloatAttr(0)),
                                       c.named("max", c.b.getF64FloatAttr(1))});
  return e.done(failed(clipped) ? Value() : e.mul(e.x(), *clipped));
}

Results importThresholdedRelu(NodeContext &c) {
  Expr e{c};
  double alpha = c.attrFloat("alpha", 1.0);
  return e.done(e.select(e.greater(e.x(), e.k(alpha)), e.x(), e.k(0)));
}

Results importCelu(NodeContext &c) {
  Expr e{c};
  double alpha = c.attrFloat("alpha", 1.0);
  Value neg = e.mul(e.k(alpha), e.sub(e.exp(e.div(e.x(), e.k(alpha))), e.k(1)));
  return e.done(e.select(e.less(e.x(), e.k(0)), neg, e.x()));
}
} // namespace

void mlir::kiln::onnx_import::registerActivationHandlers(
    llvm::StringMap<OpHandler> &t) {
  t["Elu"] = importElu;
  t["Selu"] = importSelu;
  t["Softplus"] = importSoftplus;
  t["Softsign"] = importSoftsign;
  t["PRelu"] = importPRelu;
  t["Sign"] = importSign;
  t["Shrink"] = importShrink;
  t["HardSigmoid"] = importHardSigmoid;
  t["HardSwish"] = importHardSwish;
  t["ThresholdedRelu"] = importThresholdedRelu;
  t["Celu"] = importCelu;
}
