// Sessions: one arena and one thread pool each, so independent sessions of
// a model run concurrently without sharing mutable state.
#include "aligned_buffer.h"
#include "gpu_session.h"
#include "memory_limit.h"
#include "model.h"
#include "scratch.h"
#include "status.h"
#include "string_kernels.h"
#include "tensor.h"
#include "thread_pool.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <system_error>

using namespace kiln::rt;

struct kiln_session {
  const kiln_model *model = nullptr;
  void *arena = nullptr;
  std::unique_ptr<ThreadPool> pool;
  kiln_runtime_callbacks callbacks{};
  // Reused by every run so the run path allocates only the outputs.
  std::vector<void *> inputData, outputData;
  std::vector<unsigned char> given;
  // Run-time sized buffers, and the {data, dims} records of outputs whose
  // shape the run computes (abi.h).
  Scratch scratch;
  std::vector<std::vector<int64_t>> dynamicRecords;
  // Inputs with symbolic dims: their {data, dims} records, and per symbol
  // the extent of the run and the input that set it.
  std::vector<std::vector<int64_t>> inputRecords;
  std::vector<int64_t> symbolValues;
  std::vector<uint32_t> symbolSetBy;
  // Set by the fail callback during a run.
  std::string runError;
  bool outOfMemory = false;
  // GPU artifacts: the stream, device arena and buffers of this session.
  std::unique_ptr<GpuSession> gpu;
  // Set while a run is in progress: a second thread's run is refused.
  std::atomic<bool> running{false};

  ~kiln_session() {
    gpu.reset();
    freeAligned(arena);
  }
};

namespace {
/// Holds a session for one run; a run on another thread at the same time
/// is refused rather than sharing the arena and buffers.
class RunGuard {
public:
  explicit RunGuard(kiln_session &session)
      : session(session), owned(!session.running.exchange(true)) {}
  ~RunGuard() {
    if (owned)
      session.running = false;
  }
  bool owns() const { return owned; }

private:
  kiln_session &session;
  bool owned;
};

kiln_status sessionBusy(const char *call) {
  return fail(KILN_ERROR_INVALID_ARGUMENT,
              std::string(call) +
                  ": the session is running on another thread; use one "
                  "session per thread (sessions of one model run in "
                  "parallel)");
}
} // namespace

void *kiln::rt::scratchAlloc(void *context, uint64_t bytes) {
  auto *session = static_cast<kiln_session *>(context);
  // A big request (symbolic dims at a large size) is checked against the
  // memory this machine can give now: Linux would hand out the address
  // space and kill the process when the run touches it.
  constexpr uint64_t kCheckAbove = uint64_t(64) << 20;
  MemoryAvailable memory;
  if (bytes >= kCheckAbove)
    memory = availableMemory();
  void *data =
      bytes <= memory.bytes ? session->scratch.allocate(bytes) : nullptr;
  if (!data) {
    // The generated code checks for NULL and ends the run (failing with
    // the first message recorded, this one).
    session->outOfMemory = true;
    if (session->runError.empty())
      session->runError = "out of memory: the run needs a buffer of " +
                          formatBytes(bytes) +
                          (memory.bytes != UINT64_MAX
                               ? ", but only " + formatBytes(memory.bytes) +
                                     " are available (" + memory.source + ")"
                               : std::string(" and none is left"));
  }
  return data;
}

void kiln::rt::checkFailed(void *context, const char *message) {
  auto *session = static_cast<kiln_session *>(context);
  if (session->runError.empty())
    session->runError = message ? message : "a run-time check failed";
}

