// Checks an artifact's LLVM target feature string against the running CPU,
// so code compiled for AVX-512 fails to load with a message instead of
// dying of SIGILL in the middle of a run.
#ifndef KILN_RUNTIME_CPU_FEATURES_H
#define KILN_RUNTIME_CPU_FEATURES_H

#include <string>

namespace kiln::rt {

// Returns the first '+' feature of `features` (LLVM spelling, e.g.
// "+avx2,+fma,-sse4a") that this CPU is known to lack, or "" if none is.
// Features the runtime cannot query are assumed present.
std::string firstMissingCpuFeature(const std::string &features);

// Whether the runtime can tell if the CPU has `feature` (LLVM spelling), and
// if so whether it does.
bool queryCpuFeature(const std::string &feature, bool *present);

} // namespace kiln::rt

#endif // KILN_RUNTIME_CPU_FEATURES_H
