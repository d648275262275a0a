#include "memory_limit.h"

#include <cstdio>
#include <fstream>
#include <sstream>

namespace kiln::rt {
namespace {

// A number from a one-line file ("max" and unreadable: UINT64_MAX).
uint64_t readNumber(const char *path) {
  std::ifstream file(path);
  std::string text;
  if (!(file >> text) || text == "max")
    return UINT64_MAX;
  try {
    return std::stoull(text);
  } catch (...) {
    return UINT64_MAX;
  }
}

} // namespace

MemoryAvailable availableMemory() {
  MemoryAvailable result;
  std::ifstream meminfo("/proc/meminfo");
  std::string line;
  while (std::getline(meminfo, line)) {
    std::istringstream fields(line);
    std::string key;
    uint64_t kib = 0;
    if (fields >> key >> kib && key == "MemAvailable:") {
      result.bytes = kib * 1024;
      result.source = "MemAvailable";
      break;
    }
  }
  uint64_t max = readNumber("/sys/fs/cgroup/memory.max");
  uint64_t current = readNumber("/sys/fs/cgroup/memory.current");
  if (max != UINT64_MAX && current != UINT64_MAX) {
    uint64_t room = max > current ? max - current : 0;
    if (room < result.bytes) {
      result.bytes = room;
      result.source = "the cgroup limit";
    }
  }
  return result;
}

std::string formatBytes(uint64_t bytes) {
  char text[32];
  if (bytes >= 1000000000ull)
    std::snprintf(text, sizeof text, "%.1f GB", bytes / 1e9);
  else
    std::snprintf(text, sizeof text, "%.1f MB", bytes / 1e6);
  return text;
}

} // namespace kiln::rt
