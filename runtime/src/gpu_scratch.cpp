#include "gpu_scratch.h"

#include <algorithm>

namespace kiln::rt {
namespace {
constexpr uint64_t kMinChunk = uint64_t(1) << 20;
// A request above this is a corrupt size, not a tensor (2^48 bytes).
constexpr uint64_t kMaxRequest = uint64_t(1) << 48;

uint64_t roundUp(uint64_t bytes) {
  return (bytes + KILN_ALIGNMENT - 1) / KILN_ALIGNMENT * KILN_ALIGNMENT;
}
} // namespace

DeviceScratch::~DeviceScratch() {
  for (Chunk &chunk : chunks_)
    device_.release(chunk.data);
}

void *DeviceScratch::allocate(uint64_t bytes) {
  if (bytes > kMaxRequest)
    return nullptr;
  uint64_t size = std::max<uint64_t>(roundUp(bytes), KILN_ALIGNMENT);
  if (chunks_.empty() || chunks_.back().size - used_ < size) {
    uint64_t last = chunks_.empty() ? 0 : chunks_.back().size;
    uint64_t chunkSize = std::max({size, kMinChunk, 2 * last});
    void *data = nullptr;
    if (device_.allocate(chunkSize, "a run-time sized buffer", &data) !=
        KILN_OK)
      return nullptr;
    chunks_.push_back({data, chunkSize});
    used_ = 0;
    ++generation_;
  }
  void *result = static_cast<unsigned char *>(chunks_.back().data) + used_;
  used_ += size;
  return result;
}

bool DeviceScratch::reset() {
  used_ = 0;
  if (chunks_.size() <= 1)
    return false;
  uint64_t total = 0;
  for (Chunk &chunk : chunks_) {
    total += chunk.size;
    device_.release(chunk.data);
  }
  chunks_.clear();
  ++generation_;
  void *data = nullptr;
  // On failure the next run allocates chunk by chunk again.
  if (device_.allocate(total, "a run-time sized buffer", &data) == KILN_OK)
    chunks_.push_back({data, total});
  return true;
}

} // namespace kiln::rt
