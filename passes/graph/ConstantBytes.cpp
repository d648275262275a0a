//===- ConstantBytes.cpp - Raw bytes of kiln constants --------------------===//

#include "passes/graph/ConstantBytes.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/APFloat.h"

#include <cstring>

using namespace mlir;

std::optional<std::vector<char>> mlir::kiln::constantBytes(ElementsAttr attr) {
  auto type = cast<ShapedType>(attr.getType());
  Type et = type.getElementType();
  if (et.isInteger(1) || !et.isIntOrFloat())
    return std::nullopt;
  size_t width = et.getIntOrFloatBitWidth() / 8;
  size_t size = type.getNumElements() * width;
  if (auto dense = dyn_cast<DenseElementsAttr>(attr)) {
    ArrayRef<char> raw = dense.getRawData();
    if (!dense.isSplat())
      return std::vector<char>(raw.begin(), raw.end());
    std::vector<char> out(size);
    for (size_t i = 0; i < size; i += width)
      std::copy(raw.begin(), raw.begin() + width, out.begin() + i);
    return out;
  }
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(attr)) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob || blob->getData().size() != size)
      return std::nullopt;
    ArrayRef<char> data = blob->getData();
    return std::vector<char>(data.begin(), data.end());
  }
  return std::nullopt;
}

uint16_t mlir::kiln::toBf16(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  if ((bits & 0x7fffffffu) > 0x7f800000u)
    return uint16_t((bits >> 16) | 0x40);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return uint16_t(bits >> 16);
}

std::optional<ElementsAttr>
mlir::kiln::narrowConstant(ElementsAttr attr, Type narrow, StringRef name) {
  auto type = dyn_cast<RankedTensorType>(attr.getType());
  if (!type || !type.getElementType().isF32() ||
      !(narrow.isBF16() || narrow.isF16()))
    return std::nullopt;
  std::optional<std::vector<char>> bytes = constantBytes(attr);
  if (!bytes)
    return std::nullopt;
  size_t count = bytes->size() / sizeof(float);
  std::vector<uint16_t> bits(count);
  for (size_t i = 0; i < count; ++i) {
    float x;
    std::memcpy(&x, bytes->data() + i * sizeof x, sizeof x);
    if (narrow.isBF16()) {
      bits[i] = toBf16(x);
      continue;
    }
    bool lost;
    llvm::APFloat value(x);
    value.convert(llvm::APFloat::IEEEhalf(), llvm::APFloat::rmNearestTiesToEven,
                  &lost);
    bits[i] = uint16_t(value.bitcastToAPInt().getZExtValue());
  }
  return bytesToConstant(
      type.clone(narrow), name,
      ArrayRef<char>(reinterpret_cast<const char *>(bits.data()),
                     bits.size() * sizeof(uint16_t)));
}

void mlir::kiln::releaseIfUnreferenced(Operation *scope,
                                       DenseResourceElementsAttr weight) {
  StringRef key = weight.getRawHandle().getKey();
  bool referenced = false;
  scope->walk([&](Operation *op) {
    op->getAttrDictionary().walk([&](DenseResourceElementsAttr attr) {
      referenced |= attr.getRawHandle().getKey() == key;
    });
    return referenced ? WalkResult::interrupt() : WalkResult::advance();
  });
  if (!referenced)
    DenseResourceElementsHandle::getManagerInterface(scope->getContext())
        .getBlobManager()
        .update(key, AsmResourceBlob());
}

ElementsAttr mlir::kiln::bytesToConstant(RankedTensorType type, StringRef name,
                                         ArrayRef<char> bytes) {
  return DenseResourceElementsAttr::get(
      type, name, HeapAsmResourceBlob::allocateAndCopyWithAlign(bytes, 64));
}
