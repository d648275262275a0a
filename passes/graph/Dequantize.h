//===- Dequantize.h - DequantizeLinear as the importer composes it -*- C++
//-*-===//
//
// The ONNX importer writes DequantizeLinear as `(cast(q) - zero_point) *
// scale` (compiler/import/onnx/ImportQuant.cpp). The passes that handle
// quantized models (kiln-fuse-quantized-matmul, kiln-fold-dequantized-
// weights) match that chain and read its constants through these helpers.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PASSES_GRAPH_DEQUANTIZE_H
#define KILN_PASSES_GRAPH_DEQUANTIZE_H

#include "mlir/IR/Value.h"

#include <optional>
#include <vector>

namespace mlir::kiln {

struct Dequantized {
  Value quantized; ///< the integer tensor
  Value zeroPoint; ///< null when there is no subtraction
  Value scale;
};

/// `v` = (cast(q) [- zero_point]) * scale, the multiply's operands in either
/// order, q of an integer element type and cast(q) of `v`'s type.
std::optional<Dequantized> matchDequantize(Value v);

/// The elements of a constant (through reshapes) as doubles, row-major:
/// f32, and 8- or 32-bit integers of either signedness.
std::optional<std::vector<double>> constantValues(Value v);

} // namespace mlir::kiln

#endif // KILN_PASSES_GRAPH_DEQUANTIZE_H
