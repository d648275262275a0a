// One session of a GPU artifact: its stream, its device arena and the device
// buffers of its inputs and outputs. A run copies the inputs in, runs the
// entry (whose launches go to the stream through the launch callback, or
// replays the CUDA graph captured on the first run), copies the outputs out
// and waits.
#ifndef KILN_RUNTIME_GPU_SESSION_H
#define KILN_RUNTIME_GPU_SESSION_H

#include "gpu_device.h"
#include "gpu_scratch.h"

#include <string>
#include <vector>

namespace kiln::rt {

class GpuSession {
public:
  GpuSession(const kiln_artifact_descriptor &descriptor, GpuDevice &device)
      : descriptor_(descriptor), device_(device), scratch_(device) {}
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
  // size. An input with symbolic dims is a host {data, dims} record (abi.h;
  // host buffers only): its data goes to a device buffer grown to fit. A
  // dynamic output's slot is the record the entry fills, with a device
  // address (copyToHost takes its data after the run).
  kiln_status run(const kiln_runtime_callbacks &callbacks,
                  const void *const *inputs, void *const *outputs,
                  bool deviceBuffers);

  // Copies `bytes` of device memory the last run wrote to the host and
  // waits for it.
  kiln_status copyToHost(void *host, const void *device, uint64_t bytes);

  // The session's own device buffer of input `i`; nullptr for one of
  // run-time shape (its buffer moves when it grows).
  void *deviceInput(size_t i) const;
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
  static void *allocCallback(void *context, uint64_t bytes);
  // Copies the inputs in; symbolic ones through records of device
  // addresses, their buffers grown to fit (`moved` when one was).
  kiln_status copyInputs(const void *const *inputs, bool deviceBuffers,
                         bool &moved);
  kiln_status runEntry(const kiln_runtime_callbacks &callbacks);

  const kiln_artifact_descriptor &descriptor_;
  GpuDevice &device_;
  std::unique_ptr<GpuStream> stream_;
  void *arena_ = nullptr;
  std::vector<void *> inputs_, outputs_;
  std::vector<uint64_t> inputBytes_, outputBytes_;
  // Run-time sized buffers (symbolic dims), on the device.
  DeviceScratch scratch_;
  // What the entry reads for each input: a device buffer, or for a
  // symbolic input the record of its device copy.
  std::vector<void *> entryInputs_;
  std::vector<void *> entryOutputs_;
  std::vector<std::vector<int64_t>> inputRecords_;
  // Symbolic dims: whether the artifact has any (inputs or outputs of
  // run-time shape), and the extents of this run, of the last one and of
  // the captured graph, which replays only for the extents, input buffers
  // and scratch chunks it was captured with. A run captures a graph only
  // when it repeats the last run's extents with the same buffers.
  bool runTimeShapes_ = false;
  std::vector<int64_t> extents_, lastExtents_, graphExtents_;
  uint64_t graphGeneration_ = 0;
  // The dynamic outputs' records as the captured run filled them.
  std::vector<std::vector<int64_t>> graphRecords_;
  bool useGraphs_ = true, graphReady_ = false, timeNextRun_ = false;
  std::vector<KernelTime> times_;
  // The first failure of the current run's launches.
  kiln_status launchStatus_ = KILN_OK;
  std::string launchError_;
};

} // namespace kiln::rt

#endif // KILN_RUNTIME_GPU_SESSION_H
