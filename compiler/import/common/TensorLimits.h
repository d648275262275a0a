//===- TensorLimits.h - The largest tensor a model may describe -*- C++ -*-===//
//
// Shared by the frontends (ONNX, torch.export): an input, a constant or a
// computed result whose shape asks for more than 1 TiB, or whose element
// count overflows 64 bits (dims from a hostile file), is refused at import
// instead of failing later for want of memory.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_COMPILER_IMPORT_COMMON_TENSORLIMITS_H
#define KILN_COMPILER_IMPORT_COMMON_TENSORLIMITS_H

#include "mlir/IR/BuiltinTypes.h"

#include <cstdint>
#include <optional>
#include <string>

namespace mlir::kiln {

constexpr uint64_t kMaxTensorBytes = uint64_t(1) << 40; // 1 TiB

/// The bytes of `type` (0 when a dim is dynamic), or nullopt when its
/// element count overflows 64 bits.
std::optional<uint64_t> tensorBytes(RankedTensorType type);

/// "[2, 3]".
std::string shapeText(llvm::ArrayRef<int64_t> shape);

/// "" or why a tensor of `type` is refused ("its shape [...] needs 4.4 TB,
/// over Kiln's limit of 1 TiB per tensor").
std::string tooLarge(RankedTensorType type);

} // namespace mlir::kiln

#endif // KILN_COMPILER_IMPORT_COMMON_TENSORLIMITS_H
