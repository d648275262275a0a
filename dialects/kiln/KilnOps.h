//===- KilnOps.h - Ops of the kiln graph dialect ----------------*- C++ -*-===//
#ifndef KILN_DIALECTS_KILN_KILNOPS_H
#define KILN_DIALECTS_KILN_KILNOPS_H

#include "dialects/kiln/KilnDialect.h"
#include "dialects/kiln/KilnTypes.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "dialects/kiln/KilnOps.h.inc"

namespace mlir::kiln {

/// Numpy-style broadcast of two static shapes; failure if incompatible.
FailureOr<SmallVector<int64_t>> broadcastShapes(ArrayRef<int64_t> a,
                                                ArrayRef<int64_t> b);

/// Output length of a strided window over `in` padded by `padBegin`+`padEnd`,
/// as ONNX Conv/Pool compute it (floor, or ceil with ONNX's last-window rule).
int64_t windowOutputSize(int64_t in, int64_t kernel, int64_t stride,
                         int64_t dilation, int64_t padBegin, int64_t padEnd,
                         bool ceilMode);

/// Number of elements a normalized slice (see kiln.slice) selects.
int64_t sliceSize(int64_t start, int64_t end, int64_t step);

} // namespace mlir::kiln

#endif // KILN_DIALECTS_KILN_KILNOPS_H
