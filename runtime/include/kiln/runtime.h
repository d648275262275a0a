/*
 * Kiln runtime C API: load a compiled artifact and run it.
 *
 *   kiln_model *model;
 *   if (kiln_model_load("model.so", &model) != KILN_OK)
 *     fprintf(stderr, "%s\n", kiln_last_error());
 *   kiln_session *session;
 *   kiln_session_create(model, NULL, &session);
 *   kiln_named_tensor in = {"x", x_tensor};
 *   kiln_tensor *out[1];
 *   kiln_session_run(session, &in, 1, out, 1);
 *
 * Every function that can fail returns a kiln_status and leaves a message for
 * kiln_last_error() (per thread). Depends only on libc/libstdc++.
 */
#ifndef KILN_RUNTIME_H
#define KILN_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#include "kiln/abi.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum kiln_status {
  KILN_OK = 0,
  KILN_ERROR_INVALID_ARGUMENT = 1, /* bad input name, dtype, shape, NULL */
  KILN_ERROR_BAD_ARTIFACT = 2,     /* not a kiln artifact, wrong ABI/target */
  KILN_ERROR_IO = 3,               /* file missing or unreadable */
  KILN_ERROR_OUT_OF_MEMORY = 4,
  KILN_ERROR_RUN_FAILED = 5 /* the entry point reported failure */
} kiln_status;

/* Message describing the last failure on this thread ("" if none). */
const char *kiln_last_error(void);
/* Runtime's ABI version, KILN_ABI_VERSION of the build. */
uint32_t kiln_runtime_abi_version(void);
const char *kiln_dtype_name(kiln_dtype dtype); /* "float32", ... */
size_t kiln_dtype_size(kiln_dtype dtype);      /* bytes, 0 if unknown */

/* ---- Tensors: dense row-major buffers with dtype and shape. ---- */
typedef struct kiln_tensor kiln_tensor;

/* Allocates a zeroed tensor (data aligned to KILN_ALIGNMENT). */
kiln_status kiln_tensor_create(kiln_dtype dtype, int32_t rank,
                               const int64_t *shape, kiln_tensor **out);
/* Wraps caller-owned memory of `bytes` bytes; the caller keeps it alive. */
kiln_status kiln_tensor_wrap(kiln_dtype dtype, int32_t rank,
                             const int64_t *shape, void *data, size_t bytes,
                             kiln_tensor **out);
void kiln_tensor_destroy(kiln_tensor *tensor);
kiln_dtype kiln_tensor_dtype(const kiln_tensor *tensor);
int32_t kiln_tensor_rank(const kiln_tensor *tensor);
const int64_t *kiln_tensor_shape(const kiln_tensor *tensor);
size_t kiln_tensor_num_elements(const kiln_tensor *tensor);
size_t kiln_tensor_size_bytes(const kiln_tensor *tensor);
void *kiln_tensor_data(kiln_tensor *tensor);
/* String tensors (KILN_DTYPE_STRING): copies `count` NUL-terminated strings
 * (NULL reads as "") into storage the tensor owns and points its elements at
 * the copies; count must equal the element count. Elements are then read as
 * ((const char *const *)kiln_tensor_data(t))[i]. */
kiln_status kiln_tensor_set_strings(kiln_tensor *tensor,
                                    const char *const *strings, size_t count);

/* ---- Models: a loaded artifact. ---- */
typedef struct kiln_model kiln_model;

/* Loads an artifact. An artifact is native code: loading it runs it with
 * the process's rights, like dlopen of any shared library; load only the
 * ones you trust (docs/reliability.md). Rejects, with a message naming the
 * file: a file that is
 * missing or not a shared library, one built for another architecture, one
 * without the kiln descriptor symbol, another ABI version, or CPU features
 * this machine lacks. */
kiln_status kiln_model_load(const char *path, kiln_model **out);
/* Loads and checks an artifact like kiln_model_load, but opens no GPU for a
 * GPU artifact: its descriptor (kernels, architectures) can be read on any
 * machine. Sessions cannot be created from it. */
