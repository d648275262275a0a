//===- KilnOpBuilder.cpp - Building kiln ops in an importer ---------------===//
#include "compiler/import/common/KilnOpBuilder.h"

#include "llvm/ADT/APSInt.h"

#include <cmath>

using namespace mlir;
using namespace mlir::kiln;

Value KilnOpBuilder::constant(ElementsAttr value) {
  return kiln::ConstantOp::create(b, loc, value);
}

/// `value` toward zero as an integer of `type`, saturated to its range (NaN
/// as 0; bools as 0 or 1): a model's attribute may be any double, and
/// converting one out of range is undefined (the onnx_pipeline fuzzer
/// found a Celu alpha of 2.7e36 on an integer tensor).
static APInt saturatingInt(Type type, double value) {
  unsigned width = type.getIntOrFloatBitWidth();
  if (width == 1)
    return APInt(1, value != 0 && !std::isnan(value));
  APSInt result(width, /*isUnsigned=*/type.isUnsignedInteger());
  bool exact;
  APFloat(value).convertToInteger(result, APFloat::rmTowardZero, &exact);
  return result;
}

Value KilnOpBuilder::scalar(Type elementType, double value) {
  auto type = RankedTensorType::get({}, elementType);
  Attribute attr;
  if (isa<FloatType>(elementType))
    attr = DenseElementsAttr::get(type, FloatAttr::get(elementType, value));
  else
    attr = DenseElementsAttr::get(
        type, IntegerAttr::get(elementType, saturatingInt(elementType, value)));
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
