//===- ConstantBytes.cpp - Raw bytes of kiln constants --------------------===//

#include "passes/graph/ConstantBytes.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/DialectResourceBlobManager.h"

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
