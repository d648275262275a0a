//===- ConstantBytes.h - Raw bytes of kiln constants ------------*- C++ -*-===//
//
// Weights are folded with plain C++ on their bytes: reading a dense or
// dense_resource constant as a byte vector, and making a dense_resource
// constant from bytes. Never per-element attributes.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PASSES_GRAPH_CONSTANTBYTES_H
#define KILN_PASSES_GRAPH_CONSTANTBYTES_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"

#include <optional>
#include <vector>

namespace mlir::kiln {
/// Row-major little-endian bytes of a constant (not i1), splats expanded.
std::optional<std::vector<char>> constantBytes(ElementsAttr attr);
/// A dense_resource constant of `type` holding `bytes`.
ElementsAttr bytesToConstant(RankedTensorType type, StringRef name,
                             ArrayRef<char> bytes);
/// f32 -> bf16 bits, rounding to nearest even (NaN stays a quiet NaN).
uint16_t toBf16(float x);
/// An f32 constant with its values rounded to nearest even in `narrow`
/// (bf16 or f16), as a dense_resource constant named `name`; nullopt for
/// other element types or unreadable data.
std::optional<ElementsAttr> narrowConstant(ElementsAttr attr, Type narrow,
                                           StringRef name);
/// Frees the data of `weight`'s blob when no attribute under `scope` refers
/// to it any more (its key stays, empty). Blobs are shared by every IR of
/// the context, so this is only for IR that is alone in its context: not
/// for a clone whose original lives on (the autotuner's kernels).
void releaseIfUnreferenced(Operation *scope, DenseResourceElementsAttr weight);
} // namespace mlir::kiln

#endif // KILN_PASSES_GRAPH_CONSTANTBYTES_H
