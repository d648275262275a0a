// CUDA artifacts through the driver API: the fatbin loaded once per model
// (the driver picks the cubin for the GPU, or JITs the PTX), the weights
// uploaded once, a non-blocking stream per session whose launches are
// captured into a CUDA graph on the first run and replayed afterwards.
#include "cuda_driver.h"
#include "gpu_device.h"
#include "status.h"

#include <cstdlib>
#include <cstring>
#include <vector>

namespace kiln::rt {
namespace {

using namespace cuda;

class CudaDevice;

// Makes a context current on the calling thread for the scope's life and
// then restores whatever was current before, so a service's own CUDA work
// on the same thread (the runtime API, other contexts) is not redirected.
class ContextScope {
public:
  ContextScope(const Driver &driver, CUcontext context) : driver_(driver) {
    if (driver_.cuCtxGetCurrent(&previous_) != CUDA_SUCCESS)
      previous_ = nullptr;
    restore_ = previous_ != context;
    if (restore_)
      driver_.cuCtxSetCurrent(context);
  }
  ~ContextScope() {
    if (restore_)
      driver_.cuCtxSetCurrent(previous_);
  }
  ContextScope(const ContextScope &) = delete;
  ContextScope &operator=(const ContextScope &) = delete;

private:
  const Driver &driver_;
  CUcontext previous_ = nullptr;
  bool restore_ = false;
};

// KILN_CUDA_SYNC=1: wait after each kernel, so a fault names its kernel
// (which a CUDA graph cannot do: the session then launches directly).
bool syncEachLaunch() { return gpu_driver::envFlag("KILN_CUDA_SYNC"); }

class CudaStream : public GpuStream {
public:
  CudaStream(CudaDevice &device, CUstream stream)
      : device_(device), stream_(stream) {}
  ~CudaStream() override;

  kiln_status copyToDevice(void *device, const void *host,
                           uint64_t bytes) override;
  kiln_status copyToHost(void *host, const void *device,
                         uint64_t bytes) override;
  kiln_status copyOnDevice(void *dst, const void *src, uint64_t bytes) override;
  kiln_status launch(uint32_t kernel, const uint32_t grid[3],
                     const uint32_t block[3], uint32_t sharedBytes,
                     const uint64_t *args) override;
  kiln_status synchronize() override;

  bool supportsGraphs() const override { return !syncEachLaunch(); }
  kiln_status beginCapture() override;
  kiln_status endCapture(bool keep) override;
  kiln_status replay() override;

  void timeKernels(bool on) override;
  std::vector<KernelTime> takeKernelTimes() override;

private:
  kiln_status check(CUresult result, const std::string &what);

  CudaDevice &device_;
  CUstream stream_;
  CUgraphExec graph_ = nullptr;
  gpu_driver::LaunchTimer<CUevent> timer_;
};

class CudaDevice : public GpuDevice {
public:
  ~CudaDevice() override {
    if (!driver_)
      return;
    ContextScope scope = enter();
    if (weights_)
      driver_->cuMemFree(reinterpret_cast<CUdeviceptr>(weights_));
    if (module_)
      driver_->cuModuleUnload(module_);
    if (context_)
      driver_->cuDevicePrimaryCtxRelease(device_);
  }

  kiln_status open(const kiln_artifact_descriptor &descriptor,
                   const std::string &path, const void *hostWeights);

  kiln_status allocate(uint64_t bytes, const char *what, void **out) override {
    ContextScope scope = enter();
    CUdeviceptr ptr = 0;
    CUresult result = driver_->cuMemAlloc(&ptr, bytes ? bytes : 1);
    if (result != CUDA_SUCCESS) {
      size_t free = 0, total = 0;
      driver_->cuMemGetInfo(&free, &total);
      bool oom = result == CUDA_ERROR_OUT_OF_MEMORY;
      return fail(oom ? KILN_ERROR_OUT_OF_MEMORY : KILN_ERROR_RUN_FAILED,
                  std::string(oom ? "out of GPU memory allocating "
                                  : "cannot allocate ") +
                      std::to_string(bytes) + " bytes for the " + what + " (" +
                      std::to_string(free) + " of " + std::to_string(total) +
                      " bytes free on " + name_ +
                      "): " + errorText(*driver_, result));
    }
    *out = reinterpret_cast<void *>(ptr);
    return KILN_OK;
  }

  void release(void *device) override {
    if (!device)
      return;
    ContextScope scope = enter();
    driver_->cuMemFree(reinterpret_cast<CUdeviceptr>(device));
  }

  kiln_status createStream(ThreadPool *,
                           std::unique_ptr<GpuStream> &out) override {
    ContextScope scope = enter();
    CUstream stream = nullptr;
    CUresult result = driver_->cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING);
    if (result != CUDA_SUCCESS)
      return fail(KILN_ERROR_RUN_FAILED, "cannot create a CUDA stream: " +
                                             errorText(*driver_, result));
    out = std::make_unique<CudaStream>(*this, stream);
    return KILN_OK;
  }

  std::string name() const override { return name_; }

