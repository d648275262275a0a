//===- TensorConversion.cpp - ONNX TensorProto -> MLIR attributes ---------===//
//
// Weights stay raw bytes: a tensor larger than kInlineElements becomes a
// dense_resource blob (one copy of the bytes, no per-element attributes), so
// a 100 MB model imports in well under a second. Small tensors (shapes, axes,
// scalars) become DenseElementsAttr so folders can compute with them.
//
//===----------------------------------------------------------------------===//

#include "compiler/import/onnx/NodeContext.h"
#include "compiler/import/onnx/OnnxImporter.h"

#include "onnx/onnx.pb.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include <fmt/format.h>

using namespace mlir;
using namespace mlir::kiln::onnx_import;

namespace {
constexpr int64_t kInlineElements = 256;

/// Bytes of one element in ONNX's little-endian raw layout.
size_t elementBytes(Type type) {
  if (type.isInteger(1))
    return 1;
  return (type.getIntOrFloatBitWidth() + 7) / 8;
}

/// Appends the low `width` bytes of each value (little-endian hosts).
template <typename T>
void appendValues(std::string &out, const T &values, size_t width) {
  for (auto v : values) {
    uint64_t bits = 0;
    if constexpr (std::is_floating_point_v<decltype(v)>)
      memcpy(&bits, &v, sizeof(v));
    else
      bits = (uint64_t)v;
    out.append(reinterpret_cast<const char *>(&bits), width);
  }
}

/// Maps the external data file of `t` into `file` and points `out` at the
/// tensor's bytes in it (no copy).
LogicalResult readExternal(const onnx::TensorProto &t, StringRef modelDir,
                           std::unique_ptr<llvm::MemoryBuffer> &file,
                           StringRef &out, std::string &error) {
  std::string location;
  uint64_t offset = 0, length = 0;
  bool hasLength = false;
  for (const auto &entry : t.external_data()) {
    uint64_t *number = entry.key() == "offset"   ? &offset
                       : entry.key() == "length" ? &length
                                                 : nullptr;
    if (entry.key() == "location")
      location = entry.value();
    else if (number && StringRef(entry.value()).getAsInteger(10, *number)) {
      error = fmt::format("tensor '{}' has an invalid external data {} '{}'",
                          t.name(), entry.key(), entry.value());
      return failure();
    }
    hasLength |= entry.key() == "length";
  }
  if (location.empty() || llvm::sys::path::is_absolute(location) ||
      StringRef(location).contains("..")) {
    error = fmt::format("tensor '{}' has an invalid external data location "
                        "'{}'",
                        t.name(), location);
    return failure();
  }
  llvm::SmallString<256> path(modelDir);
  llvm::sys::path::append(path, location);
  // A symbolic link (or a link in the path) leading out of the model's
  // folder is refused like '..': the file is never read.
  llvm::SmallString<256> realFile, realDir;
  if (!llvm::sys::fs::real_path(path, realFile) &&
      !llvm::sys::fs::real_path(modelDir.empty() ? "." : modelDir, realDir)) {
    llvm::sys::path::append(realDir, "");
    if (!StringRef(realFile).starts_with(realDir)) {
      error = fmt::format("tensor '{}' has an invalid external data location "
                          "'{}': it leads out of the model's folder (to '{}')",
                          t.name(), location, realFile.str().str());
      return failure();
    }
  }
  auto buffer = llvm::MemoryBuffer::getFile(path, false, false);
  if (!buffer) {
    error =
        fmt::format("tensor '{}': cannot read external data '{}': {}", t.name(),
                    path.str().str(), buffer.getError().message());
    return failure();
  }
  StringRef bytes = (*buffer)->getBuffer();
  if (offset > bytes.size() || (hasLength && length > bytes.size() - offset)) {
    error = fmt::format("tensor '{}': external data '{}' ({} bytes) is "
                        "shorter than offset {} + length {}",
                        t.name(), location, bytes.size(), offset, length);
    return failure();
  }
  out = bytes.substr(offset, hasLength ? length : StringRef::npos);
  file = std::move(*buffer);
  return success();
}
} // namespace

Type mlir::kiln::onnx_import::elementTypeFor(MLIRContext *ctx,
                                             int32_t onnxType) {
  Builder b(ctx);
  auto uint = [&](unsigned w) {
    return IntegerType::get(ctx, w, IntegerType::Unsigned);
  };
  switch (onnxType) {
  case onnx::TensorProto::FLOAT:
    return b.getF32Type();
  case onnx::TensorProto::UINT8:
    return uint(8);
  case onnx::TensorProto::INT8:
    return b.getIntegerType(8);
  case onnx::TensorProto::UINT16:
    return uint(16);
  case onnx::TensorProto::INT16:
    return b.getIntegerType(16);
  case onnx::TensorProto::INT32:
    return b.getIntegerType(32);
  case onnx::TensorProto::INT64:
    return b.getIntegerType(64);
  case onnx::TensorProto::BOOL:
    return b.getI1Type();
  case onnx::TensorProto::FLOAT16:
    return b.getF16Type();
  case onnx::TensorProto::DOUBLE:
    return b.getF64Type();
  case onnx::TensorProto::UINT32:
    return uint(32);
  case onnx::TensorProto::UINT64:
    return uint(64);
  case onnx::TensorProto::BFLOAT16:
    return b.getBF16Type();
  default:
    return nullptr;
  }
}

