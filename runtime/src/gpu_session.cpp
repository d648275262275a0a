// The run of a GPU session: copies in, launches (or graph replay), copies
// out, one wait.
#include "gpu_session.h"

#include "memory_limit.h"
#include "status.h"
#include "tensor.h"

#include <algorithm>

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
  // Buffers of a run-time shape are allocated by the runs that need them.
  auto allocateAll = [&](const kiln_tensor_desc *descs, uint32_t count,
                         const char *kind, std::vector<void *> &buffers,
                         std::vector<uint64_t> &sizes) -> kiln_status {
    buffers.assign(count, nullptr);
    sizes.assign(count, 0);
    for (uint32_t i = 0; i < count; ++i) {
      if (hasRunTimeExtent(descs[i])) {
        runTimeShapes_ = true;
        continue;
      }
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
  entryInputs_.assign(descriptor_.num_inputs, nullptr);
  inputRecords_.resize(descriptor_.num_inputs);
  graphRecords_.resize(descriptor_.num_outputs);
  callbacks.context = this;
  callbacks.alloc = &GpuSession::allocCallback;
  callbacks.fail = &GpuSession::failCallback;
  callbacks.device_weights = device_.weights();
  callbacks.launch = &GpuSession::launchCallback;
  return KILN_OK;
}

void *GpuSession::allocCallback(void *context, uint64_t bytes) {
  auto *self = static_cast<GpuSession *>(context);
  void *data = self->scratch_.allocate(bytes);
  if (!data && self->launchStatus_ == KILN_OK) {
    self->launchStatus_ = KILN_ERROR_OUT_OF_MEMORY;
    self->launchError_ = "out of memory: the run needs a device buffer of " +
                         formatBytes(bytes) + " (" + kiln_last_error() + ")";
  }
  return data;
}

kiln_status GpuSession::copyInputs(const void *const *inputs,
                                   bool deviceBuffers, bool &moved) {
  moved = false;
  extents_.clear();
  for (uint32_t i = 0; i < descriptor_.num_inputs; ++i) {
    const kiln_tensor_desc &desc = descriptor_.inputs[i];
    if (hasRunTimeExtent(desc)) {
      // kiln_session_run_device refuses such artifacts.
      const auto *record = static_cast<const int64_t *>(inputs[i]);
      size_t elements = 0, bytes = 0;
      if (kiln_status status =
              denseSize(static_cast<kiln_dtype>(desc.dtype), desc.rank,
                        record + 1, &elements, &bytes))
        return status;
      if (bytes > inputBytes_[i] || !inputs_[i]) {
        device_.release(inputs_[i]);
        inputs_[i] = nullptr;
        inputBytes_[i] = 0;
        std::string what = "input " + quoted(desc.name);
        if (kiln_status status =
                device_.allocate(std::max<uint64_t>(bytes, KILN_ALIGNMENT),
                                 what.c_str(), &inputs_[i]))
          return status;
        inputBytes_[i] = std::max<uint64_t>(bytes, KILN_ALIGNMENT);
        moved = true;
        // A graph captured before read the old buffer (whatever this run
        // turns out to be: timed, failed or another shape).
        graphReady_ = false;
      }
      const void *data =
          reinterpret_cast<const void *>(static_cast<uintptr_t>(record[0]));
      if (bytes)
        if (kiln_status status = stream_->copyToDevice(inputs_[i], data, bytes))
          return status;
      std::vector<int64_t> &device = inputRecords_[i];
      device.assign(record, record + 1 + desc.rank);
      device[0] = static_cast<int64_t>(reinterpret_cast<uintptr_t>(inputs_[i]));
      extents_.insert(extents_.end(), record + 1, record + 1 + desc.rank);
      entryInputs_[i] = device.data();
      continue;
    }
    entryInputs_[i] = inputs_[i];
    if (deviceBuffers && inputs[i] == inputs_[i])
      continue; // the session's own buffer (kiln_session_device_input)
    kiln_status status =
        deviceBuffers
            ? stream_->copyOnDevice(inputs_[i], inputs[i], inputBytes_[i])
            : stream_->copyToDevice(inputs_[i], inputs[i], inputBytes_[i]);
    if (status)
      return status;
  }
  return KILN_OK;
}

void *GpuSession::deviceInput(size_t i) const {
  return i < inputs_.size() && !hasRunTimeExtent(descriptor_.inputs[i])
             ? inputs_[i]
             : nullptr;
}

kiln_status GpuSession::copyToHost(void *host, const void *device,
                                   uint64_t bytes) {
  if (bytes == 0)
    return KILN_OK;
  if (kiln_status status = stream_->copyToHost(host, device, bytes))
    return status;
  return stream_->synchronize();
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
  int32_t code = descriptor_.entry(entryInputs_.data(), entryOutputs_.data(),
                                   arena_, &callbacks);
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
  // The last run is done with its scratch (the run synchronized).
  bool scratchMoved = scratch_.reset();
  bool inputsMoved = false;
  if (kiln_status status = copyInputs(inputs, deviceBuffers, inputsMoved))
    return status;
  entryOutputs_.assign(descriptor_.num_outputs, nullptr);
  for (uint32_t i = 0; i < descriptor_.num_outputs; ++i)
    entryOutputs_[i] =
        hasRunTimeExtent(descriptor_.outputs[i]) ? outputs[i] : outputs_[i];
  bool moved = scratchMoved || inputsMoved;
  bool timing = timeNextRun_;
  timeNextRun_ = false;
  bool sameShapes = extents_ == lastExtents_ && !moved;
  if (graphReady_ && !timing && extents_ == graphExtents_ && !moved &&
      scratch_.generation() == graphGeneration_) {
    if (kiln_status status = stream_->replay())
      return status;
    // The entry did not run: its records are those of the captured run.
    for (uint32_t i = 0; i < descriptor_.num_outputs; ++i)
      if (!graphRecords_[i].empty())
        std::copy(graphRecords_[i].begin(), graphRecords_[i].end(),
                  static_cast<int64_t *>(outputs[i]));
  } else {
    // With run-time shapes, a graph is captured by a run that repeats the
    // last one's extents with the same input buffers and scratch chunk (the
    // last run's buffers fit in it): its launches and addresses are those
    // the following runs at these extents would make.
    bool capture = useGraphs_ && stream_->supportsGraphs() && !timing &&
                   (!runTimeShapes_ || sameShapes);
    stream_->timeKernels(timing);
    // A platform that cannot capture (a HIP runtime without stream
    // capture of module launches) runs every launch directly from now on.
    if (capture && stream_->beginCapture() != KILN_OK) {
      capture = false;
      useGraphs_ = false;
    }
    uint64_t generation = scratch_.generation();
    kiln_status status = runEntry(callbacks);
    bool held = scratch_.generation() == generation;
    std::string message = status ? kiln_last_error() : "";
    if (capture) {
      // A failed run's capture is ended and dropped, not kept.
      kiln_status captured = stream_->endCapture(/*keep=*/status == KILN_OK);
      if (!status && captured)
        return captured;
      // (The scratch does not grow during a capture: the last run at these
      // extents fit in it. Should it, the graph would not be kept.)
      graphReady_ = !status && held;
      graphExtents_ = extents_;
      graphGeneration_ = scratch_.generation();
      for (uint32_t i = 0; i < descriptor_.num_outputs; ++i) {
        graphRecords_[i].clear();
        if (hasRunTimeExtent(descriptor_.outputs[i])) {
          const auto *record = static_cast<const int64_t *>(outputs[i]);
          graphRecords_[i].assign(record,
                                  record + 1 + descriptor_.outputs[i].rank);
        }
      }
      if (!status)
        status = stream_->replay();
    } else if (!timing && runTimeShapes_ && !sameShapes) {
      // Another shape: the graph of the last one no longer applies.
      graphReady_ = false;
    }
    if (status)
      return fail(status, message.empty() ? kiln_last_error() : message);
  }
  lastExtents_ = extents_;
  for (uint32_t i = 0; i < descriptor_.num_outputs; ++i) {
    if (hasRunTimeExtent(descriptor_.outputs[i]))
      continue; // copied by copyToHost from the record's address
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
