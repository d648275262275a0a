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

#include <cstdint>
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

/// The elements of a constant (through reshapes and casts to a float type)
/// as doubles, row-major:
/// f32, and 8- or 32-bit integers of either signedness.
std::optional<std::vector<double>> constantValues(Value v);

/// matchDequantize of 8-bit integers.
std::optional<Dequantized> matchByteDequantize(Value v);

/// The values of a constant (through reshapes) as f32: `count` of them, or
/// a single element repeated.
std::optional<std::vector<float>> constantFloats(Value v, int64_t count);

/// Whether `v` is a constant (through reshapes and casts) whose elements are
/// all zero: the weights' zero point, usually a dense_resource per column.
bool isZeroConstant(Value v);

} // namespace mlir::kiln

#endif // KILN_PASSES_GRAPH_DEQUANTIZE_H
