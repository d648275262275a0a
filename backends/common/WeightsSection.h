//===- WeightsSection.h - Weights appended to a linked artifact -*- C++ -*-===//
#ifndef KILN_BACKENDS_COMMON_WEIGHTSSECTION_H
#define KILN_BACKENDS_COMMON_WEIGHTSSECTION_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Support/LLVM.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mlir::kiln {

/// The weights as kiln-outline-weights lays them out: each constant at its
/// offset in an area of `size` bytes (the gaps are zeros).
struct WeightsLayout {
  uint64_t size = 0;
  std::vector<std::pair<uint64_t, ElementsAttr>> pieces;
};

/// Bytes `value` takes in memory (i1: one byte per element), or nothing for
/// an element type that is not laid out byte for byte.
std::optional<uint64_t> weightMemoryBytes(ElementsAttr value);

/// Reads the `kiln.weights` module attribute (`{offsets = array<i64: ...>,
/// size = N : i64, values = [...]}`), checking that every value is a
/// non-splat dense or dense_resource constant whose bytes are available and
/// that the pieces lie in order inside the area, 64-byte aligned.
FailureOr<WeightsLayout> readWeightsLayout(Attribute attr, std::string &error);

/// Appends the weights to the linked ELF64 little-endian shared library at
/// `path` as the section KILN_WEIGHTS_SECTION (abi.h): the bytes at the next
/// page boundary past the file's end, then a copy of the section name table
/// with the new name and a section header table with one more entry, which
/// the ELF header then points at. No program header covers the section, so
/// dlopen does not load it; the runtime maps it. The weights are written
/// straight from memory: they never pass through LLVM IR or the linker, and
/// may exceed 2 GiB. Fails, with `error` set, if the file is not such a
/// library or cannot be written.
LogicalResult appendWeightsSection(StringRef path, const WeightsLayout &weights,
                                   std::string &error);

} // namespace mlir::kiln

#endif // KILN_BACKENDS_COMMON_WEIGHTSSECTION_H
