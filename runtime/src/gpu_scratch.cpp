#include "gpu_scratch.h"
#include "scratch.h"

#include <algorithm>

namespace kiln::rt {
namespace {
constexpr uint64_t kMinChunk = uint64_t(1) << 20;
} // namespace

DeviceScratch::~DeviceScratch() {
  for (Chunk &chunk : chunks_)
    device_.release(chunk.data);
}

void *DeviceScratch::allocate(uint64_t bytes) {
  uint64_t size = scratchRequestSize(bytes);
  if (size == 0)
    return nullptr;
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
