// Tensor, arena and scratch memory. Large blocks are mapped from the kernel
// directly: a 16 MB output freed after every run and allocated again by the
// next one otherwise raises glibc's mmap threshold, lands on the heap, and
// with 64-byte alignment fragments it, so a service's resident memory grew
// by a block per run (MatMul 2048: 68 MB after one run, 183 MB after ten).
// Fresh mappings are zero already, so they skip the memset too.
#include "aligned_buffer.h"

#include "kiln/abi.h"

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <sys/mman.h>
#include <unordered_map>

namespace kiln::rt {
namespace {

constexpr size_t kMappedBytes = 1 << 20;

// The size of every mapped block, by address (freeAligned gets only the
// address). Few entries: one per large tensor, arena or scratch chunk.
struct MappedBlocks {
  std::mutex mutex;
  std::unordered_map<void *, size_t> sizes;
};

MappedBlocks &mappedBlocks() {
  static MappedBlocks *blocks = new MappedBlocks; // outlives static dtors
  return *blocks;
}

} // namespace

void *allocateAligned(size_t bytes) {
  // aligned_alloc wants a multiple of the alignment; round up, guarding
  // against wrap-around for absurd sizes.
  constexpr size_t align = KILN_ALIGNMENT;
  if (bytes > SIZE_MAX - align)
    return nullptr;
  size_t rounded = bytes == 0 ? align : (bytes + align - 1) / align * align;
  if (rounded >= kMappedBytes) {
    void *data = mmap(nullptr, rounded, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (data == MAP_FAILED)
      return nullptr;
    MappedBlocks &blocks = mappedBlocks();
    try {
      std::lock_guard<std::mutex> lock(blocks.mutex);
      blocks.sizes.emplace(data, rounded);
    } catch (...) {
      munmap(data, rounded);
      return nullptr;
    }
    return data;
  }
  void *data = std::aligned_alloc(align, rounded);
  if (data)
    std::memset(data, 0, rounded);
  return data;
}

void freeAligned(void *data) {
  if (!data)
    return;
  MappedBlocks &blocks = mappedBlocks();
  size_t size = 0;
  {
    std::lock_guard<std::mutex> lock(blocks.mutex);
    auto it = blocks.sizes.find(data);
    if (it != blocks.sizes.end()) {
      size = it->second;
      blocks.sizes.erase(it);
    }
  }
  if (size)
    munmap(data, size);
  else
    std::free(data);
}

} // namespace kiln::rt
