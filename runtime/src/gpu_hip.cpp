// HIP artifacts through the HIP runtime's module API: the offload bundle
// loaded once per model (the runtime picks the code object for the GPU's
// gfx arch), the weights uploaded once, a non-blocking stream per session
// whose launches are captured into a HIP graph on the first run (when the
// runtime has graphs) and replayed afterwards.
#include "gpu_device.h"
#include "hip_runtime.h"
#include "status.h"

#include <cstdlib>
#include <cstring>
#include <vector>

namespace kiln::rt {
namespace {

using namespace hip;

class HipDevice;

// Makes the model's device current on the calling thread for the scope's
// life and then restores the caller's, so a service's own HIP work on the
// same thread keeps its device.
class DeviceScope {
public:
  DeviceScope(const Runtime &runtime, int device) : runtime_(runtime) {
    if (runtime_.hipGetDevice(&previous_) != hipSuccess)
      previous_ = -1;
    restore_ = previous_ != device;
    if (restore_)
      runtime_.hipSetDevice(device);
  }
  ~DeviceScope() {
    if (restore_ && previous_ >= 0)
      runtime_.hipSetDevice(previous_);
  }
  DeviceScope(const DeviceScope &) = delete;
  DeviceScope &operator=(const DeviceScope &) = delete;

private:
  const Runtime &runtime_;
  int previous_ = -1;
  bool restore_ = false;
};

// KILN_HIP_SYNC=1: wait after each kernel, so a fault names its kernel
// (which a graph cannot do: the session then launches directly).
bool syncEachLaunch() { return gpu_driver::envFlag("KILN_HIP_SYNC"); }

class HipStream : public GpuStream {
public:
  HipStream(HipDevice &device, hipStream_t stream)
      : device_(device), stream_(stream) {}
  ~HipStream() override;

  kiln_status copyToDevice(void *device, const void *host,
                           uint64_t bytes) override;
  kiln_status copyToHost(void *host, const void *device,
                         uint64_t bytes) override;
  kiln_status copyOnDevice(void *dst, const void *src, uint64_t bytes) override;
  kiln_status launch(uint32_t kernel, const uint32_t grid[3],
                     const uint32_t block[3], uint32_t sharedBytes,
                     const uint64_t *args) override;
  kiln_status synchronize() override;

  bool supportsGraphs() const override;
  kiln_status beginCapture() override;
  kiln_status endCapture(bool keep) override;
  kiln_status replay() override;

  void timeKernels(bool on) override;
  std::vector<KernelTime> takeKernelTimes() override;

private:
  kiln_status check(hipError_t result, const std::string &what);

  HipDevice &device_;
  hipStream_t stream_;
  hipGraphExec_t graph_ = nullptr;
  gpu_driver::LaunchTimer<hipEvent_t> timer_;
};

class HipDevice : public GpuDevice {
public:
  ~HipDevice() override {
    if (!runtime_)
      return;
    DeviceScope scope = enter();
    if (weights_)
      runtime_->hipFree(weights_);
    if (module_)
      runtime_->hipModuleUnload(module_);
  }

  kiln_status open(const kiln_artifact_descriptor &descriptor,
                   const std::string &path, const void *hostWeights);

  kiln_status allocate(uint64_t bytes, const char *what, void **out) override {
    DeviceScope scope = enter();
    void *ptr = nullptr;
    hipError_t result = runtime_->hipMalloc(&ptr, bytes ? bytes : 1);
    if (result != hipSuccess) {
      size_t free = 0, total = 0;
      runtime_->hipMemGetInfo(&free, &total);
      bool oom = result == hipErrorOutOfMemory;
      return fail(oom ? KILN_ERROR_OUT_OF_MEMORY : KILN_ERROR_RUN_FAILED,
                  std::string(oom ? "out of GPU memory allocating "
                                  : "cannot allocate ") +
                      std::to_string(bytes) + " bytes for the " + what + " (" +
                      std::to_string(free) + " of " + std::to_string(total) +
                      " bytes free on " + name_ +
                      "): " + errorText(*runtime_, result));
    }
    *out = ptr;
    return KILN_OK;
  }

  void release(void *device) override {
    if (!device)
      return;
    DeviceScope scope = enter();
    runtime_->hipFree(device);
  }

  kiln_status createStream(ThreadPool *,
                           std::unique_ptr<GpuStream> &out) override {
    DeviceScope scope = enter();
    hipStream_t stream = nullptr;
    hipError_t result =
        runtime_->hipStreamCreateWithFlags(&stream, hipStreamNonBlocking);
    if (result != hipSuccess)
      return fail(KILN_ERROR_RUN_FAILED, "cannot create a HIP stream: " +
                                             errorText(*runtime_, result));
    out = std::make_unique<HipStream>(*this, stream);
    return KILN_OK;
  }

  std::string name() const override { return name_; }