namespace {

constexpr unsigned kMaxThreads = ThreadPool::kMaxThreads;

// Creates output `desc` from the record the entry filled: its shape, and a
// copy of the data the record points to.
kiln_status copyHostMemory(void *host, const void *data, uint64_t bytes) {
  std::memcpy(host, data, bytes);
  return KILN_OK;
}

template <typename Copy = decltype(&copyHostMemory)>
kiln_status takeDynamicOutput(const kiln_tensor_desc &desc,
                              const std::vector<int64_t> &record,
                              kiln_tensor **out, Copy copy = &copyHostMemory) {
  const int64_t *shape = record.data() + 1;
  for (int32_t d = 0; d < desc.rank; ++d)
    if (shape[d] < 0 || (desc.shape[d] >= 0 && shape[d] != desc.shape[d]))
      return fail(KILN_ERROR_RUN_FAILED,
                  "output " + quoted(desc.name) + " has run-time shape " +
                      shapeString(shape, desc.rank) + ", expected " +
                      shapeString(desc.shape, desc.rank));
  kiln_status status = kiln_tensor_create(static_cast<kiln_dtype>(desc.dtype),
                                          desc.rank, shape, out);
  if (status != KILN_OK)
    return status;
  if ((*out)->bytes)
    status =
        copy((*out)->data,
             reinterpret_cast<const void *>(static_cast<uintptr_t>(record[0])),
             (*out)->bytes);
  if (status != KILN_OK) {
    kiln_tensor_destroy(*out);
    *out = nullptr;
  }
  return status;
}

std::string inputNames(const kiln_artifact_descriptor &descriptor) {
  std::string names;
  for (uint32_t i = 0; i < descriptor.num_inputs; ++i)
    names += (i ? ", " : "") + std::string(descriptor.inputs[i].name);
  return names;
}

// Matches the caller's named inputs to descriptor slots and checks each one.
kiln_status bindSymbolicInput(kiln_session &session, uint32_t slot,
                              const kiln_tensor &tensor);

kiln_status bindInputs(kiln_session &session, const kiln_named_tensor *inputs,
                       size_t numInputs) {
  const kiln_artifact_descriptor &descriptor = *session.model->descriptor;
  if (numInputs > 0 && !inputs)
    return fail(KILN_ERROR_INVALID_ARGUMENT, "inputs is NULL");
  std::fill(session.given.begin(), session.given.end(), 0);
  std::fill(session.symbolValues.begin(), session.symbolValues.end(), -1);
  for (size_t i = 0; i < numInputs; ++i) {
    if (!inputs[i].name)
      return fail(KILN_ERROR_INVALID_ARGUMENT,
                  "input " + std::to_string(i) + " has a NULL name");
    std::string name = inputs[i].name;
    uint32_t slot = 0;
    while (slot < descriptor.num_inputs &&
           std::strcmp(descriptor.inputs[slot].name, inputs[i].name) != 0)
      ++slot;
    if (slot == descriptor.num_inputs)
      return fail(KILN_ERROR_INVALID_ARGUMENT,
                  "unknown input " + quoted(name) +
                      " (model inputs: " + inputNames(descriptor) + ")");
    if (session.given[slot])
      return fail(KILN_ERROR_INVALID_ARGUMENT,
                  "input " + quoted(name) + " given twice");
    session.given[slot] = 1;
    const kiln_tensor *tensor = inputs[i].tensor;
    if (!tensor)
      return fail(KILN_ERROR_INVALID_ARGUMENT,
                  "input " + quoted(name) + ": tensor is NULL");
    const kiln_tensor_desc &desc = descriptor.inputs[slot];
    auto expectedDtype = static_cast<kiln_dtype>(desc.dtype);
    if (tensor->dtype != expectedDtype)
      return fail(KILN_ERROR_INVALID_ARGUMENT,
                  "input " + quoted(name) + ": expected " +
                      kiln_dtype_name(expectedDtype) + ", got " +
                      kiln_dtype_name(tensor->dtype));
    if (hasRunTimeExtent(desc)) {
      if (kiln_status status = bindSymbolicInput(session, slot, *tensor))
        return status;
      continue;
    }
    bool sameShape =
        tensor->shape.size() == static_cast<size_t>(desc.rank) &&
        std::equal(tensor->shape.begin(), tensor->shape.end(), desc.shape);
    if (!sameShape)
      return fail(KILN_ERROR_INVALID_ARGUMENT,
                  "input " + quoted(name) + ": expected shape " +
                      shapeString(desc.shape, desc.rank) + ", got " +
                      shapeString(tensor->shape.data(),
                                  static_cast<int32_t>(tensor->shape.size())));
    session.inputData[slot] = tensor->data;
  }
  for (uint32_t slot = 0; slot < descriptor.num_inputs; ++slot)
    if (!session.given[slot])
      return fail(KILN_ERROR_INVALID_ARGUMENT,
                  "missing input " + quoted(descriptor.inputs[slot].name));
  return KILN_OK;
}

/// The model's shape of `desc` with each symbol's name: "[batch, seq, 64]".
std::string symbolicShape(const kiln_artifact_descriptor &descriptor,
                          const kiln_tensor_desc &desc) {
  std::string text = "[";
  for (int32_t d = 0; d < desc.rank; ++d) {
    if (d)
      text += ", ";
    int32_t symbol = desc.symbols ? desc.symbols[d] : -1;
    text += symbol >= 0 ? std::string(descriptor.symbols[symbol].name)
                        : std::to_string(desc.shape[d]);
  }
  return text + "]";
}

/// Checks input `slot` (which has symbolic dims) against the model and the
/// symbols the inputs bound before it, and points its slot at its record.
kiln_status bindSymbolicInput(kiln_session &session, uint32_t slot,
                              const kiln_tensor &tensor) {
  const kiln_artifact_descriptor &descriptor = *session.model->descriptor;
  const kiln_tensor_desc &desc = descriptor.inputs[slot];
  std::string name = quoted(desc.name);
  auto got = [&] {
    return shapeString(tensor.shape.data(),
                       static_cast<int32_t>(tensor.shape.size()));
  };
  if (tensor.shape.size() != static_cast<size_t>(desc.rank))
    return fail(KILN_ERROR_INVALID_ARGUMENT,
                "input " + name + ": expected shape " +
                    symbolicShape(descriptor, desc) + ", got " + got());
  std::vector<int64_t> &record = session.inputRecords[slot];
  record.assign(1 + desc.rank, 0);
  record[0] = static_cast<int64_t>(reinterpret_cast<uintptr_t>(tensor.data));
  for (int32_t d = 0; d < desc.rank; ++d) {
    int64_t extent = tensor.shape[d];
    record[1 + d] = extent;
    int32_t symbol = desc.symbols ? desc.symbols[d] : -1;
    if (symbol < 0) {
      if (extent != desc.shape[d])
        return fail(KILN_ERROR_INVALID_ARGUMENT,
                    "input " + name + ": expected shape " +
                        symbolicShape(descriptor, desc) + ", got " + got());
      continue;
    }
    const kiln_symbol_desc &sym = descriptor.symbols[symbol];
    if (extent < sym.min || extent > sym.max)
      return fail(KILN_ERROR_INVALID_ARGUMENT,
                  "input " + name + " dim " + std::to_string(d) + " (" +
                      sym.name + ") is " + std::to_string(extent) +
                      ", outside the range " + std::to_string(sym.min) + ".." +
                      std::to_string(sym.max) + " the model was compiled for");
    int64_t &bound = session.symbolValues[symbol];
    if (bound < 0) {
      bound = extent;
      session.symbolSetBy[symbol] = slot;
    } else if (bound != extent) {
      return fail(
          KILN_ERROR_INVALID_ARGUMENT,
          "input " + name + " dim " + std::to_string(d) + " (" + sym.name +
              ") is " + std::to_string(extent) + " but input " +
              quoted(descriptor.inputs[session.symbolSetBy[symbol]].name) +
              " has " + std::to_string(bound));
    }
  }
  session.inputData[slot] = record.data();
  return KILN_OK;
}

void destroyOutputs(kiln_tensor **outputs, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    kiln_tensor_destroy(outputs[i]);
    outputs[i] = nullptr;
  }
}

} // namespace

