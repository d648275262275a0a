//===- UniformConstant.cpp - Scalars that constants spell -----------------===//
#include "passes/fusion/UniformConstant.h"

#include "dialects/kiln/KilnOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"

#include <cmath>

using namespace mlir;
using namespace mlir::kiln;

namespace {
std::optional<double> attributeScalar(Attribute attr) {
  if (auto f = dyn_cast<FloatAttr>(attr))
    return f.getValueAsDouble();
  if (auto i = dyn_cast<IntegerAttr>(attr))
    return double(i.getValue().getSExtValue());
  return std::nullopt;
}
} // namespace

std::optional<double> mlir::kiln::uniformConstant(Value v, int depth) {
  Operation *op = v.getDefiningOp();
  if (!op || depth > 12)
    return std::nullopt;
  ElementsAttr attr;
  if (matchPattern(v, m_Constant(&attr))) {
    auto dense = dyn_cast<DenseElementsAttr>(attr);
    if (!dense)
      return std::nullopt;
    if (dense.isSplat())
      return attributeScalar(dense.getSplatValue<Attribute>());
    if (dense.getNumElements() > 64)
      return std::nullopt;
    std::optional<double> first;
    for (Attribute element : dense.getValues<Attribute>()) {
      std::optional<double> x = attributeScalar(element);
      if (!x || (first && *first != *x))
        return std::nullopt;
      first = x;
    }
    return first;
  }
  auto operand = [&](unsigned i) {
    return uniformConstant(op->getOperand(i), depth + 1);
  };
  if (isa<SqrtOp, ReciprocalOp, NegOp, CastOp, ReshapeOp, ExpandOp,
          DynamicExpandOp>(op)) {
    std::optional<double> x = operand(0);
    if (!x)
      return std::nullopt;
    if (isa<SqrtOp>(op))
      return std::sqrt(*x);
    if (isa<ReciprocalOp>(op))
      return 1.0 / *x;
    if (isa<NegOp>(op))
      return -*x;
    return x; // casts of shape arithmetic to float are exact here
  }
  if (isa<MulOp, DivOp, AddOp, SubOp, PowOp>(op)) {
    std::optional<double> a = operand(0), b = operand(1);
    if (!a || !b)
      return std::nullopt;
    if (isa<MulOp>(op))
      return *a * *b;
    if (isa<AddOp>(op))
      return *a + *b;
    if (isa<SubOp>(op))
      return *a - *b;
    if (isa<PowOp>(op)) // torch's `d ** 0.5`
      return std::pow(*a, *b);
    return *a / *b;
  }
  return std::nullopt;
}
