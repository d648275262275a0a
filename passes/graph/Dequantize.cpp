//===- Dequantize.cpp - DequantizeLinear as the importer composes it ------===//
#include "passes/graph/Dequantize.h"
#include "passes/graph/ConstantBytes.h"

#include "dialects/kiln/KilnOps.h"
#include "mlir/IR/Matchers.h"

#include <cstring>

using namespace mlir;
using namespace mlir::kiln;

std::optional<Dequantized> mlir::kiln::matchDequantize(Value v) {
  auto mul = v.getDefiningOp<MulOp>();
  if (!mul)
    return std::nullopt;
  for (unsigned i = 0; i < 2; ++i) {
    Value x = mul->getOperand(i), scale = mul->getOperand(1 - i);
    if (x.getType() != v.getType())
      continue;
    Value zeroPoint;
    if (auto sub = x.getDefiningOp<SubOp>()) {
      zeroPoint = sub.getRhs();
      x = sub.getLhs();
    }
    auto castOp = x.getDefiningOp<CastOp>();
    if (!castOp || x.getType() != v.getType() ||
        !isa<IntegerType>(cast<RankedTensorType>(castOp.getInput().getType())
                              .getElementType()))
      continue;
    return Dequantized{castOp.getInput(), zeroPoint, scale};
  }
  return std::nullopt;
}

std::optional<std::vector<double>> mlir::kiln::constantValues(Value v) {
  while (auto reshape = v.getDefiningOp<ReshapeOp>())
    v = reshape.getInput();
  ElementsAttr attr;
  if (!matchPattern(v, m_Constant(&attr)))
    return std::nullopt;
  std::optional<std::vector<char>> bytes = constantBytes(attr);
  if (!bytes)
    return std::nullopt;
  Type element = attr.getShapedType().getElementType();
  auto integer = dyn_cast<IntegerType>(element);
  int64_t n = attr.getShapedType().getNumElements();
  std::vector<double> values(n);
  if (element.isF32()) {
    for (int64_t i = 0; i < n; ++i) {
      float x;
      std::memcpy(&x, bytes->data() + 4 * i, 4);
      values[i] = x;
    }
    return values;
  }
  if (!integer || (integer.getWidth() != 8 && integer.getWidth() != 32))
    return std::nullopt;
  for (int64_t i = 0; i < n; ++i) {
    if (integer.getWidth() == 8) {
      char c = (*bytes)[i];
      values[i] = integer.isUnsigned() ? double(uint8_t(c)) : double(int8_t(c));
    } else {
      int32_t x;
      std::memcpy(&x, bytes->data() + 4 * i, 4);
      values[i] = integer.isUnsigned() ? double(uint32_t(x)) : double(x);
    }
  }
  return values;
}
