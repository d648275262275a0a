//===- Pt2Importer.h - torch.export .pt2 -> kiln dialect --------*- C++ -*-===//
//
// `kiln compile model.pt2`: the exported program of a torch.export.save
// archive becomes func.func @main in the kiln dialect, as an ONNX model
// does: user inputs are the arguments (named as in forward()), parameters,
// buffers and tensor constants become constants read from the archive, and
// every FX node is imported by the handler of its ATen op, located at the
// node (its FX name and op) for logs and --report. No Python, no libtorch.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_COMPILER_IMPORT_PT2_PT2IMPORTER_H
#define KILN_COMPILER_IMPORT_PT2_PT2IMPORTER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace mlir::kiln::pt2 {

struct ImportOptions {
  /// Static shapes for inputs with symbolic sizes (`--input-shape`).
  std::map<std::string, std::vector<int64_t>> inputShapes;
  /// Called with the bytes of the weights the program uses before any is
  /// read; an error stops the import (the compile's memory limit).
  std::function<llvm::Error(uint64_t weightBytes)> checkWeights;
};

/// Reads and imports `path`. Errors are one line naming the file, or the FX
/// node and its op: "unsupported ATen op 'aten.foo.default' at node
/// 'foo_3'".
llvm::Expected<OwningOpRef<ModuleOp>>
importPt2File(MLIRContext &context, llvm::StringRef path,
              const ImportOptions &options);

/// The same on an archive's bytes in memory (the fuzz target); `path`
/// names it in messages.
llvm::Expected<OwningOpRef<ModuleOp>>
importPt2Bytes(MLIRContext &context, llvm::StringRef bytes,
               llvm::StringRef path, const ImportOptions &options);

/// The ATen ops (overloads, "aten.conv2d.default") the importer handles,
/// sorted.
std::vector<std::string> supportedAtenOps();

/// `kiln inspect model.pt2`: the program, its inputs and outputs, the
/// parameter count and the histogram of its ATen ops (unsupported ones
/// marked and appended to `unsupported`).
llvm::Error describePt2(llvm::StringRef path, llvm::raw_ostream &os,
                        std::vector<std::string> &unsupported);

} // namespace mlir::kiln::pt2

#endif // KILN_COMPILER_IMPORT_PT2_PT2IMPORTER_H
