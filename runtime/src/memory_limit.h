// How much memory this process can still get: the smaller of the kernel's
// MemAvailable estimate and the room left under the cgroup's memory.max
// (a container's limit). Sessions refuse an arena that cannot fit, with a
// message, instead of being OOM-killed halfway through a run.
#ifndef KILN_RUNTIME_MEMORY_LIMIT_H
#define KILN_RUNTIME_MEMORY_LIMIT_H

#include <cstdint>
#include <string>

namespace kiln::rt {

struct MemoryAvailable {
  uint64_t bytes = UINT64_MAX; // UINT64_MAX: unknown (no /proc)
  std::string source;          // "MemAvailable" or "the cgroup limit"
};

MemoryAvailable availableMemory();

// "12.3 GB" (decimal units, as free and top print them).
std::string formatBytes(uint64_t bytes);

} // namespace kiln::rt

#endif // KILN_RUNTIME_MEMORY_LIMIT_H
