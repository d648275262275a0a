//===- ModelInput.h - Model files in: ONNX or kiln IR, by content -*- C++
//-*-===//
//
// `kiln compile`, `kiln inspect` and `kiln run` take an ONNX model or kiln
// IR (MLIR text as `kiln import` prints it, resource blobs included, or MLIR
// bytecode). The format is read from the file's first bytes, not its name:
// an ELF file is an artifact, "ML\xefR" MLIR bytecode, text whose first
// token is `module`, `func.func`, an alias (`#map =`, `!t =`) or a resource
// block
// (`{-#`) MLIR text, other text neither (a clear error), anything else an
// ONNX protobuf.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_COMPILER_DRIVER_MODELINPUT_H
#define KILN_COMPILER_DRIVER_MODELINPUT_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include "llvm/Support/Error.h"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace mlir::kiln {

enum class ModelFormat { Onnx, Mlir, Pt2, Artifact };

/// The format of the file at `path`, or an error naming the file when it
/// cannot be read or is text that is not MLIR.
llvm::Expected<ModelFormat> detectModelFormat(llvm::StringRef path);

/// The kiln-dialect module of an ONNX model (imported with `inputShapes`
/// and the symbolic dims' `dimRanges`)
/// or of kiln IR (parsed and verified; it must have the entry
/// `func.func @main`). Parse errors are reported through the context's
/// diagnostics; the returned error says what failed. `checkWeights`, if
/// given, sees the model's weight bytes (an ONNX or .pt2 model's before any
/// is read, kiln IR's once parsed: the compile's memory limit) and may stop
/// the import.
llvm::Expected<OwningOpRef<ModuleOp>> loadModel(
    MLIRContext &context, llvm::StringRef path,
    const std::map<std::string, std::vector<int64_t>> &inputShapes,
    const std::map<std::string, std::pair<int64_t, int64_t>> &dimRanges = {},
    std::function<llvm::Error(uint64_t)> checkWeights = nullptr);

} // namespace mlir::kiln

#endif // KILN_COMPILER_DRIVER_MODELINPUT_H