extern "C" kiln_status kiln_session_create(const kiln_model *model,
                                           const kiln_session_options *options,
                                           kiln_session **out) {
  if (!model || !out)
    return fail(KILN_ERROR_INVALID_ARGUMENT,
                "kiln_session_create: NULL argument");
  *out = nullptr;
  const kiln_artifact_descriptor &descriptor = *model->descriptor;
  if (descriptor.gpu && !model->gpu)
    return fail(KILN_ERROR_INVALID_ARGUMENT,
                quoted(model->path) +
                    " was opened by kiln_model_inspect; load it with "
                    "kiln_model_load to run it");
  unsigned threads = options ? options->num_threads : 0;
  if (threads == 0)
    threads = availableCores();
  if (threads > kMaxThreads)
    return fail(KILN_ERROR_INVALID_ARGUMENT, "num_threads " +
                                                 std::to_string(threads) +
                                                 " is more than the limit of " +
                                                 std::to_string(kMaxThreads));
  try {
    auto session = std::make_unique<kiln_session>();
    session->model = model;
    // Refuse an arena this machine cannot give now (Linux would hand out
    // the address space and kill the process when the run touches it).
    if (!model->gpu) {
      MemoryAvailable memory = availableMemory();
      if (descriptor.arena_size > memory.bytes)
        return fail(KILN_ERROR_OUT_OF_MEMORY,
                    quoted(model->path) + " needs " +
                        formatBytes(descriptor.arena_size) +
                        " for its arena (intermediate tensors), but only " +
                        formatBytes(memory.bytes) + " are available (" +
                        memory.source + ")");
    }
    // A GPU artifact's arena is on the device.
    session->arena = allocateAligned(model->gpu ? 0 : descriptor.arena_size);
    if (!session->arena)
      return fail(KILN_ERROR_OUT_OF_MEMORY,
                  "out of memory allocating the model's arena of " +
                      std::to_string(descriptor.arena_size) + " bytes");
    session->inputData.resize(descriptor.num_inputs);
    session->outputData.resize(descriptor.num_outputs);
    session->given.resize(descriptor.num_inputs);
    session->dynamicRecords.resize(descriptor.num_outputs);
    session->inputRecords.resize(descriptor.num_inputs);
    session->symbolValues.assign(descriptor.num_symbols, -1);
    session->symbolSetBy.assign(descriptor.num_symbols, 0);
    for (uint32_t i = 0; i < descriptor.num_outputs; ++i)
      if (hasRunTimeExtent(descriptor.outputs[i]))
        session->dynamicRecords[i].assign(1 + descriptor.outputs[i].rank, 0);
    session->pool = std::make_unique<ThreadPool>(threads);
    session->callbacks.abi_version = KILN_ABI_VERSION;
    session->callbacks.num_threads = session->pool->numThreads();
    session->callbacks.pool = session->pool.get();
    session->callbacks.parallel_for = &ThreadPool::parallelForCallback;
    session->callbacks.context = session.get();
    session->callbacks.alloc = &scratchAlloc;
    session->callbacks.fail = &checkFailed;
    session->callbacks.strings_from_numbers = &stringsFromNumbers;
    session->callbacks.strings_to_numbers = &stringsToNumbers;
    session->callbacks.normalize_strings = &normalizeStrings;
    session->callbacks.weights = model->weights.data();
    if (model->gpu) {
      const char *env = std::getenv("KILN_GPU_GRAPHS");
      bool graphs = !(options && options->disable_gpu_graphs) &&
                    !(env && std::strcmp(env, "0") == 0);
      session->gpu = std::make_unique<GpuSession>(descriptor, *model->gpu);
      if (kiln_status status = session->gpu->init(session->pool.get(), graphs,
                                                  session->callbacks))
        return status;
    }
    *out = session.release();
    return KILN_OK;
  } catch (const std::bad_alloc &) {
    return fail(KILN_ERROR_OUT_OF_MEMORY, "out of memory creating a session");
  } catch (const std::system_error &error) {
    return fail(KILN_ERROR_OUT_OF_MEMORY,
                std::string("cannot start worker threads: ") + error.what());
  }
}

