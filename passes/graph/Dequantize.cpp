//===- Dequantize.cpp - DequantizeLinear as the importer composes it ------===//
#include "passes/graph/Dequantize.h"
#include "passes/graph/ConstantBytes.h"

#include "dialects/kiln/KilnOps.h"
#include "mlir/IR/Matchers.h"

#include <cmath>
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
  // Through reshapes, and casts of integers to f32 (a zero point cast to
  // the scale's type), whose values must then be exact in f32.
  bool intToF32 = false;
  while (Operation *def = v.getDefiningOp()) {
    auto castOp = dyn_cast<CastOp>(def);
    bool exactCast =
        castOp && castOp.getType().getElementType().isF32() &&
        isa<IntegerType>(cast<RankedTensorType>(castOp.getInput().getType())
                             .getElementType());
    if (!isa<ReshapeOp>(def) && !exactCast)
      break;
    intToF32 |= exactCast;
    v = def->getOperand(0);
  }
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
  if (intToF32 && llvm::any_of(values, [](double x) {
        return std::abs(x) > double(1 << 24);
      }))
    return std::nullopt; // not exact in f32
  return values;
}

std::optional<Dequantized> mlir::kiln::matchByteDequantize(Value v) {
  std::optional<Dequantized> dq = matchDequantize(v);
  if (!dq || !cast<RankedTensorType>(dq->quantized.getType())
                  .getElementType()
                  .isInteger(8))
    return std::nullopt;
  return dq;
}

std::optional<std::vector<float>> mlir::kiln::constantFloats(Value v,
                                                             int64_t count) {
  std::optional<std::vector<double>> values = constantValues(v);
  if (!values || (values->size() != 1 && int64_t(values->size()) != count))
    return std::nullopt;
  std::vector<float> floats(count);
  for (int64_t i = 0; i < count; ++i)
    floats[i] = float((*values)[values->size() == 1 ? 0 : i]);
  return floats;
}

bool mlir::kiln::isZeroConstant(Value v) {
  while (Operation *op = v.getDefiningOp()) {
    if (!isa<ReshapeOp, CastOp>(op))
      break;
    v = op->getOperand(0);
  }
  ElementsAttr attr;
  if (!matchPattern(v, m_Constant(&attr)))
    return false;
  std::optional<std::vector<char>> bytes = constantBytes(attr);
  return bytes && llvm::all_of(*bytes, [](char c) { return c == 0; });
}
