//===- KilnOps.cpp - Verifiers of kiln ops ---------------------------------===//
//
// Result types are inferred and checked in ShapeInference.cpp; folders live in
// Folders.cpp. This file holds the remaining verifiers and the generated
// op definitions.
//
//===----------------------------------------------------------------------===//

#include "dialects/kiln/KilnOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace mlir::kiln;

namespace {
LogicalResult verifyAxis(Operation *op, int64_t axis, Type type) {
  int64_t rank = cast<RankedTensorType>(type).getRank();
  if (axis < 0 || axis >= rank)
    return op->emitOpError() << "axis " << axis << " out of range for rank "
                             << rank;
  return success();
}
} // namespace

LogicalResult SoftmaxOp::verify() {
  return verifyAxis(*this, getAxis(), getInput().getType());
}

LogicalResult LogSoftmaxOp::verify() {
  return verifyAxis(*this, getAxis(), getInput().getType());
}

#define GET_OP_CLASSES
#include "dialects/kiln/KilnOps.cpp.inc"
