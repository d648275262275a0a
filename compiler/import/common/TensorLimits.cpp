//===- TensorLimits.cpp - The largest tensor a model may describe ---------===//
#include "compiler/import/common/TensorLimits.h"

#include "llvm/ADT/StringExtras.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

using namespace mlir;

std::optional<uint64_t> mlir::kiln::tensorBytes(RankedTensorType type) {
  uint64_t bytes = std::max<uint64_t>(
      1, type.getElementType().isIntOrFloat()
             ? (type.getElementType().getIntOrFloatBitWidth() + 7) / 8
             : 8);
  for (int64_t d : type.getShape()) {
    if (ShapedType::isDynamic(d))
      return 0;
    if (d != 0 && bytes > std::numeric_limits<uint64_t>::max() / uint64_t(d))
      return std::nullopt;
    bytes *= uint64_t(d);
  }
  return bytes;
}

std::string mlir::kiln::shapeText(llvm::ArrayRef<int64_t> shape) {
  return "[" +
         llvm::join(llvm::map_range(
                        shape, [](int64_t d) { return std::to_string(d); }),
                    ", ") +
         "]";
}

std::string mlir::kiln::tooLarge(RankedTensorType type) {
  std::optional<uint64_t> bytes = tensorBytes(type);
  if (!bytes)
    return "its shape " + shapeText(type.getShape()) +
           " has more elements than 64 bits can count";
  if (*bytes <= kMaxTensorBytes)
    return "";
  return fmt::format("its shape {} needs {:.1f} TB, over Kiln's limit of "
                     "1 TiB per tensor",
                     shapeText(type.getShape()), *bytes / 1e12);
}