kiln_status kiln_model_inspect(const char *path, kiln_model **out);
void kiln_model_free(kiln_model *model);
/* The artifact's descriptor: names, dtypes, shapes, target, arena size. Valid
 * while the model is loaded. */
const kiln_artifact_descriptor *kiln_model_descriptor(const kiln_model *model);

/* ---- Sessions: one arena each, so sessions run in parallel without locks.
 * A session runs one thing at a time: a kiln_session_run (or _run_device)
 * on a session another thread is running returns KILN_ERROR_INVALID_ARGUMENT
 * ("the session is running on another thread; use one session per
 * thread"), never a silently shared arena. Models are shared freely: load
 * once, create a session per thread. */
typedef struct kiln_session kiln_session;
typedef struct kiln_session_options {
  uint32_t num_threads; /* 0: one per available core */
  /* GPU artifacts: launch the kernels one by one on every run instead of
   * capturing them into a CUDA or HIP graph on the first run and
   * replaying it (the environment variable KILN_GPU_GRAPHS=0 does the
   * same). */
  uint32_t disable_gpu_graphs;
} kiln_session_options;

kiln_status kiln_session_create(const kiln_model *model,
                                const kiln_session_options *options,
                                kiln_session **out);
void kiln_session_destroy(kiln_session *session);
/* Threads the session's pool runs on, counting the caller (resolves 0). */
uint32_t kiln_session_num_threads(const kiln_session *session);

typedef struct kiln_named_tensor {
  const char *name;
  const kiln_tensor *tensor;
} kiln_named_tensor;

/* Runs the model. Every model input must be given exactly once, by name, with
 * the descriptor's dtype and shape. On success outputs[i] receives a new
 * tensor for the i-th model output (descriptor order), owned by the caller;
 * num_outputs must equal the model's output count. */
kiln_status kiln_session_run(kiln_session *session,
                             const kiln_named_tensor *inputs, size_t num_inputs,
                             kiln_tensor **outputs, size_t num_outputs);

/* ---- GPU artifacts (--target=cuda, --target=hip): the device is chosen
 * at load (KILN_CUDA_DEVICE or KILN_HIP_DEVICE, default 0), the weights
 * uploaded once per model; each session owns a stream and a device arena.
 * kiln_session_run copies host inputs in and outputs out. Every call runs
 * on the model's device and restores the calling thread's current CUDA
 * context or HIP device. ---- */

/* "NVIDIA H100 80GB HBM3 (sm_90)", "AMD Instinct MI300X", "kiln GPU
 * emulator"; NULL for CPU artifacts. */
const char *kiln_model_device_name(const kiln_model *model);

/* Runs with inputs and outputs already in device memory (CUdeviceptr or
 * HIP device pointers on the model's device): device_inputs[i] and
 * device_outputs[i] in descriptor order, each of its tensor's full dense
 * size. Returns when the outputs are written. GPU artifacts only. */
kiln_status kiln_session_run_device(kiln_session *session,
                                    const void *const *device_inputs,
                                    size_t num_inputs,
                                    void *const *device_outputs,
                                    size_t num_outputs);

/* The session's own device buffer of input or output `index` (GPU
 * artifacts; NULL otherwise or out of range). Passing these to
 * kiln_session_run_device runs without any copy. */
void *kiln_session_device_input(kiln_session *session, size_t index);
void *kiln_session_device_output(kiln_session *session, size_t index);

/* GPU time of one kernel launch, in launch order. */
typedef struct kiln_kernel_time {
  uint32_t kernel; /* index into kiln_gpu_program.kernels */
  float milliseconds;
} kiln_kernel_time;

/* GPU artifacts: the next run launches kernel by kernel and times each one
 * on the device. */
kiln_status kiln_session_time_next_run(kiln_session *session);
/* The times of the last timed run: writes up to `capacity` and returns how
 * many there are. */
size_t kiln_session_kernel_times(const kiln_session *session,
                                 kiln_kernel_time *out, size_t capacity);

#ifdef __cplusplus
}
#endif

#endif /* KILN_RUNTIME_H */
