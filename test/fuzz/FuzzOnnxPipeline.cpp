// Fuzz target: an ONNX model's bytes through the reader, the importer and
// then the whole -O0 pipeline for the host CPU (graph passes, lowering,
// code generation down to the LLVM dialect; no object code, no linking).
// A model is refused at import, or a stage fails with a diagnostic, or it
// compiles: anything else (a crash, an assertion, a sanitizer report) is a
// bug. A fresh context per input, so constants of earlier inputs do not pile
// up in the uniquer; its diagnostics are silenced.
#include "backends/common/Target.h"
#include "compiler/driver/InitAll.h"
#include "compiler/driver/Pipeline.h"
#include "compiler/import/onnx/OnnxImporter.h"
#include "compiler/logging/Report.h"
#include "onnx/onnx.pb.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"

#include <cstdint>
#include <cstdlib>

using namespace mlir;

namespace {
const DialectRegistry &registry() {
  static DialectRegistry *all = [] {
    auto *r = new DialectRegistry();
    kiln::registerAllDialects(*r);
    return r;
  }();
  return *all;
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  auto model = kiln::onnx_import::parseOnnxModel(
      llvm::StringRef(reinterpret_cast<const char *>(data), size), "fuzz.onnx");
  if (!model) {
    llvm::consumeError(model.takeError());
    return 0;
  }
  MLIRContext context(registry(), MLIRContext::Threading::DISABLED);
  context.getDiagEngine().registerHandler(
      [](Diagnostic &) { return success(); });
  auto module =
      kiln::onnx_import::importOnnxModel(context, **model, "fuzz.onnx", {});
  if (!module) {
    llvm::consumeError(module.takeError());
    return 0;
  }
  if (failed(verify(**module)))
    std::abort();
  kiln::report::reset();
  kiln::PipelineOptions options;
  options.optLevel = 0;
  options.target = kiln::Target::cpu(kiln::CpuTarget::host());
  options.releaseWeights = true;
  for (auto build : {kiln::buildGraphPipeline, kiln::buildLoweringPipeline,
                     kiln::buildBackendPipeline}) {
    PassManager pm(&context);
    build(pm, options);
    if (failed(pm.run(**module)))
      return 0;
  }
  return 0;
}
