//===- QuantizedContraction.h - The int8 contraction marker ------*- C++
//-*-===//
//
// kiln.quantized_matmul lowers to a linalg.generic over 8-bit operands with
// an f32 accumulator (passes/lowering/QuantizedMatmul.cpp) and marks it, so
// the CPU backend can give it the VNNI micro-kernel without re-deriving the
// integer semantics from its body.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_DIALECTS_KILN_QUANTIZEDCONTRACTION_H
#define KILN_DIALECTS_KILN_QUANTIZEDCONTRACTION_H

#include "llvm/ADT/StringRef.h"

namespace mlir::kiln {
/// On the linalg.generic computing acc + sitofp(ext(a) * extsi(b)) over
/// (m, n, k) with i8 operands: a BoolAttr, true when `a` is unsigned.
constexpr llvm::StringLiteral kInt8ContractionAttr = "kiln.int8_contraction";
} // namespace mlir::kiln

#endif // KILN_DIALECTS_KILN_QUANTIZEDCONTRACTION_H
