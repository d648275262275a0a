// Fuzz target: an ONNX model's bytes through the reader, the importer and
// the verifier (compiler/import/onnx): the model is refused with an error
// or imports into IR that verifies. One context for all inputs.
#include "ImportFuzzing.h"
#include "compiler/import/onnx/OnnxImporter.h"
#include "onnx/onnx.pb.h"

#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  auto model = mlir::kiln::onnx_import::parseOnnxModel(
      llvm::StringRef(reinterpret_cast<const char *>(data), size), "fuzz.onnx");
  if (!model) {
    llvm::consumeError(model.takeError());
    return 0;
  }
  return kiln::fuzz::checkImported(mlir::kiln::onnx_import::importOnnxModel(
      kiln::fuzz::quietContext(), **model, "fuzz.onnx", {}));
}