std::string mlir::kiln::onnx_import::onnxTypeName(int32_t onnxType) {
  if (onnx::TensorProto::DataType_IsValid(onnxType))
    return onnx::TensorProto::DataType_Name(
        (onnx::TensorProto::DataType)onnxType);
  // Newer than the onnx.proto Kiln is built with (float8, int4, ...).
  return fmt::format("{} (unknown to this build's onnx.proto)", onnxType);
}

uint64_t
mlir::kiln::onnx_import::initializerBytes(MLIRContext &context,
                                          const onnx::ModelProto &model) {
  uint64_t total = 0;
  for (const onnx::TensorProto &t : model.graph().initializer()) {
    Type type = elementTypeFor(&context, t.data_type());
    uint64_t bytes = type ? elementBytes(type) : 0;
    for (int64_t d : t.dims())
      if (d < 0 || __builtin_mul_overflow(bytes, uint64_t(d), &bytes))
        bytes = d < 0 ? 0 : UINT64_MAX;
    total = __builtin_add_overflow(total, bytes, &total) ? UINT64_MAX : total;
  }
  return total;
}

FailureOr<ElementsAttr>
mlir::kiln::onnx_import::convertTensor(MLIRContext *ctx,
                                       const onnx::TensorProto &t,
                                       StringRef modelDir, std::string &error) {
  Type elementType = elementTypeFor(ctx, t.data_type());
  if (!elementType) {
    error = fmt::format("tensor '{}' has unsupported element type {}", t.name(),
                        onnxTypeName(t.data_type()));
    return failure();
  }
  SmallVector<int64_t> shape(t.dims().begin(), t.dims().end());
  int64_t count = 1;
  for (int64_t d : shape) {
    if (d < 0) {
      error = fmt::format("tensor '{}' has a negative dim", t.name());
      return failure();
    }
    count *= d;
  }
  auto type = RankedTensorType::get(shape, elementType);
  size_t width = elementBytes(elementType);

  // The bytes are read where they are (the mapped external file, the
  // message's raw_data) and copied once, into the constant's blob.
  StringRef bytes;
  std::unique_ptr<llvm::MemoryBuffer> externalFile;
  std::string converted;
  if (t.data_location() == onnx::TensorProto::EXTERNAL) {
    if (failed(readExternal(t, modelDir, externalFile, bytes, error)))
      return failure();
  } else if (t.has_raw_data()) {
    bytes = t.raw_data();
  } else {
    switch (t.data_type()) {
    case onnx::TensorProto::FLOAT:
      appendValues(converted, t.float_data(), 4);
      break;
    case onnx::TensorProto::DOUBLE:
      appendValues(converted, t.double_data(), 8);
      break;
    case onnx::TensorProto::INT64:
      appendValues(converted, t.int64_data(), 8);
      break;
    case onnx::TensorProto::UINT32:
    case onnx::TensorProto::UINT64:
      appendValues(converted, t.uint64_data(), width);
      break;
    default: // int32 and the narrow types, stored as int32 bit patterns
      appendValues(converted, t.int32_data(), width);
      break;
    }
    bytes = converted;
  }
  if (bytes.size() != (size_t)count * width) {
    error = fmt::format("tensor '{}' holds {} bytes, but its shape and type "
                        "need {}",
                        t.name(), bytes.size(), (size_t)count * width);
    return failure();
  }

  if (elementType.isInteger(1)) {
    SmallVector<bool> values;
    for (char c : bytes)
      values.push_back(c != 0);
    return ElementsAttr(DenseElementsAttr::get(type, values));
  }
  if (count <= kInlineElements) {
    bool isSplat = false;
    if (!DenseElementsAttr::isValidRawBuffer(
            type, ArrayRef<char>(bytes.data(), bytes.size()), isSplat)) {
      error = fmt::format("tensor '{}' has an invalid buffer", t.name());
      return failure();
    }
    return ElementsAttr(DenseElementsAttr::getFromRawBuffer(
        type, ArrayRef<char>(bytes.data(), bytes.size())));
  }
  auto blob = HeapAsmResourceBlob::allocateAndCopyWithAlign(
      ArrayRef<char>(bytes.data(), bytes.size()), 64);
  std::string name = t.name().empty() ? "weight" : t.name();
  return ElementsAttr(
      DenseResourceElementsAttr::get(type, name, std::move(blob)));
}
