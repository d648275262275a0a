// The HIP runtime (libamdhip64), loaded with dlopen at the first HIP
// artifact so the runtime links nothing but libc/libstdc++. Only the entry
// points Kiln uses, declared with the types of hip_runtime_api.h (ROCm 5
// and newer); nothing from ROCm is needed to build this.
#ifndef KILN_RUNTIME_HIP_RUNTIME_H
#define KILN_RUNTIME_HIP_RUNTIME_H

#include <cstddef>
#include <cstdint>
#include <string>

namespace kiln::rt::hip {

using hipError_t = int;
using hipDevice_t = int;
using hipModule_t = struct ihipModule_t *;
using hipFunction_t = struct ihipModuleSymbol_t *;
using hipStream_t = struct ihipStream_t *;
using hipEvent_t = struct ihipEvent_t *;
using hipGraph_t = struct ihipGraph *;
using hipGraphExec_t = struct hipGraphExec *;

constexpr hipError_t hipSuccess = 0;
constexpr hipError_t hipErrorOutOfMemory = 2;
constexpr hipError_t hipErrorNoDevice = 100;
constexpr hipError_t hipErrorInvalidDevice = 101;
constexpr hipError_t hipErrorInvalidImage = 200;
constexpr hipError_t hipErrorNoBinaryForGpu = 209;
constexpr hipError_t hipErrorInvalidKernelFile = 218;
constexpr unsigned hipStreamNonBlocking = 1;
constexpr int hipStreamCaptureModeThreadLocal = 1;

// The runtime's entry points; every pointer is set once load() succeeded
// (the graph ones may be null: graphs are then not used).
struct Runtime {
  hipError_t (*hipInit)(unsigned);
  hipError_t (*hipRuntimeGetVersion)(int *);
  hipError_t (*hipGetDeviceCount)(int *);
  hipError_t (*hipDeviceGet)(hipDevice_t *, int);
  hipError_t (*hipDeviceGetName)(char *, int, hipDevice_t);
  hipError_t (*hipGetDevice)(int *);
  hipError_t (*hipSetDevice)(int);
  hipError_t (*hipModuleLoadData)(hipModule_t *, const void *);
  hipError_t (*hipModuleUnload)(hipModule_t);
  hipError_t (*hipModuleGetFunction)(hipFunction_t *, hipModule_t,
                                     const char *);
  hipError_t (*hipMalloc)(void **, size_t);
  hipError_t (*hipFree)(void *);
  hipError_t (*hipMemGetInfo)(size_t *, size_t *);
  hipError_t (*hipMemcpyHtoD)(void *, void *, size_t);
  hipError_t (*hipMemcpyHtoDAsync)(void *, void *, size_t, hipStream_t);
  hipError_t (*hipMemcpyDtoHAsync)(void *, void *, size_t, hipStream_t);
  hipError_t (*hipMemcpyDtoDAsync)(void *, void *, size_t, hipStream_t);
  hipError_t (*hipStreamCreateWithFlags)(hipStream_t *, unsigned);
  hipError_t (*hipStreamDestroy)(hipStream_t);
  hipError_t (*hipStreamSynchronize)(hipStream_t);
  hipError_t (*hipModuleLaunchKernel)(hipFunction_t, unsigned, unsigned,
                                      unsigned, unsigned, unsigned, unsigned,
                                      unsigned, hipStream_t, void **, void **);
  hipError_t (*hipEventCreate)(hipEvent_t *);
  hipError_t (*hipEventRecord)(hipEvent_t, hipStream_t);
  hipError_t (*hipEventElapsedTime)(float *, hipEvent_t, hipEvent_t);
  hipError_t (*hipEventDestroy)(hipEvent_t);
  const char *(*hipGetErrorName)(hipError_t);
  const char *(*hipGetErrorString)(hipError_t);
  // Graphs (optional).
  hipError_t (*hipStreamBeginCapture)(hipStream_t, int);
  hipError_t (*hipStreamEndCapture)(hipStream_t, hipGraph_t *);
  hipError_t (*hipGraphInstantiateWithFlags)(hipGraphExec_t *, hipGraph_t,
                                             unsigned long long);
  hipError_t (*hipGraphLaunch)(hipGraphExec_t, hipStream_t);
  hipError_t (*hipGraphExecDestroy)(hipGraphExec_t);
  hipError_t (*hipGraphDestroy)(hipGraph_t);

  bool hasGraphs() const {
    return hipStreamBeginCapture && hipStreamEndCapture &&
           hipGraphInstantiateWithFlags && hipGraphLaunch &&
           hipGraphExecDestroy && hipGraphDestroy;
  }
};

// The process's HIP runtime, loaded on first use: the library named by
// KILN_HIP_RUNTIME (the tests' stand-in), else libamdhip64.so.7, .so.6,
// .so.5, .so. Returns null and sets `error` ("libamdhip64.so not found
// (...)") when none loads or one lacks an entry point.
const Runtime *runtime(std::string &error);

// "hipErrorOutOfMemory (out of memory)".
std::string errorText(const Runtime &runtime, hipError_t result);

} // namespace kiln::rt::hip

#endif // KILN_RUNTIME_HIP_RUNTIME_H
