//===- KilnDialect.cpp - The kiln graph dialect ---------------------------===//
#include "dialects/kiln/KilnDialect.h"
#include "dialects/kiln/KilnOps.h"

#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::kiln;

#include "dialects/kiln/KilnDialect.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "dialects/kiln/KilnTypes.cpp.inc"

void KilnDialect::initialize() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "dialects/kiln/KilnTypes.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "dialects/kiln/KilnOps.cpp.inc"
      >();
}

Operation *KilnDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                            Type type, Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return ConstantOp::create(builder, loc, elements);
}