  // The context is current per thread: every entry point holds a scope
  // that makes it current on the calling thread.
  ContextScope enter() const { return ContextScope(*driver_, context_); }

  const Driver *driver_ = nullptr;
  const kiln_gpu_program *program_ = nullptr;
  std::vector<CUfunction> functions_;

private:
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  CUmodule module_ = nullptr;
  std::string name_;
};

kiln_status CudaDevice::open(const kiln_artifact_descriptor &descriptor,
                             const std::string &path, const void *hostWeights) {
  program_ = descriptor.gpu;
  std::string error;
  driver_ = driver(error);
  if (!driver_)
    return fail(KILN_ERROR_BAD_ARTIFACT,
                quoted(path) + " needs a CUDA driver: " + error);
  CUresult result = driver_->cuInit(0);
  int count = 0;
  if (result == CUDA_SUCCESS)
    result = driver_->cuDeviceGetCount(&count);
  if (result != CUDA_SUCCESS || count == 0) {
    driver_ = nullptr;
    return fail(KILN_ERROR_BAD_ARTIFACT,
                quoted(path) + " needs a CUDA GPU, and the driver finds " +
                    (result == CUDA_SUCCESS
                         ? std::string("none")
                         : "none: " + errorText(*driver(error), result)));
  }
  int ordinal = 0;
  if (const char *env = std::getenv("KILN_CUDA_DEVICE"); env && *env)
    ordinal = std::atoi(env);
  if (ordinal < 0 || ordinal >= count) {
    driver_ = nullptr;
    return fail(KILN_ERROR_INVALID_ARGUMENT,
                "KILN_CUDA_DEVICE=" + std::to_string(ordinal) +
                    " is not a GPU of this machine (it has " +
                    std::to_string(count) + ")");
  }
  char deviceName[256] = {};
  int major = 0, minor = 0;
  if ((result = driver_->cuDeviceGet(&device_, ordinal)) != CUDA_SUCCESS ||
      (result = driver_->cuDeviceGetName(deviceName, sizeof deviceName - 1,
                                         device_)) != CUDA_SUCCESS ||
      (result = driver_->cuDeviceGetAttribute(
           &major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device_)) !=
          CUDA_SUCCESS ||
      (result = driver_->cuDeviceGetAttribute(
           &minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device_)) !=
          CUDA_SUCCESS ||
      (result = driver_->cuDevicePrimaryCtxRetain(&context_, device_)) !=
          CUDA_SUCCESS) {
    const Driver *d = driver_;
    driver_ = nullptr;
    return fail(KILN_ERROR_RUN_FAILED, "cannot open CUDA GPU " +
                                           std::to_string(ordinal) + ": " +
                                           errorText(*d, result));
  }
  name_ = std::string(deviceName) + " (sm_" + std::to_string(major) +
          std::to_string(minor) + ")";
  ContextScope scope = enter();

  if (program_->num_kernels > 0) {
    result = driver_->cuModuleLoadData(&module_, program_->image);
    if (result == CUDA_ERROR_NO_BINARY_FOR_GPU ||
        result == CUDA_ERROR_INVALID_PTX ||
        result == CUDA_ERROR_UNSUPPORTED_PTX_VERSION)
      return fail(KILN_ERROR_BAD_ARTIFACT,
                  quoted(path) + " has no code this GPU (" + name_ +
                      ") can run: it was built for " + program_->archs + " (" +
                      errorText(*driver_, result) +
                      "); compile with --gpu-arch=sm_" + std::to_string(major) +
                      std::to_string(minor));
    if (result != CUDA_SUCCESS)
      return fail(KILN_ERROR_BAD_ARTIFACT,
                  "cannot load the kernels of " + quoted(path) + " on " +
                      name_ + ": " + errorText(*driver_, result));
    functions_.resize(program_->num_kernels);
    for (uint32_t k = 0; k < program_->num_kernels; ++k) {
      result = driver_->cuModuleGetFunction(&functions_[k], module_,
                                            program_->kernels[k].name);
      if (result != CUDA_SUCCESS)
        return fail(KILN_ERROR_BAD_ARTIFACT,
                    quoted(path) + " has no " + describeKernel(*program_, k) +
                        " in its image: " + errorText(*driver_, result));
    }
  }
  if (descriptor.weights_size > 0) {
    if (kiln_status status =
            allocate(descriptor.weights_size, "weights", &weights_))
      return status;
    result = driver_->cuMemcpyHtoD(reinterpret_cast<CUdeviceptr>(weights_),
                                   hostWeights, descriptor.weights_size);
    if (result != CUDA_SUCCESS)
      return fail(KILN_ERROR_RUN_FAILED,
                  "cannot copy the weights of " + quoted(path) + " to " +
                      name_ + ": " + errorText(*driver_, result));
  }
  return KILN_OK;
}

CudaStream::~CudaStream() {
  ContextScope scope = device_.enter();
  const Driver &d = *device_.driver_;
  takeKernelTimes();
  if (graph_)
    d.cuGraphExecDestroy(graph_);
  d.cuStreamDestroy(stream_);
}

kiln_status CudaStream::check(CUresult result, const std::string &what) {
  if (result == CUDA_SUCCESS)
    return KILN_OK;
  return fail(result == CUDA_ERROR_OUT_OF_MEMORY ? KILN_ERROR_OUT_OF_MEMORY
                                                 : KILN_ERROR_RUN_FAILED,
              what + ": " + errorText(*device_.driver_, result));
}

kiln_status CudaStream::copyToDevice(void *device, const void *host,
                                     uint64_t bytes) {
  ContextScope scope = device_.enter();
  return check(device_.driver_->cuMemcpyHtoDAsync(
                   reinterpret_cast<CUdeviceptr>(device), host, bytes, stream_),
               "copying an input to the GPU failed");
}

kiln_status CudaStream::copyToHost(void *host, const void *device,
                                   uint64_t bytes) {
  ContextScope scope = device_.enter();
  return check(device_.driver_->cuMemcpyDtoHAsync(
                   host, reinterpret_cast<CUdeviceptr>(device), bytes, stream_),
               "copying an output from the GPU failed");
}

kiln_status CudaStream::copyOnDevice(void *dst, const void *src,
                                     uint64_t bytes) {
  ContextScope scope = device_.enter();
  return check(device_.driver_->cuMemcpyDtoDAsync(
                   reinterpret_cast<CUdeviceptr>(dst),
                   reinterpret_cast<CUdeviceptr>(src), bytes, stream_),
               "a copy between device buffers failed");
}

kiln_status CudaStream::launch(uint32_t kernel, const uint32_t grid[3],
                               const uint32_t block[3], uint32_t sharedBytes,
                               const uint64_t *args) {
  ContextScope scope = device_.enter();
  const Driver &d = *device_.driver_;
  const kiln_gpu_program &program = *device_.program_;
  void *params[gpu_driver::kMaxParams];
  if (kiln_status status =
          gpu_driver::launchParams(program, kernel, args, params))
    return status;
  CUevent start = nullptr, stop = nullptr;
  if (timer_.on()) {
    d.cuEventCreate(&start, 0);
    d.cuEventCreate(&stop, 0);
    d.cuEventRecord(start, stream_);
  }
  CUresult result = d.cuLaunchKernel(
      device_.functions_[kernel], grid[0], grid[1], grid[2], block[0], block[1],
      block[2], sharedBytes, stream_, params, nullptr);
  if (timer_.on()) {
    d.cuEventRecord(stop, stream_);
    timer_.add(kernel, start, stop);
  }
  if (result != CUDA_SUCCESS)
    return check(result,
                 gpu_driver::launchFailure(program, kernel, grid, block));
  if (syncEachLaunch())
    return check(d.cuStreamSynchronize(stream_),
                 describeKernel(program, kernel) + " failed");
  return KILN_OK;
}

kiln_status CudaStream::synchronize() {
  ContextScope scope = device_.enter();
  return check(device_.driver_->cuStreamSynchronize(stream_),
               "the GPU run failed (KILN_CUDA_SYNC=1 names the kernel)");
}

kiln_status CudaStream::beginCapture() {
  ContextScope scope = device_.enter();
  return check(device_.driver_->cuStreamBeginCapture(
                   stream_, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
               "cannot capture the run into a CUDA graph");
}

kiln_status CudaStream::endCapture(bool keep) {
  ContextScope scope = device_.enter();
  const Driver &d = *device_.driver_;
  if (graph_) {
    d.cuGraphExecDestroy(graph_);
    graph_ = nullptr;
  }
  CUgraph graph = nullptr;
  if (kiln_status status = check(d.cuStreamEndCapture(stream_, &graph),
                                 "capturing the CUDA graph failed"))
    return status;
  kiln_status status = KILN_OK;
  if (keep)
    status = check(d.cuGraphInstantiateWithFlags(&graph_, graph, 0),
                   "instantiating the CUDA graph failed");
  if (graph)
    d.cuGraphDestroy(graph);
  return status;
}

kiln_status CudaStream::replay() {
  ContextScope scope = device_.enter();
  return check(device_.driver_->cuGraphLaunch(graph_, stream_),
               "launching the CUDA graph failed");
}

void CudaStream::timeKernels(bool on) {
  takeKernelTimes(); // drops events from an unfinished earlier run
  if (on)
    timer_.start();
}

std::vector<KernelTime> CudaStream::takeKernelTimes() {
  ContextScope scope = device_.enter();
  const Driver &d = *device_.driver_;
  return timer_.take(d.cuEventElapsedTime, d.cuEventDestroy);
}

} // namespace

kiln_status openCudaDevice(const kiln_artifact_descriptor &descriptor,
                           const std::string &path, const void *hostWeights,
                           std::unique_ptr<GpuDevice> &out) {
  auto device = std::make_unique<CudaDevice>();
  if (kiln_status status = device->open(descriptor, path, hostWeights))
    return status;
  out = std::move(device);
  return KILN_OK;
}

} // namespace kiln::rt
