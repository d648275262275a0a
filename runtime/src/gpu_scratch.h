// Device memory for a GPU session's run-time sized buffers (symbolic dims):
// a bump allocator over device chunks, reset at the start of each run. A
// run that needed more than one chunk leaves one chunk as large as all of
// them for the next, so a steady stream of runs of one shape allocates
// nothing and hands out the same addresses in the same order (what a
// captured CUDA graph relies on).
#ifndef KILN_RUNTIME_GPU_SCRATCH_H
#define KILN_RUNTIME_GPU_SCRATCH_H

#include "gpu_device.h"

#include <cstdint>
#include <vector>

namespace kiln::rt {

class DeviceScratch {
public:
  explicit DeviceScratch(GpuDevice &device) : device_(device) {}
  ~DeviceScratch();
  DeviceScratch(const DeviceScratch &) = delete;
  DeviceScratch &operator=(const DeviceScratch &) = delete;

  // `bytes` aligned to KILN_ALIGNMENT, or nullptr when the device has no
  // memory left (with the device's message stored).
  void *allocate(uint64_t bytes);
  // Every earlier allocation becomes invalid; call only when the device is
  // done with them. Returns true when the chunks changed (addresses that
  // an earlier run handed out are no longer the ones the next gets).
  bool reset();
  // Changes whenever a chunk is allocated or released: two runs that saw
  // the same generation throughout got the same addresses.
  uint64_t generation() const { return generation_; }

private:
  struct Chunk {
    void *data;
    uint64_t size;
  };
  GpuDevice &device_;
  std::vector<Chunk> chunks_;
  uint64_t used_ = 0; // in chunks_.back()
  uint64_t generation_ = 0;
};

} // namespace kiln::rt

#endif // KILN_RUNTIME_GPU_SCRATCH_H
