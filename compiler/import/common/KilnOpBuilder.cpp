//===- KilnOpBuilder.cpp - Building kiln ops in an importer ---------------===//
#include "compiler/import/common/KilnOpBuilder.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::kiln;

Value KilnOpBuilder::constant(ElementsAttr value) {
  return kiln::ConstantOp::create(b, loc, value);
}

/// `value` toward zero as an int64, saturated (NaN as 0): a model's
/// attribute may be any double, and converting one out of range is
/// undefined (the onnx_pipeline fuzzer found a Celu alpha of 2.7e36 on an
/// integer tensor).
static int64_t saturatingInt(double value) {
  if (std::isnan(value))
    return 0;
  if (value >= 0x1p63)
    return std::numeric_limits<int64_t>::max();
  if (value < -0x1p63)
    return std::numeric_limits<int64_t>::min();
  return (int64_t)value;
}

Value KilnOpBuilder::scalar(Type elementType, double value) {
  auto type = RankedTensorType::get({}, elementType);
  Attribute attr;
  if (isa<FloatType>(elementType))
    attr = DenseElementsAttr::get(type, FloatAttr::get(elementType, value));
  else
    attr = DenseElementsAttr::get(
        type,
        IntegerAttr::get(elementType, APInt(elementType.getIntOrFloatBitWidth(),
                                            saturatingInt(value), true)));
  return constant(cast<ElementsAttr>(attr));
}

Value KilnOpBuilder::foldOrKeep(Operation *op) {
  SmallVector<Value> folded;
  if (succeeded(b.tryFold(op, folded)) && folded.size() == 1 &&
      folded[0] != op->getResult(0) &&
      folded[0].getType() == op->getResult(0).getType()) {
    op->erase();
    return folded[0];
  }
  return op->getResult(0);
}
