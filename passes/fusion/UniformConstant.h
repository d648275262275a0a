//===- UniformConstant.h - Scalars that constants spell ---------*- C++ -*-===//
//
// Exporters spell scalars (a softmax scale, a layer norm's epsilon, the 2 of
// a square) as constants of any shape or as small expressions of constants
// computed from Shape. The fusion matchers evaluate them here rather than
// relying on the folders having run.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PASSES_FUSION_UNIFORMCONSTANT_H
#define KILN_PASSES_FUSION_UNIFORMCONSTANT_H

#include "mlir/IR/Value.h"

#include <optional>

namespace mlir::kiln {

/// The value of every element of `v` if they are all equal and computable
/// at compile time from constants through a few scalar ops.
std::optional<double> uniformConstant(Value v, int depth = 0);

} // namespace mlir::kiln

#endif // KILN_PASSES_FUSION_UNIFORMCONSTANT_H