extern "C" void kiln_session_destroy(kiln_session *session) { delete session; }

extern "C" uint32_t kiln_session_num_threads(const kiln_session *session) {
  return session ? session->callbacks.num_threads : 0;
}

extern "C" kiln_status
kiln_session_run(kiln_session *session, const kiln_named_tensor *inputs,
                 size_t num_inputs, kiln_tensor **outputs, size_t num_outputs) {
  if (!session)
    return fail(KILN_ERROR_INVALID_ARGUMENT, "kiln_session_run: NULL session");
  RunGuard guard(*session);
  if (!guard.owns())
    return sessionBusy("kiln_session_run");
  try {
    const kiln_artifact_descriptor &descriptor = *session->model->descriptor;
    if (num_outputs != descriptor.num_outputs)
      return fail(KILN_ERROR_INVALID_ARGUMENT,
                  "num_outputs is " + std::to_string(num_outputs) +
                      ", but the model has " +
                      std::to_string(descriptor.num_outputs) + " output(s)");
    if (num_outputs > 0 && !outputs)
      return fail(KILN_ERROR_INVALID_ARGUMENT, "outputs is NULL");
    if (kiln_status status = bindInputs(*session, inputs, num_inputs))
      return status;
    for (size_t i = 0; i < num_outputs; ++i)
      outputs[i] = nullptr;
    for (size_t i = 0; i < num_outputs; ++i) {
      const kiln_tensor_desc &desc = descriptor.outputs[i];
      if (hasRunTimeExtent(desc)) {
        // Created after the run, from the shape the run reports.
        std::fill(session->dynamicRecords[i].begin(),
                  session->dynamicRecords[i].end(), 0);
        session->outputData[i] = session->dynamicRecords[i].data();
        continue;
      }
      kiln_status status =
          kiln_tensor_create(static_cast<kiln_dtype>(desc.dtype), desc.rank,
                             desc.shape, &outputs[i]);
      if (status != KILN_OK) {
        destroyOutputs(outputs, i);
        return status;
      }
      session->outputData[i] = outputs[i]->data;
    }
    if (session->gpu) {
      kiln_status status =
          session->gpu->run(session->callbacks, session->inputData.data(),
                            session->outputData.data(),
                            /*deviceBuffers=*/false);
      // Outputs of a run-time shape: the record names device memory.
      for (size_t i = 0; i < num_outputs && status == KILN_OK; ++i)
        if (hasRunTimeExtent(descriptor.outputs[i]))
          status = takeDynamicOutput(
              descriptor.outputs[i], session->dynamicRecords[i], &outputs[i],
              [&](void *host, const void *device, uint64_t bytes) {
                return session->gpu->copyToHost(host, device, bytes);
              });
      if (status != KILN_OK)
        destroyOutputs(outputs, num_outputs);
      return status;
    }
    session->scratch.reset();
    session->runError.clear();
    session->outOfMemory = false;
    int32_t code =
        descriptor.entry(session->inputData.data(), session->outputData.data(),
                         session->arena, &session->callbacks);
    if (code != 0 || !session->runError.empty()) {
      destroyOutputs(outputs, num_outputs);
      if (session->outOfMemory)
        return fail(KILN_ERROR_OUT_OF_MEMORY,
                    "the model's run failed: " + session->runError);
      if (!session->runError.empty())
        return fail(KILN_ERROR_RUN_FAILED,
                    "the model's run failed: " + session->runError);
      return fail(KILN_ERROR_RUN_FAILED,
                  "the model's entry point failed with code " +
                      std::to_string(code));
    }
    for (size_t i = 0; i < num_outputs; ++i) {
      const kiln_tensor_desc &desc = descriptor.outputs[i];
      kiln_status status = KILN_OK;
      if (hasRunTimeExtent(desc))
        status =
            takeDynamicOutput(desc, session->dynamicRecords[i], &outputs[i]);
      // A string output points into the inputs, the weights or the run's
      // scratch; the caller's tensor gets its own copy of the text.
      if (status == KILN_OK && desc.dtype == KILN_DTYPE_STRING)
        status = kiln_tensor_set_strings(
            outputs[i], static_cast<const char *const *>(outputs[i]->data),
            kiln_tensor_num_elements(outputs[i]));
      if (status != KILN_OK) {
        destroyOutputs(outputs, num_outputs);
        return status;
      }
    }
    return KILN_OK;
  } catch (const std::bad_alloc &) {
    return fail(KILN_ERROR_OUT_OF_MEMORY, "out of memory");
  }
}

