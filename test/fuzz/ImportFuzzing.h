//===- ImportFuzzing.h - What the importer fuzz targets share ---*- C++ -*-===//
//
// The onnx_import and pt2_import targets: one quiet context for all inputs
// (errors are the expected outcome for most), and the one property checked,
// that whatever imports verifies.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_TEST_FUZZ_IMPORTFUZZING_H
#define KILN_TEST_FUZZ_IMPORTFUZZING_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/Error.h"

#include <cstdlib>

namespace kiln::fuzz {

/// The context every input imports into (the importers load the dialects
/// they build), with diagnostics silenced.
inline mlir::MLIRContext &quietContext() {
  static mlir::MLIRContext *context = [] {
    auto *ctx = new mlir::MLIRContext();
    ctx->getDiagEngine().registerHandler(
        [](mlir::Diagnostic &) { return mlir::success(); });
    return ctx;
  }();
  return *context;
}

/// A refusal is fine; what imports must be valid IR, anything else is an
/// importer bug (abort, so libFuzzer keeps the input).
inline int
checkImported(llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>> module) {
  if (!module) {
    llvm::consumeError(module.takeError());
    return 0;
  }
  if (mlir::failed(mlir::verify(**module)))
    std::abort();
  return 0;
}

} // namespace kiln::fuzz

#endif // KILN_TEST_FUZZ_IMPORTFUZZING_H
