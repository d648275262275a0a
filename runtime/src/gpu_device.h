// The GPU side of the runtime: a device per loaded GPU artifact (its image
// loaded, its weights uploaded once) and a stream per session (its arena,
// its input/output buffers, its launches). The platforms behind this
// interface are the CUDA driver (gpu_cuda.cpp) and the HIP runtime
// (gpu_hip.cpp), both dlopen'ed, and the emulator
// that runs kernels compiled for the host (gpu_emulator.cpp).
#ifndef KILN_RUNTIME_GPU_DEVICE_H
#define KILN_RUNTIME_GPU_DEVICE_H

#include "kiln/runtime.h"

#include <memory>
#include <string>
#include <vector>

namespace kiln::rt {

class ThreadPool;

// Per-kernel GPU time of one run (kiln bench).
struct KernelTime {
  uint32_t kernel = 0;
  double milliseconds = 0;
};

class GpuStream {
public:
  virtual ~GpuStream() = default;
  // Asynchronous on the stream; the host buffers must stay valid until
  // synchronize().
  virtual kiln_status copyToDevice(void *device, const void *host,
                                   uint64_t bytes) = 0;
  virtual kiln_status copyToHost(void *host, const void *device,
                                 uint64_t bytes) = 0;
  virtual kiln_status copyOnDevice(void *dst, const void *src,
                                   uint64_t bytes) = 0;
  virtual kiln_status launch(uint32_t kernel, const uint32_t grid[3],
                             const uint32_t block[3], uint32_t sharedBytes,
                             const uint64_t *args) = 0;
  // Waits for everything queued; reports asynchronous failures.
  virtual kiln_status synchronize() = 0;

  // Graph capture of the launches of one run (CUDA graphs); platforms
  // without graphs return false from supportsGraphs().
  virtual bool supportsGraphs() const { return false; }
  virtual kiln_status beginCapture() { return KILN_OK; }
  // Ends the capture; `keep` false drops what was captured.
  virtual kiln_status endCapture(bool keep) {
    (void)keep;
    return KILN_OK;
  }
  virtual kiln_status replay() { return KILN_OK; }

  // Per-kernel timing of the launches that follow (events around each);
  // takeKernelTimes() after synchronize() returns them and stops timing.
  virtual void timeKernels(bool on) { (void)on; }
  virtual std::vector<KernelTime> takeKernelTimes() { return {}; }
};

class GpuDevice {
public:
  virtual ~GpuDevice() = default;
  // Device memory; `what` names the buffer in the out-of-memory message.
  virtual kiln_status allocate(uint64_t bytes, const char *what,
                               void **out) = 0;
  virtual void release(void *device) = 0;
  virtual kiln_status createStream(ThreadPool *pool,
                                   std::unique_ptr<GpuStream> &out) = 0;
  // "NVIDIA H100 80GB HBM3 (sm_90)", "kiln GPU emulator".
  virtual std::string name() const = 0;
  // The model's weights on the device (kiln_runtime_callbacks).
  void *weights() const { return weights_; }

protected:
  void *weights_ = nullptr;
};

// Loads `descriptor`'s GPU program: the platform's driver, a device, the
// image and its kernels, and the weights (`weights_size` bytes at
// `hostWeights`, the model's mapping). On failure stores a message naming
// `path` and returns the status.
kiln_status openGpuDevice(const kiln_artifact_descriptor &descriptor,
                          const std::string &path, const void *hostWeights,
                          std::unique_ptr<GpuDevice> &out);

kiln_status openCudaDevice(const kiln_artifact_descriptor &descriptor,
                           const std::string &path, const void *hostWeights,
                           std::unique_ptr<GpuDevice> &out);
kiln_status openHipDevice(const kiln_artifact_descriptor &descriptor,
                          const std::string &path, const void *hostWeights,
                          std::unique_ptr<GpuDevice> &out);
kiln_status openEmulatedDevice(const kiln_artifact_descriptor &descriptor,
                               const std::string &path, const void *hostWeights,
                               std::unique_ptr<GpuDevice> &out);

// "kernel kiln_kernel_3 (ONNX nodes: a, b)" for messages.
std::string describeKernel(const kiln_gpu_program &program, uint32_t kernel);

// What the driver platforms (CUDA, HIP) share.
namespace gpu_driver {
// Whether the environment variable `name` is "1".
bool envFlag(const char *name);
// The launch's parameter array: a pointer to each 64-bit slot of `args`.
// Fails (with the kernel named) past 256 parameters.
constexpr uint32_t kMaxParams = 256;
kiln_status launchParams(const kiln_gpu_program &program, uint32_t kernel,
                         const uint64_t *args, void *(&params)[kMaxParams]);
// "kernel K (ONNX nodes: ...) failed to launch (grid AxBxC, block DxExF)".
std::string launchFailure(const kiln_gpu_program &program, uint32_t kernel,
                          const uint32_t grid[3], const uint32_t block[3]);

// Events around each timed launch (kiln bench's per-kernel GPU times).
template <typename Event> class LaunchTimer {
public:
  bool on() const { return on_; }
  void add(uint32_t kernel, Event start, Event stop) {
    timed_.push_back({kernel, start, stop});
  }
  // The times of the launches so far (elapsed(&ms, start, stop)); every
  // event is destroyed and timing stops.
  template <typename Elapsed, typename Destroy>
  std::vector<KernelTime> take(Elapsed elapsed, Destroy destroy) {
    std::vector<KernelTime> times;
    for (Timed &t : timed_) {
      float ms = 0;
      elapsed(&ms, t.start, t.stop);
      times.push_back({t.kernel, ms});
      destroy(t.start);
      destroy(t.stop);
    }
    timed_.clear();
    on_ = false;
    return times;
  }
  void start() { on_ = true; }

private:
  struct Timed {
    uint32_t kernel;
    Event start, stop;
  };
  std::vector<Timed> timed_;
  bool on_ = false;
};
} // namespace gpu_driver

} // namespace kiln::rt

#endif // KILN_RUNTIME_GPU_DEVICE_H
