// Fuzz target: an ONNX model's bytes through the reader, the importer and
// the verifier (compiler/import/onnx): the model is refused with an error
// or imports into IR that verifies. One context for all inputs.
#include "compiler/import/onnx/OnnxImporter.h"
#include "onnx/onnx.pb.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"

#include <cstdint>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static mlir::MLIRContext *context = [] {
    // The importer loads the dialects it builds (kiln, func).
    auto *ctx = new mlir::MLIRContext();
    // Errors are the expected outcome for most inputs: keep them quiet.
    ctx->getDiagEngine().registerHandler(
        [](mlir::Diagnostic &) { return mlir::success(); });
    return ctx;
  }();
  auto model = mlir::kiln::onnx_import::parseOnnxModel(
      llvm::StringRef(reinterpret_cast<const char *>(data), size), "fuzz.onnx");
  if (!model) {
    llvm::consumeError(model.takeError());
    return 0;
  }
  auto module = mlir::kiln::onnx_import::importOnnxModel(*context, **model,
                                                         "fuzz.onnx", {});
  if (!module) {
    llvm::consumeError(module.takeError());
    return 0;
  }
  // What imports must be valid IR: anything else is an importer bug.
  if (mlir::failed(mlir::verify(**module)))
    std::abort();
  return 0;
}
