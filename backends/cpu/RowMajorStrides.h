//===- RowMajorStrides.h - Strides of a contiguous memref -*- C++ -*-------===//
#ifndef KILN_BACKENDS_CPU_ROWMAJORSTRIDES_H
#define KILN_BACKENDS_CPU_ROWMAJORSTRIDES_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpDefinition.h"

namespace mlir::kiln {

/// The row-major strides of a memref with extents `sizes`: constants while
/// the extents to the right are constants (as an identity layout's type
/// requires), index arithmetic after the first run-time extent.
SmallVector<OpFoldResult> rowMajorStrides(OpBuilder &b, Location loc,
                                          ArrayRef<OpFoldResult> sizes);

} // namespace mlir::kiln

#endif // KILN_BACKENDS_CPU_ROWMAJORSTRIDES_H
