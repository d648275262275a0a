//===- ImportMath.cpp - Elementwise math ONNX ops -------------------------===//
//
// Mod, BitShift, trigonometric and rounding functions, IsInf/IsNaN and
// CastLike. IsInf and IsNaN are comparisons against constants (NaN is the
// only value not equal to itself), so they need no kiln op of their own.
//
//===----------------------------------------------------------------------===//

#include "compiler/import/onnx/NodeContext.h"

#include "onnx/onnx.pb.h"

#include <fmt/format.h>

#include <limits>

using namespace mlir;
using namespace mlir::kiln::onnx_import;
namespace k = mlir::kiln;

namespace {
template <typename OpTy> OpHandler unaryMath() {
  return [](NodeContext &c) -> Results {
    if (!c.hasInput(0))
      return c.fail("needs an input");
    return one(c.make<OpTy>(c.input(0)));
  };
}

Results importMod(NodeContext &c) {
  bool fmod = c.attrInt("fmod", 0) != 0;
  return one(c.make<k::ModOp>({c.input(0), c.input(1)},
                              {c.named("fmod", c.b.getBoolAttr(fmod))}));
}

Results importBitShift(NodeContext &c) {
  std::string direction = c.attrString("direction", "");
  if (direction == "LEFT")
    return one(c.make<k::ShiftLeftOp>({c.input(0), c.input(1)}));
  if (direction == "RIGHT")
    return one(c.make<k::ShiftRightOp>({c.input(0), c.input(1)}));
  return c.fail("direction must be LEFT or RIGHT, got '" + direction + "'");
}

Results importIsNaN(NodeContext &c) {
  Value x = c.input(0);
  auto same = c.make<k::EqualOp>({x, x});
  if (failed(same))
    return failure();
  return one(c.make<k::NotOp>(*same));
}

Results importIsInf(NodeContext &c) {
  Value x = c.input(0);
  Type elementType = c.type(x).getElementType();
  if (!isa<FloatType>(elementType))
    return c.fail("needs a float input");
  bool positive = c.attrInt("detect_positive", 1) != 0;
  bool negative = c.attrInt("detect_negative", 1) != 0;
  double inf = std::numeric_limits<double>::infinity();
  std::optional<Value> result;
  for (auto [detect, value] : {std::pair(positive, inf), {negative, -inf}}) {
    if (!detect)
      continue;
    auto hit = c.make<k::EqualOp>({x, c.scalar(elementType, value)});
    if (failed(hit))
      return failure();
    if (result) {
      hit = c.make<k::OrOp>({*result, *hit});
      if (failed(hit))
        return failure();
    }
    result = *hit;
  }
  if (result)
    return SmallVector<Value>{*result};
  // Neither sign detected: all false.
  auto type = c.type(x).clone(c.b.getI1Type());
  return SmallVector<Value>{
      c.constant(cast<ElementsAttr>(DenseElementsAttr::get(type, false)))};
}

Results importCastLike(NodeContext &c) {
  if (!c.hasInput(0) || !c.hasInput(1))
    return c.fail("needs two inputs");
  return castTo(c, c.input(0), c.type(c.input(1)).getElementType());
}
} // namespace

void mlir::kiln::onnx_import::registerMathHandlers(
    llvm::StringMap<OpHandler> &t) {
  t["Mod"] = importMod;
  t["BitShift"] = importBitShift;
  t["IsNaN"] = importIsNaN;
  t["IsInf"] = importIsInf;
  t["CastLike"] = importCastLike;
  t["Sin"] = unaryMath<k::SinOp>();
  t["Cos"] = unaryMath<k::CosOp>();
  t["Tan"] = unaryMath<k::TanOp>();
  t["Asin"] = unaryMath<k::AsinOp>();
  t["Acos"] = unaryMath<k::AcosOp>();
  t["Atan"] = unaryMath<k::AtanOp>();
  t["Sinh"] = unaryMath<k::SinhOp>();
  t["Cosh"] = unaryMath<k::CoshOp>();
  t["Asinh"] = unaryMath<k::AsinhOp>();
  t["Acosh"] = unaryMath<k::AcoshOp>();
  t["Atanh"] = unaryMath<k::AtanhOp>();
  t["Ceil"] = unaryMath<k::CeilOp>();
  t["Floor"] = unaryMath<k::FloorOp>();
  t["Round"] = unaryMath<k::RoundOp>();
}
