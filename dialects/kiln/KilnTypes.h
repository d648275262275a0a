//===- KilnTypes.h - Types of the kiln graph dialect ------------*- C++ -*-===//
#ifndef KILN_DIALECTS_KILN_KILNTYPES_H
#define KILN_DIALECTS_KILN_KILNTYPES_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Types.h"

#define GET_TYPEDEF_CLASSES
#include "dialects/kiln/KilnTypes.h.inc"

#endif // KILN_DIALECTS_KILN_KILNTYPES_H
