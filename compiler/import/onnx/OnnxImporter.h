//===- OnnxImporter.h - ONNX protobuf -> kiln dialect -----------*- C++ -*-===//
//
// Public entry points of the ONNX importer. The result is a module with one
// `func.func @main` in the kiln dialect: graph inputs are its arguments and
// graph outputs its results, each carrying its ONNX name in a `kiln.name`
// attribute; every op's location names the ONNX node it came from.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_COMPILER_IMPORT_ONNX_ONNXIMPORTER_H
#define KILN_COMPILER_IMPORT_ONNX_ONNXIMPORTER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/Error.h"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace onnx {
class ModelProto;
} // namespace onnx

namespace mlir::kiln::onnx_import {

struct ImportOptions {
  /// Static shapes for graph inputs whose ONNX shape has symbolic or unknown
  /// dims (`--input-shape name=1,3,224,224`).
  std::map<std::string, std::vector<int64_t>> inputShapes;
  /// Bounds of symbolic dims by name (`--dim seq=1..512`); a symbol without
  /// one gets [0, kMaxSymbolExtent].
  std::map<std::string, std::pair<int64_t, int64_t>> dimRanges;
  /// importOnnxFile calls this with initializerBytes of the parsed model
  /// before converting any weight; an error stops the import.
  std::function<llvm::Error(uint64_t weightBytes)> checkWeights;
};

/// The largest extent a symbolic dim may take unless --dim bounds it.
constexpr int64_t kMaxSymbolExtent = (int64_t(1) << 31) - 1;

/// Parses and validates an ONNX file. Errors are one line naming the file.
llvm::Expected<std::unique_ptr<onnx::ModelProto>>
loadOnnxModel(llvm::StringRef path);

/// The same checks on a model's bytes; `path` names it in the messages.
llvm::Expected<std::unique_ptr<onnx::ModelProto>>
parseOnnxModel(llvm::StringRef bytes, llvm::StringRef path);

/// Imports a parsed model. `modelPath` locates external data files. Errors are
/// one line naming the ONNX node and op type where one is involved, e.g.
/// "unsupported ONNX op 'Foo' (opset 13) at node 'foo_1'".
llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
importOnnxModel(mlir::MLIRContext &context, const onnx::ModelProto &model,
                llvm::StringRef modelPath, const ImportOptions &options);

/// Bytes the main graph's initializers declare (element count times element
/// size; saturates, unknown element types not counted), read from the
/// parsed model before any weight is converted.
uint64_t initializerBytes(mlir::MLIRContext &context,
                          const onnx::ModelProto &model);

/// loadOnnxModel + (options.checkWeights) + importOnnxModel.
llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
importOnnxFile(mlir::MLIRContext &context, llvm::StringRef path,
               const ImportOptions &options);

/// The ONNX op types the importer handles, sorted (for docs and `kiln
/// inspect`).
std::vector<std::string> supportedOnnxOps();

} // namespace mlir::kiln::onnx_import

#endif // KILN_COMPILER_IMPORT_ONNX_ONNXIMPORTER_H
