//===- StringOps.cpp - Verifiers of the kiln string ops -------------------===//
#include "dialects/kiln/KilnOps.h"

using namespace mlir;
using namespace mlir::kiln;

LogicalResult NormalizeStringsOp::verify() {
  auto in = getInput().getType(), out = getResult().getType();
  if (!in.hasStaticShape())
    return emitOpError("takes a string tensor of static shape");
  if (in.getRank() != out.getRank() || in.getRank() < 1 || in.getRank() > 2)
    return emitOpError("takes a [C] or [1, C] string tensor and returns one "
                       "of the same rank");
  if (in.getRank() == 2 && (in.getDimSize(0) != 1 || out.getDimSize(0) != 1))
    return emitOpError("a 2-D input and result must have a first dim of 1");
  int64_t inC = in.getShape().back(), outC = out.getShape().back();
  if (!ShapedType::isDynamic(outC) &&
      (outC < 1 || outC > std::max<int64_t>(inC, 1)))
    return emitOpError("result extent ")
           << outC << " is not between 1 and the input's " << inC;
  StringRef action = getCaseAction();
  if (action != "NONE" && action != "LOWER" && action != "UPPER")
    return emitOpError("case_action must be NONE, LOWER or UPPER, not '")
           << action << "'";
  return success();
}

static LogicalResult verifyStringCast(Operation *op, RankedTensorType in,
                                      RankedTensorType out, Type number) {
  if (!in.hasStaticShape())
    return op->emitOpError("takes a tensor of static shape");
  if (in.getShape() != out.getShape())
    return op->emitOpError("result shape differs from the input's");
  if (!number.isIntOrFloat() ||
      (number.isInteger() &&
       !llvm::is_contained({1u, 8u, 16u, 32u, 64u},
                           number.getIntOrFloatBitWidth())) ||
      (isa<FloatType>(number) && !number.isF16() && !number.isBF16() &&
       !number.isF32() && !number.isF64()))
    return op->emitOpError("converts between strings and a number type "
                           "(f16, bf16, f32, f64, i1, [u]i8-64), not ")
           << number;
  return success();
}

LogicalResult CastToStringOp::verify() {
  return verifyStringCast(*this, getInput().getType(), getResult().getType(),
                          getInput().getType().getElementType());
}

LogicalResult CastFromStringOp::verify() {
  return verifyStringCast(*this, getInput().getType(), getResult().getType(),
                          getResult().getType().getElementType());
}
