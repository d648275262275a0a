// The run of a GPU session: copies in, launches (or graph replay), copies
// out, one wait.
#include "gpu_session.h"

#include "status.h"
#include "tensor.h"

namespace kiln::rt {

GpuSession::~GpuSession() {
  stream_.reset();
  for (void *buffer : inputs_)
    device_.release(buffer);
  for (void *buffer : outputs_)
    device_.release(buffer);
  device_.release(arena_);
}

kiln_status GpuSession::init(ThreadPool *pool, bool useGraphs,
                             kiln_runtime_callbacks &callbacks) {
  useGraphs_ = useGraphs;
  if (kiln_status status = device_.createStream(pool, stream_))
    return status;
  if (kiln_status status =
          device_.allocate(descriptor_.arena_size, "device arena", &arena_))
    return status;
  auto allocateAll = [&](const kiln_tensor_desc *descs, uint32_t count,
                         const char *kind, std::vector<void *> &buffers,
                         std::vector<uint64_t> &sizes) -> kiln_status {
    buffers.assign(count, nullptr);
    sizes.assign(count, 0);
    for (uint32_t i = 0; i < count; ++i) {
      size_t elements = 0, bytes = 0;
      if (kiln_status status =
              denseSize(static_cast<kiln_dtype>(descs[i].dtype), descs[i].rank,
                        descs[i].shape, &elements, &bytes))
        return status;
      std::string what = std::string(kind) + " " + quoted(descs[i].name);
      if (kiln_status status =
              device_.allocate(bytes, what.c_str(), &buffers[i]))
        return status;
      sizes[i] = bytes;
    }
    return KILN_OK;
  };
  if (kiln_status status =
          allocateAll(descriptor_.inputs, descriptor_.num_inputs, "input",
                      inputs_, inputBytes_))
    return status;
  if (kiln_status status =
          allocateAll(descriptor_.outputs, descriptor_.num_outputs, "output",
                      outputs_, outputBytes_))
    return status;
  callbacks.context = this;
  callbacks.alloc = nullptr; // GPU artifacts have no run-time sized buffers
  callbacks.fail = &GpuSession::failCallback;
  callbacks.device_weights = device_.weights();
  callbacks.launch = &GpuSession::launchCallback;
  return KILN_OK;
}

int32_t GpuSession::launchCallback(void *context, uint32_t kernel,
                                   uint32_t gridX, uint32_t gridY,
                                   uint32_t gridZ, uint32_t blockX,
                                   uint32_t blockY, uint32_t blockZ,
                                   uint32_t sharedBytes, const uint64_t *args) {
  auto *self = static_cast<GpuSession *>(context);
  // After a failure nothing more is launched; the run reports the first.
  if (self->launchStatus_ != KILN_OK)
    return 1;
  const kiln_gpu_program &program = *self->descriptor_.gpu;
  if (kernel >= program.num_kernels) {
    self->launchStatus_ = KILN_ERROR_BAD_ARTIFACT;
    self->launchError_ = "the artifact launched kernel " +
                         std::to_string(kernel) + " of " +
                         std::to_string(program.num_kernels);
    return 1;
  }
  uint32_t grid[3] = {gridX, gridY, gridZ};
  uint32_t block[3] = {blockX, blockY, blockZ};
  // An empty grid (a zero-sized tensor) is no work; the driver refuses it.
  if (gridX == 0 || gridY == 0 || gridZ == 0)
    return 0;
  kiln_status status =
      self->stream_->launch(kernel, grid, block, sharedBytes, args);
  if (status != KILN_OK) {
    self->launchStatus_ = status;
    self->launchError_ = kiln_last_error();
    return 1;
  }
  return 0;
}

void GpuSession::failCallback(void *context, const char *message) {
  auto *self = static_cast<GpuSession *>(context);
  if (self->launchStatus_ == KILN_OK) {
    self->launchStatus_ = KILN_ERROR_RUN_FAILED;
    self->launchError_ = message ? message : "a run-time check failed";
  }
}

kiln_status GpuSession::runEntry(const kiln_runtime_callbacks &callbacks) {
  launchStatus_ = KILN_OK;
  launchError_.clear();
  int32_t code =
      descriptor_.entry(inputs_.data(), outputs_.data(), arena_, &callbacks);
  if (launchStatus_ != KILN_OK)
    return fail(launchStatus_, "the model's run failed: " + launchError_);
  if (code != 0)
    return fail(KILN_ERROR_RUN_FAILED,
                "the model's entry point failed with code " +
                    std::to_string(code));
  return KILN_OK;
}

kiln_status GpuSession::run(const kiln_runtime_callbacks &callbacks,
                            const void *const *inputs, void *const *outputs,
                            bool deviceBuffers) {
  for (uint32_t i = 0; i < descriptor_.num_inputs; ++i) {
    if (deviceBuffers && inputs[i] == inputs_[i])
      continue; // the session's own buffer (kiln_session_device_input)
    kiln_status status =
        deviceBuffers
            ? stream_->copyOnDevice(inputs_[i], inputs[i], inputBytes_[i])
            : stream_->copyToDevice(inputs_[i], inputs[i], inputBytes_[i]);
    if (status)
      return status;
  }
  bool timing = timeNextRun_;
  timeNextRun_ = false;
  if (graphReady_ && !timing) {
    if (kiln_status status = stream_->replay())
      return status;
  } else {
    bool capture = useGraphs_ && stream_->supportsGraphs() && !timing;
    stream_->timeKernels(timing);
    // A platform that cannot capture (a HIP runtime without stream
    // capture of module launches) runs every launch directly from now on.
    if (capture && stream_->beginCapture() != KILN_OK) {
      capture = false;
      useGraphs_ = false;
    }
    kiln_status status = runEntry(callbacks);
    std::string message = status ? kiln_last_error() : "";
    if (capture) {
      // A failed run's capture is ended and dropped, not kept.
      kiln_status captured = stream_->endCapture(/*keep=*/status == KILN_OK);
      if (!status && captured)
        return captured;
      graphReady_ = !status;
      if (!status)
        status = stream_->replay();
    }
    if (status)
      return fail(status, message.empty() ? kiln_last_error() : message);
  }
  for (uint32_t i = 0; i < descriptor_.num_outputs; ++i) {
    if (deviceBuffers && outputs[i] == outputs_[i])
      continue;
    kiln_status status =
        deviceBuffers
            ? stream_->copyOnDevice(outputs[i], outputs_[i], outputBytes_[i])
            : stream_->copyToHost(outputs[i], outputs_[i], outputBytes_[i]);
    if (status)
      return status;
  }
  if (kiln_status status = stream_->synchronize())
    return status;
  if (timing)
    times_ = stream_->takeKernelTimes();
  return KILN_OK;
}

} // namespace kiln::rt
