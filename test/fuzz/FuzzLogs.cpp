// Fuzz target: the KILN_LOGS / --logs parser (compiler/logging): accepts
// or returns an error naming the entry.
#include "compiler/logging/Logging.h"

#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  bool help = false;
  std::string spec(reinterpret_cast<const char *>(data), size);
  llvm::consumeError(mlir::kiln::logs::configure(spec, help));
  return 0;
}