  DeviceScope enter() const { return DeviceScope(*runtime_, ordinal_); }

  const Runtime *runtime_ = nullptr;
  const kiln_gpu_program *program_ = nullptr;
  std::vector<hipFunction_t> functions_;

private:
  int ordinal_ = 0;
  hipModule_t module_ = nullptr;
  std::string name_;
};

kiln_status HipDevice::open(const kiln_artifact_descriptor &descriptor,
                            const std::string &path, const void *hostWeights) {
  program_ = descriptor.gpu;
  std::string error;
  const Runtime *r = runtime(error);
  if (!r)
    return fail(KILN_ERROR_BAD_ARTIFACT,
                quoted(path) + " needs the HIP runtime: " + error);
  hipError_t result = r->hipInit(0);
  if (result != hipSuccess)
    return fail(
        KILN_ERROR_BAD_ARTIFACT,
        quoted(path) + " needs an AMD GPU: hipInit failed: " +
            (result == hipErrorNoDevice || result == hipErrorInvalidDevice
                 ? "no ROCm-capable device (" + errorText(*r, result) + ")"
                 : errorText(*r, result)));
  int count = 0;
  result = r->hipGetDeviceCount(&count);
  if (result != hipSuccess || count == 0)
    return fail(KILN_ERROR_BAD_ARTIFACT,
                quoted(path) + " needs an AMD GPU, and the HIP runtime finds " +
                    (result == hipSuccess ? std::string("none")
                                          : "none: " + errorText(*r, result)));
  if (const char *env = std::getenv("KILN_HIP_DEVICE"); env && *env) {
    char *end = nullptr;
    long value = std::strtol(env, &end, 10);
    if (*end || value < 0 || value >= count)
      return fail(KILN_ERROR_INVALID_ARGUMENT,
                  std::string("KILN_HIP_DEVICE=") + env +
                      " is not a GPU of this machine (it has " +
                      std::to_string(count) + ")");
    ordinal_ = int(value);
  }
  hipDevice_t device = 0;
  char deviceName[256] = {};
  if ((result = r->hipDeviceGet(&device, ordinal_)) != hipSuccess ||
      (result = r->hipDeviceGetName(deviceName, sizeof deviceName - 1,
                                    device)) != hipSuccess)
    return fail(KILN_ERROR_RUN_FAILED, "cannot open AMD GPU " +
                                           std::to_string(ordinal_) + ": " +
                                           errorText(*r, result));
  name_ = deviceName;
  runtime_ = r;
  DeviceScope scope = enter();

  if (program_->num_kernels > 0) {
    // The whole bundle: the runtime matches its code objects against the
    // GPU's target id (gfx arch, xnack, sramecc).
    result = r->hipModuleLoadData(&module_, program_->image);
    if (result == hipErrorNoBinaryForGpu || result == hipErrorInvalidImage ||
        result == hipErrorInvalidKernelFile)
      return fail(KILN_ERROR_BAD_ARTIFACT,
                  quoted(path) + " has no code this GPU (" + name_ +
                      ") can run: it was built for " + program_->archs + " (" +
                      errorText(*r, result) +
                      "); compile with --gpu-arch set to this GPU's gfx "
                      "arch (rocminfo lists it)");
    if (result != hipSuccess)
      return fail(KILN_ERROR_BAD_ARTIFACT, "cannot load the kernels of " +
                                               quoted(path) + " on " + name_ +
                                               ": " + errorText(*r, result));
    functions_.resize(program_->num_kernels);
    for (uint32_t k = 0; k < program_->num_kernels; ++k) {
      result = r->hipModuleGetFunction(&functions_[k], module_,
                                       program_->kernels[k].name);
      if (result != hipSuccess)
        return fail(KILN_ERROR_BAD_ARTIFACT,
                    quoted(path) + " has no " + describeKernel(*program_, k) +
                        " in its image: " + errorText(*r, result));
    }
  }
  if (descriptor.weights_size > 0) {
    if (kiln_status status =
            allocate(descriptor.weights_size, "weights", &weights_))
      return status;
    result = r->hipMemcpyHtoD(weights_, const_cast<void *>(hostWeights),
                              descriptor.weights_size);
    if (result != hipSuccess)
      return fail(KILN_ERROR_RUN_FAILED, "cannot copy the weights of " +
                                             quoted(path) + " to " + name_ +
                                             ": " + errorText(*r, result));
  }
  return KILN_OK;
}

HipStream::~HipStream() {
  DeviceScope scope = device_.enter();
  const Runtime &r = *device_.runtime_;
  takeKernelTimes();
  if (graph_)
    r.hipGraphExecDestroy(graph_);
  r.hipStreamDestroy(stream_);
}

kiln_status HipStream::check(hipError_t result, const std::string &what) {
  if (result == hipSuccess)
    return KILN_OK;
  return fail(result == hipErrorOutOfMemory ? KILN_ERROR_OUT_OF_MEMORY
                                            : KILN_ERROR_RUN_FAILED,
              what + ": " + errorText(*device_.runtime_, result));
}

kiln_status HipStream::copyToDevice(void *device, const void *host,
                                    uint64_t bytes) {
  DeviceScope scope = device_.enter();
  return check(device_.runtime_->hipMemcpyHtoDAsync(
                   device, const_cast<void *>(host), bytes, stream_),
               "copying an input to the GPU failed");
}

kiln_status HipStream::copyToHost(void *host, const void *device,
                                  uint64_t bytes) {
  DeviceScope scope = device_.enter();
  return check(device_.runtime_->hipMemcpyDtoHAsync(
                   host, const_cast<void *>(device), bytes, stream_),
               "copying an output from the GPU failed");
}

kiln_status HipStream::copyOnDevice(void *dst, const void *src,
                                    uint64_t bytes) {
  DeviceScope scope = device_.enter();
  return check(device_.runtime_->hipMemcpyDtoDAsync(
                   dst, const_cast<void *>(src), bytes, stream_),
               "a copy between device buffers failed");
}

kiln_status HipStream::launch(uint32_t kernel, const uint32_t grid[3],
                              const uint32_t block[3], uint32_t sharedBytes,
                              const uint64_t *args) {
  DeviceScope scope = device_.enter();
  const Runtime &r = *device_.runtime_;
  const kiln_gpu_program &program = *device_.program_;
  void *params[gpu_driver::kMaxParams];
  if (kiln_status status =
          gpu_driver::launchParams(program, kernel, args, params))
    return status;
  hipEvent_t start = nullptr, stop = nullptr;
  if (timer_.on()) {
    r.hipEventCreate(&start);
    r.hipEventCreate(&stop);
    r.hipEventRecord(start, stream_);
  }
  hipError_t result = r.hipModuleLaunchKernel(
      device_.functions_[kernel], grid[0], grid[1], grid[2], block[0], block[1],
      block[2], sharedBytes, stream_, params, nullptr);
  if (timer_.on()) {
    r.hipEventRecord(stop, stream_);
    timer_.add(kernel, start, stop);
  }
  if (result != hipSuccess)
    return check(result,
                 gpu_driver::launchFailure(program, kernel, grid, block));
  if (syncEachLaunch())
    return check(r.hipStreamSynchronize(stream_),
                 describeKernel(program, kernel) + " failed");
  return KILN_OK;
}

kiln_status HipStream::synchronize() {
  DeviceScope scope = device_.enter();
  return check(device_.runtime_->hipStreamSynchronize(stream_),
               "the GPU run failed (KILN_HIP_SYNC=1 names the kernel)");
}

bool HipStream::supportsGraphs() const {
  return device_.runtime_->hasGraphs() && !syncEachLaunch();
}

kiln_status HipStream::beginCapture() {
  DeviceScope scope = device_.enter();
  return check(device_.runtime_->hipStreamBeginCapture(
                   stream_, hipStreamCaptureModeThreadLocal),
               "cannot capture the run into a HIP graph");
}

kiln_status HipStream::endCapture(bool keep) {
  DeviceScope scope = device_.enter();
  const Runtime &r = *device_.runtime_;
  if (graph_) {
    r.hipGraphExecDestroy(graph_);
    graph_ = nullptr;
  }
  hipGraph_t graph = nullptr;
  if (kiln_status status = check(r.hipStreamEndCapture(stream_, &graph),
                                 "capturing the HIP graph failed"))
    return status;
  kiln_status status = KILN_OK;
  if (keep)
    status = check(r.hipGraphInstantiateWithFlags(&graph_, graph, 0),
                   "instantiating the HIP graph failed");
  if (graph)
    r.hipGraphDestroy(graph);
  return status;
}

kiln_status HipStream::replay() {
  DeviceScope scope = device_.enter();
  return check(device_.runtime_->hipGraphLaunch(graph_, stream_),
               "launching the HIP graph failed");
}

void HipStream::timeKernels(bool on) {
  takeKernelTimes(); // drops events from an unfinished earlier run
  if (on)
    timer_.start();
}

std::vector<KernelTime> HipStream::takeKernelTimes() {
  DeviceScope scope = device_.enter();
  const Runtime &r = *device_.runtime_;
  return timer_.take(r.hipEventElapsedTime, r.hipEventDestroy);
}

} // namespace

kiln_status openHipDevice(const kiln_artifact_descriptor &descriptor,
                          const std::string &path, const void *hostWeights,
                          std::unique_ptr<GpuDevice> &out) {
  auto device = std::make_unique<HipDevice>();
  if (kiln_status status = device->open(descriptor, path, hostWeights))
    return status;
  out = std::move(device);
  return KILN_OK;
}

} // namespace kiln::rt
