// Fuzz target: the artifact check the runtime makes before dlopen
// (runtime/src/elf_check.cpp): every input gets KILN_OK or a status with a
// message.
#include "elf_check.h"

#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  kiln::rt::checkElfBytes(data, size, "fuzz.so");
  return 0;
}
