// Sessions: one arena and one thread pool each, so independent sessions of
// a model run concurrently without sharing mutable state.
#include "aligned_buffer.h"
#include "model.h"
#include "status.h"
#include "tensor.h"
#include "thread_pool.h"

#include <algorithm>
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

  ~kiln_session() { freeAligned(arena); }
};

namespace {

constexpr unsigned kMaxThreads = ThreadPool::kMaxThreads;

std::string inputNames(const kiln_artifact_descriptor &descriptor) {
  std::string names;
  for (uint32_t i = 0; i < descriptor.num_inputs; ++i)
    names += (i ? ", " : "") + std::string(descriptor.inputs[i].name);
  return names;
}

// Matches the caller's named inputs to descriptor slots and checks each one.
kiln_status bindInputs(kiln_session &session, const kiln_named_tensor *inputs,
                       size_t numInputs) {
  const kiln_artifact_descriptor &descriptor = *session.model->descriptor;
  if (numInputs > 0 && !inputs)
    return fail(KILN_ERROR_INVALID_ARGUMENT, "inputs is NULL");
  std::fill(session.given.begin(), session.given.end(), 0);
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
    session->arena = allocateAligned(descriptor.arena_size);
    if (!session->arena)
      return fail(KILN_ERROR_OUT_OF_MEMORY,
                  "out of memory allocating the model's arena of " +
                      std::to_string(descriptor.arena_size) + " bytes");
    session->inputData.resize(descriptor.num_inputs);
    session->outputData.resize(descriptor.num_outputs);
    session->given.resize(descriptor.num_inputs);
    session->pool = std::make_unique<ThreadPool>(threads);
    session->callbacks.abi_version = KILN_ABI_VERSION;
    session->callbacks.num_threads = session->pool->numThreads();
    session->callbacks.pool = session->pool.get();
    session->callbacks.parallel_for = &ThreadPool::parallelForCallback;
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
      kiln_status status =
          kiln_tensor_create(static_cast<kiln_dtype>(desc.dtype), desc.rank,
                             desc.shape, &outputs[i]);
      if (status != KILN_OK) {
        destroyOutputs(outputs, i);
        return status;
      }
      session->outputData[i] = outputs[i]->data;
    }
    int32_t code =
        descriptor.entry(session->inputData.data(), session->outputData.data(),
                         session->arena, &session->callbacks);
    if (code != 0) {
      destroyOutputs(outputs, num_outputs);
      return fail(KILN_ERROR_RUN_FAILED,
                  "the model's entry point failed with code " +
                      std::to_string(code));
    }
    return KILN_OK;
  } catch (const std::bad_alloc &) {
    return fail(KILN_ERROR_OUT_OF_MEMORY, "out of memory");
  }
}
