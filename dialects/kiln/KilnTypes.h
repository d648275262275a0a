//===- KilnTypes.h - Types of the kiln graph dialect ------------*- C++ -*-===//
#ifndef KILN_DIALECTS_KILN_KILNTYPES_H
#define KILN_DIALECTS_KILN_KILNTYPES_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Types.h"

#define GET_TYPEDEF_CLASSES
#include "dialects/kiln/KilnTypes.h.inc"

namespace mlir::kiln {
/// The runtime ABI's dtype code (kiln_dtype in kiln/abi.h, ONNX's
/// TensorProto numbering) of a kiln element type: signless iN is signed,
/// uiN unsigned, i1 bool, !kiln.string string; 0 (undefined) for any other
/// type.
int32_t abiDtypeOf(Type type);
} // namespace mlir::kiln

#endif // KILN_DIALECTS_KILN_KILNTYPES_H
