// Fuzz target: a .pt2 archive's bytes through the zip reader, the JSON
// program and payload configs, the importer and the verifier
// (compiler/import/pt2): the archive is refused with an error or imports
// into IR that verifies. One context for all inputs.
#include "ImportFuzzing.h"
#include "compiler/import/pt2/Pt2Importer.h"

#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  return kiln::fuzz::checkImported(mlir::kiln::pt2::importPt2Bytes(
      kiln::fuzz::quietContext(),
      llvm::StringRef(reinterpret_cast<const char *>(data), size), "fuzz.pt2",
      {}));
}