extern "C" const char *kiln_model_device_name(const kiln_model *model) {
  if (!model || !model->gpu)
    return nullptr;
  static thread_local std::string name;
  name = model->gpu->name();
  return name.c_str();
}

extern "C" kiln_status kiln_session_run_device(kiln_session *session,
                                               const void *const *device_inputs,
                                               size_t num_inputs,
                                               void *const *device_outputs,
                                               size_t num_outputs) {
  if (!session)
    return fail(KILN_ERROR_INVALID_ARGUMENT,
                "kiln_session_run_device: NULL session");
  if (!session->gpu)
    return fail(KILN_ERROR_INVALID_ARGUMENT,
                "kiln_session_run_device needs a GPU artifact; " +
                    quoted(session->model->path) + " runs on the CPU");
  const kiln_artifact_descriptor &descriptor = *session->model->descriptor;
  if (num_inputs != descriptor.num_inputs ||
      num_outputs != descriptor.num_outputs)
    return fail(KILN_ERROR_INVALID_ARGUMENT,
                "kiln_session_run_device: the model has " +
                    std::to_string(descriptor.num_inputs) + " input(s) and " +
                    std::to_string(descriptor.num_outputs) +
                    " output(s), got " + std::to_string(num_inputs) + " and " +
                    std::to_string(num_outputs));
  if ((num_inputs && !device_inputs) || (num_outputs && !device_outputs))
    return fail(KILN_ERROR_INVALID_ARGUMENT,
                "kiln_session_run_device: NULL buffer list");
  // Device buffers carry no shape: symbolic dims go through
  // kiln_session_run's tensors.
  for (uint32_t i = 0; i < descriptor.num_inputs + descriptor.num_outputs;
       ++i) {
    bool input = i < descriptor.num_inputs;
    const kiln_tensor_desc &desc =
        input ? descriptor.inputs[i]
              : descriptor.outputs[i - descriptor.num_inputs];
    if (hasRunTimeExtent(desc))
      return fail(KILN_ERROR_INVALID_ARGUMENT,
                  "kiln_session_run_device: " +
                      std::string(input ? "input " : "output ") +
                      quoted(desc.name) +
                      " has a run-time shape; run it with kiln_session_run");
  }
  RunGuard guard(*session);
  if (!guard.owns())
    return sessionBusy("kiln_session_run_device");
  try {
    return session->gpu->run(session->callbacks, device_inputs, device_outputs,
                             /*deviceBuffers=*/true);
  } catch (const std::bad_alloc &) {
    return fail(KILN_ERROR_OUT_OF_MEMORY, "out of memory");
  }
}

extern "C" kiln_status kiln_session_time_next_run(kiln_session *session) {
  if (!session || !session->gpu)
    return fail(KILN_ERROR_INVALID_ARGUMENT,
                "kiln_session_time_next_run needs a session of a GPU "
                "artifact");
  session->gpu->timeNextRun();
  return KILN_OK;
}

extern "C" size_t kiln_session_kernel_times(const kiln_session *session,
                                            kiln_kernel_time *out,
                                            size_t capacity) {
  if (!session || !session->gpu)
    return 0;
  const auto &times = session->gpu->kernelTimes();
  for (size_t i = 0; i < times.size() && i < capacity && out; ++i)
    out[i] = {times[i].kernel, float(times[i].milliseconds)};
  return times.size();
}

extern "C" void *kiln_session_device_input(kiln_session *session,
                                           size_t index) {
  return session && session->gpu ? session->gpu->deviceInput(index) : nullptr;
}

extern "C" void *kiln_session_device_output(kiln_session *session,
                                            size_t index) {
  return session && session->gpu ? session->gpu->deviceOutput(index) : nullptr;
}
