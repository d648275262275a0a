//===- KilnOpBuilder.cpp - Building kiln ops in an importer ---------------===//
#include "compiler/import/common/KilnOpBuilder.h"

using namespace mlir;
using namespace mlir::kiln;

Value KilnOpBuilder::constant(ElementsAttr value) {
  return kiln::ConstantOp::create(b, loc, value);
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
                                            (int64_t)value, true)));
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
