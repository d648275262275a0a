// kiln-run: run or benchmark a Kiln artifact without the compiler (no LLVM),
// e.g. on a deployment machine or under qemu.
//   kiln-run MODEL.so [options]        same as `kiln run`
//   kiln-run bench MODEL.so [options]  same as `kiln bench`
#include "runner.h"

#include <cstring>

int main(int argc, char **argv) {
  if (argc > 1 && std::strcmp(argv[1], "bench") == 0) {
    char program[] = "kiln-run bench";
    argv[1] = program;
    return kilnBenchMain(argc - 1, argv + 1);
  }
  char program[] = "kiln-run";
  argv[0] = program;
  return kilnRunMain(argc, argv);
}
