//===- ImportElementwise.cpp - Elementwise ONNX ops -----------------------===//
//
// Arithmetic, comparisons, activations, Cast, Where, Constant and the
// identity-like ops (Identity; Dropout is in ImportNNNorm.cpp).
//
//===----------------------------------------------------------------------===//

#include "compiler/import/onnx/NodeContext.h"

#include "onnx/onnx.pb.h"

#include <fmt/format.h>

using namespace mlir;
using namespace mlir::kiln::onnx_import;
namespace k = mlir::kiln;

namespace mlir::kiln::onnx_import {
/// ImportMath.cpp: Mod, BitShift, trigonometry, rounding, IsInf/IsNaN,
/// CastLike.
void registerMathHandlers(llvm::StringMap<OpHandler> &table);
} // namespace mlir::kiln::onnx_import

namespace {
/// Opset < 7 binary ops broadcast only with `broadcast=1`, aligning the rhs
/// at `axis`; reshape the rhs so numpy rules give the same result.
FailureOr<Value> legacyBroadcastRhs(NodeContext &c, Value rhs) {
  if (c.opset >= 7 || !c.attrInt("broadcast", 0) || !c.hasAttr("axis"))
    return rhs;
  int64_t lhsRank = c.type(c.input(0)).getRank();
  auto axis = c.normalizeAxis(c.attrInt("axis", 0), lhsRank);
  auto rhsShape = c.type(rhs).getShape();
  if (!axis || *axis + (int64_t)rhsShape.size() > lhsRank) {
    c.error = "legacy broadcast axis out of range";
    return failure();
  }
  SmallVector<int64_t> shape(rhsShape);
  shape.append(lhsRank - *axis - rhsShape.size(), 1);
  return c.make<k::ReshapeOp>(rhs, {c.named("shape", c.i64s(shape))});
}

template <typename OpTy> OpHandler binary() {
  return [](NodeContext &c) -> Results {
    if (!c.hasInput(0) || !c.hasInput(1))
      return c.fail("needs two inputs");
    auto rhs = legacyBroadcastRhs(c, c.input(1));
    if (failed(rhs))
      return failure();
    return one(c.make<OpTy>({c.input(0), *rhs}));
  };
}

template <typename OpTy> OpHandler unary() {
  return [](NodeContext &c) -> Results {
    if (!c.hasInput(0))
      return c.fail("needs an input");
    return one(c.make<OpTy>(c.input(0)));
  };
}

/// Max/Min/Sum/Mean take any number of inputs.
template <typename OpTy> OpHandler variadic(bool mean = false) {
  return [mean](NodeContext &c) -> Results {
    if (c.numInputs() == 0 || !c.hasInput(0))
      return c.fail("needs at least one input");
    Value acc = c.input(0);
    for (size_t i = 1; i < c.numInputs(); ++i) {
      auto next = c.make<OpTy>({acc, c.input(i)});
      if (failed(next))
        return failure();
      acc = *next;
    }
    if (mean && c.numInputs() > 1) {
      Value n = c.scalar(c.type(acc).getElementType(), (double)c.numInputs());
      return one(c.make<k::DivOp>({acc, n}));
    }
    return one(acc);
  };
}

/// Clip with bounds computed at run time: max then min, with the bound
/// tensors broadcast like any binary op (min > max gives max, as in ONNX).
Results importClipWithTensorBounds(NodeContext &c) {
  Value x = c.input(0);
  for (size_t i : {1, 2}) {
    if (!c.hasInput(i))
      continue;
    if (c.type(c.input(i)).getNumElements() != 1)
      return c.fail(fmt::format("input {} (min/max) must be a scalar", i));
    auto bounded = i == 1 ? c.make<k::MaxOp>({x, c.input(i)})
                          : c.make<k::MinOp>({x, c.input(i)});
    if (failed(bounded))
      return failure();
    x = *bounded;
  }
  return SmallVector<Value>{x};
}

Results importClip(NodeContext &c) {
  std::optional<double> lo, hi;
  if (c.opset < 11) {
    if (c.hasAttr("min"))
      lo = c.attrFloat("min", 0);
    if (c.hasAttr("max"))
      hi = c.attrFloat("max", 0);
  } else {
    for (size_t i : {1, 2}) {
      if (!c.hasInput(i))
        continue;
      auto v = c.constantFloats(i);
      if (!v)
        return importClipWithTensorBounds(c);
      if (v->size() != 1)
        return c.fail(fmt::format("input {} (min/max) must be a scalar", i));
      (i == 1 ? lo : hi) = (*v)[0];
    }
  }
  SmallVector<NamedAttribute> attrs;
  if (lo)
    attrs.push_back(c.named("min", c.b.getF64FloatAttr(*lo)));
  if (hi)
    attrs.push_back(c.named("max", c.b.getF64FloatAttr(*hi)));
  return one(c.make<k::ClipOp>(c.input(0), attrs));
}

Results importCast(NodeContext &c) {
  int64_t to = c.attrInt("to", 0);
  Type type = to == onnx::TensorProto::STRING
                  ? k::StringType::get(c.ctx())
                  : elementTypeFor(c.ctx(), (int32_t)to);
  if (!type)
    return c.unsupported(
        fmt::format("cast to {} is not supported", onnxTypeName((int32_t)to)));
  return castTo(c, c.input(0), type);
}

Results importConstant(NodeContext &c) {
  if (const auto *t = c.attrTensor("value")) {
    std::string error;
    auto attr = convertTensor(c.ctx(), *t, c.modelDir, error);
    if (failed(attr))
      return c.fail(error);
    return SmallVector<Value>{c.constant(*attr)};
  }
  Builder &b = c.b;
  if (c.hasAttr("value_float"))
    return SmallVector<Value>{
        c.scalar(b.getF32Type(), c.attrFloat("value_float", 0))};
  if (c.hasAttr("value_int"))
    return SmallVector<Value>{
        c.scalar(b.getI64Type(), (double)c.attrInt("value_int", 0))};
  if (const auto *a = c.attr("value_floats")) {
    SmallVector<float> v(a->floats().begin(), a->floats().end());
    auto type = RankedTensorType::get({(int64_t)v.size()}, b.getF32Type());
    return SmallVector<Value>{c.constant(
        cast<ElementsAttr>(DenseElementsAttr::get(type, ArrayRef<float>(v))))};
  }
  if (const auto *a = c.attr("value_ints")) {
    SmallVector<int64_t> v(a->ints().begin(), a->ints().end());
    auto type = RankedTensorType::get({(int64_t)v.size()}, b.getI64Type());
    return SmallVector<Value>{c.constant(cast<ElementsAttr>(
        DenseElementsAttr::get(type, ArrayRef<int64_t>(v))))};
  }
  return c.unsupported("only tensor, float(s) and int(s) values are "
                       "supported (not sparse or string)");
}

Results importIdentity(NodeContext &c) {
  return SmallVector<Value>{c.input(0)};
}

Results importLeakyRelu(NodeContext &c) {
  return one(c.make<k::LeakyReluOp>(
      c.input(0),
      {c.named("alpha", c.b.getF64FloatAttr(c.attrFloat("alpha", 0.01)))}));
}

Results importGelu(NodeContext &c) {
  std::string approximate = c.attrString("approximate", "none");
  if (approximate != "none" && approximate != "tanh")
    return c.unsupported("approximate='" + approximate + "'");
  return one(c.make<k::GeluOp>(
      c.input(0),
      {c.named("tanh_approximation", c.b.getBoolAttr(approximate == "tanh"))}));
}

Results importWhere(NodeContext &c) {
  return one(c.make<k::WhereOp>({c.input(0), c.input(1), c.input(2)}));
}
} // namespace

