// Fuzz target: a .pt2 archive's bytes through the zip reader, the JSON
// program and payload configs, the importer and the verifier
// (compiler/import/pt2): the archive is refused with an error or imports
// into IR that verifies. One context for all inputs.
#include "compiler/import/pt2/Pt2Importer.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"

#include <cstdint>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static mlir::MLIRContext *context = [] {
    auto *ctx = new mlir::MLIRContext();
    // Errors are the expected outcome for most inputs: keep them quiet.
    ctx->getDiagEngine().registerHandler(
        [](mlir::Diagnostic &) { return mlir::success(); });
    return ctx;
  }();
  auto module = mlir::kiln::pt2::importPt2Bytes(
      *context, llvm::StringRef(reinterpret_cast<const char *>(data), size),
      "fuzz.pt2", {});
  if (!module) {
    llvm::consumeError(module.takeError());
    return 0;
  }
  // What imports must be valid IR: anything else is an importer bug.
  if (mlir::failed(mlir::verify(**module)))
    std::abort();
  return 0;
}
