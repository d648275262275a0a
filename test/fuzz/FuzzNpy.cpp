// Fuzz target: the .npy reader of kiln run (runtime/tools/npy_format.cpp).
// Any input either parses or throws std::runtime_error with a message;
// nothing else (no crash, no out-of-bounds read, no other exception).
#include "tensor_io.h"

#include <cstdint>
#include <stdexcept>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  try {
    kiln::io::parseNpy(data, size, "fuzz.npy");
  } catch (const std::runtime_error &) {
  }
  return 0;
}