void mlir::kiln::onnx_import::registerElementwiseHandlers(
    llvm::StringMap<OpHandler> &t) {
  t["Add"] = binary<k::AddOp>();
  t["Sub"] = binary<k::SubOp>();
  t["Mul"] = binary<k::MulOp>();
  t["Div"] = binary<k::DivOp>();
  t["Pow"] = binary<k::PowOp>();
  t["Equal"] = binary<k::EqualOp>();
  t["Less"] = binary<k::LessOp>();
  t["Greater"] = binary<k::GreaterOp>();
  t["LessOrEqual"] = binary<k::LessEqualOp>();
  t["GreaterOrEqual"] = binary<k::GreaterEqualOp>();
  // Logical ops on bools; the Bitwise* ops (opset 18) on wider integers.
  t["And"] = binary<k::AndOp>();
  t["Or"] = binary<k::OrOp>();
  t["Xor"] = binary<k::XorOp>();
  t["Not"] = unary<k::NotOp>();
  t["BitwiseAnd"] = binary<k::AndOp>();
  t["BitwiseOr"] = binary<k::OrOp>();
  t["BitwiseXor"] = binary<k::XorOp>();
  t["BitwiseNot"] = unary<k::NotOp>();
  t["Max"] = variadic<k::MaxOp>();
  t["Min"] = variadic<k::MinOp>();
  t["Sum"] = variadic<k::AddOp>();
  t["Mean"] = variadic<k::AddOp>(/*mean=*/true);
  t["Sqrt"] = unary<k::SqrtOp>();
  t["Exp"] = unary<k::ExpOp>();
  t["Log"] = unary<k::LogOp>();
  t["Neg"] = unary<k::NegOp>();
  t["Abs"] = unary<k::AbsOp>();
  t["Reciprocal"] = unary<k::ReciprocalOp>();
  t["Relu"] = unary<k::ReluOp>();
  t["Sigmoid"] = unary<k::SigmoidOp>();
  t["Tanh"] = unary<k::TanhOp>();
  t["Erf"] = unary<k::ErfOp>();
  t["LeakyRelu"] = importLeakyRelu;
  t["Gelu"] = importGelu;
  t["Clip"] = importClip;
  t["Cast"] = importCast;
  t["Where"] = importWhere;
  t["Constant"] = importConstant;
  t["Identity"] = importIdentity;
  registerMathHandlers(t);
  registerWindowHandlers(t);
  registerStringHandlers(t);
}
