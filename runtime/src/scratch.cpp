#include "scratch.h"

#include "aligned_buffer.h"

#include "kiln/abi.h"

#include <algorithm>

namespace kiln::rt {
namespace {
constexpr size_t kMinChunk = 64 * 1024;
// A request above this is a corrupt size, not a tensor (2^48 bytes).
constexpr uint64_t kMaxRequest = uint64_t(1) << 48;

size_t roundUp(uint64_t bytes) {
  return (bytes + KILN_ALIGNMENT - 1) / KILN_ALIGNMENT * KILN_ALIGNMENT;
}
} // namespace

Scratch::~Scratch() {
  for (Chunk &chunk : chunks)
    freeAligned(chunk.data);
}

uint64_t scratchRequestSize(uint64_t bytes) {
  if (bytes > kMaxRequest)
    return 0;
  return std::max<uint64_t>(roundUp(bytes), KILN_ALIGNMENT);
}

void *Scratch::allocate(uint64_t bytes) {
  size_t size = scratchRequestSize(bytes);
  if (size == 0)
    return nullptr;
  if (chunks.empty() || chunks.back().size - used < size) {
    size_t last = chunks.empty() ? 0 : chunks.back().size;
    size_t chunkSize = std::max({size, kMinChunk, 2 * last});
    auto *data = static_cast<unsigned char *>(allocateAligned(chunkSize));
    if (!data)
      return nullptr;
    chunks.push_back({data, chunkSize});
    used = 0;
  }
  void *result = chunks.back().data + used;
  used += size;
  return result;
}

void Scratch::reset() {
  used = 0;
  if (chunks.size() <= 1)
    return;
  size_t total = capacity();
  for (Chunk &chunk : chunks)
    freeAligned(chunk.data);
  chunks.clear();
  if (auto *data = static_cast<unsigned char *>(allocateAligned(total)))
    chunks.push_back({data, total});
}

size_t Scratch::capacity() const {
  size_t total = 0;
  for (const Chunk &chunk : chunks)
    total += chunk.size;
  return total;
}

} // namespace kiln::rt
