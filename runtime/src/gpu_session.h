// One session of a GPU artifact: its stream, its device arena and the device
// buffers of its inputs and outputs. A run copies the inputs in, runs the
// entry (whose launches go to the stream through the launch callback, or
// replays the CUDA graph captured on the first run), copies the outputs out
// and waits.
#ifndef KILN_RUNTIME_GPU_SESSION_H
#define KILN_RUNTIME_GPU_SESSION_H

#include "gpu_device.h"

#include <string>
#include <vector>

namespace kiln::rt {

class GpuSession {
public:
  GpuSession(const kiln_artifact_descriptor &descriptor, GpuDevice &device)
      : descriptor_(descriptor), device_(device) {}
  ~GpuSession();
  GpuSession(const GpuSession &) = delete;
  GpuSession &operator=(const GpuSession &) = delete;

  // Allocates the stream and the buffers, and points `callbacks` (context,
  // launch, fail, device weights) at this session. `useGraphs` false keeps
  // launching kernel by kernel.
  kiln_status init(ThreadPool *pool, bool useGraphs,
                   kiln_runtime_callbacks &callbacks);

  // One run. `inputs`/`outputs` are host buffers, or device buffers when
  // `deviceBuffers` (kiln_session_run_device), each of the descriptor's
  // size.
  kiln_status run(const kiln_runtime_callbacks &callbacks,
                  const void *const *inputs, void *const *outputs,
                  bool deviceBuffers);

  void *deviceInput(size_t i) const {
    return i < inputs_.size() ? inputs_[i] : nullptr;
  }
  void *deviceOutput(size_t i) const {
    return i < outputs_.size() ? outputs_[i] : nullptr;
  }

  // The next run times each kernel (no graph replay); the times are kept
  // for kernelTimes().
  void timeNextRun() { timeNextRun_ = true; }
  const std::vector<KernelTime> &kernelTimes() const { return times_; }

private:
  static int32_t launchCallback(void *context, uint32_t kernel, uint32_t gridX,
                                uint32_t gridY, uint32_t gridZ, uint32_t blockX,
                                uint32_t blockY, uint32_t blockZ,
                                uint32_t sharedBytes, const uint64_t *args);
  static void failCallback(void *context, const char *message);
  kiln_status runEntry(const kiln_runtime_callbacks &callbacks);

  const kiln_artifact_descriptor &descriptor_;
  GpuDevice &device_;
  std::unique_ptr<GpuStream> stream_;
  void *arena_ = nullptr;
  std::vector<void *> inputs_, outputs_;
  std::vector<uint64_t> inputBytes_, outputBytes_;
  bool useGraphs_ = true, graphReady_ = false, timeNextRun_ = false;
  std::vector<KernelTime> times_;
  // The first failure of the current run's launches.
  kiln_status launchStatus_ = KILN_OK;
  std::string launchError_;
};

} // namespace kiln::rt

#endif // KILN_RUNTIME_GPU_SESSION_H
