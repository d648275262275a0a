// Tensor, arena and scratch memory. Large blocks are mapped from the kernel
// directly: a 16 MB output freed after every run and allocated again by the
// next one otherwise raises glibc's mmap threshold, lands on the heap, and
// with 64-byte alignment fragments it, so a service's resident memory grew
// by a block per run (MatMul 2048: 68 MB after one run, 183 MB after ten).
//
// A freed mapping is kept for the next request of the same size, up to
// kCachedBytes in all: a fresh mapping faults in every page on first touch,
// which cost the 2048^3 MatMul 6% of its run time (4096 faults for its
// output, taken inside the kernel's threads). Reuse keeps resident memory
// at what one run already needed; blocks are zeroed again before reuse.
#include "aligned_buffer.h"

#include "kiln/abi.h"

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <sys/mman.h>
#include <unordered_map>
#include <vector>

namespace kiln::rt {
namespace {

constexpr size_t kMappedBytes = 1 << 20;
constexpr size_t kCachedBytes = 64 << 20;
constexpr size_t kCachedBlocks = 4;

struct Block {
  void *data;
  size_t size;
};

// The size of every mapped block, by address (freeAligned gets only the
// address), and the freed blocks kept for reuse, most recent last.
struct MappedBlocks {
  std::mutex mutex;
  std::unordered_map<void *, size_t> sizes;
  std::vector<Block> cached;
  size_t cachedBytes = 0;

  // A kept block of exactly `size` bytes, or null.
  void *takeCached(size_t size) {
    for (size_t i = cached.size(); i-- > 0;) {
      if (cached[i].size != size)
        continue;
      void *data = cached[i].data;
      cached.erase(cached.begin() + i);
      cachedBytes -= size;
      return data;
    }
    return nullptr;
  }

  // Keeps a freed block if it fits; false when the caller must unmap it.
  bool keep(void *data, size_t size) {
    if (size > kCachedBytes)
      return false;
    // Make room by dropping the oldest blocks.
    while (!cached.empty() && (cached.size() >= kCachedBlocks ||
                               cachedBytes + size > kCachedBytes)) {
      sizes.erase(cached.front().data);
      munmap(cached.front().data, cached.front().size);
      cachedBytes -= cached.front().size;
      cached.erase(cached.begin());
    }
    cached.push_back({data, size});
    cachedBytes += size;
    return true;
  }
};

MappedBlocks &mappedBlocks() {
  static MappedBlocks *blocks = new MappedBlocks; // outlives static dtors
  return *blocks;
}

size_t pageRounded(size_t bytes) {
  constexpr size_t page = 4096;
  return (bytes + page - 1) / page * page;
}

void *allocateMapped(size_t bytes) {
  size_t size = pageRounded(bytes);
  MappedBlocks &blocks = mappedBlocks();
  {
    std::lock_guard<std::mutex> lock(blocks.mutex);
    if (void *data = blocks.takeCached(size)) {
      std::memset(data, 0, size);
      return data;
    }
  }
  void *data = mmap(nullptr, size, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (data == MAP_FAILED)
    return nullptr;
  try {
    std::lock_guard<std::mutex> lock(blocks.mutex);
    blocks.sizes.emplace(data, size);
  } catch (...) {
    munmap(data, size);
    return nullptr;
  }
  return data; // fresh mappings are zero already
}

} // namespace

void *allocateAligned(size_t bytes) {
  // aligned_alloc wants a multiple of the alignment; round up, guarding
  // against wrap-around for absurd sizes.
  constexpr size_t align = KILN_ALIGNMENT;
  if (bytes > SIZE_MAX - align - 4096)
    return nullptr;
  size_t rounded = bytes == 0 ? align : (bytes + align - 1) / align * align;
  if (rounded >= kMappedBytes)
    return allocateMapped(rounded);
  void *data = std::aligned_alloc(align, rounded);
  if (data)
    std::memset(data, 0, rounded);
  return data;
}

void freeAligned(void *data) {
  if (!data)
    return;
  MappedBlocks &blocks = mappedBlocks();
  std::lock_guard<std::mutex> lock(blocks.mutex);
  auto it = blocks.sizes.find(data);
  if (it == blocks.sizes.end()) {
    std::free(data);
    return;
  }
  size_t size = it->second;
  bool kept = false;
  try {
    kept = blocks.keep(data, size);
  } catch (...) {
  }
  if (!kept) {
    blocks.sizes.erase(it);
    munmap(data, size);
  }
}

} // namespace kiln::rt
