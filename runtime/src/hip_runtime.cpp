// Loads the HIP runtime's entry points with dlopen/dlsym, once per process.
#include "hip_runtime.h"

#include <cstdlib>
#include <cstring>
#include <dlfcn.h>

namespace kiln::rt::hip {
namespace {

struct Loaded {
  Runtime runtime{};
  std::string error;
  bool ok = false;
};

template <typename Fn>
void optional(void *library, const char *name, Fn &slot) {
  slot = reinterpret_cast<Fn>(dlsym(library, name));
}

template <typename Fn>
bool resolve(void *library, const char *name, Fn &slot, std::string &error) {
  optional(library, name, slot);
  if (!slot && error.empty())
    error = std::string("the HIP runtime has no ") + name +
            " (a runtime older than ROCm 5?)";
  return slot != nullptr;
}

Loaded load() {
  Loaded loaded;
  const char *override = std::getenv("KILN_HIP_RUNTIME");
  void *library = nullptr;
  std::string tried, reason;
  for (const char *name : {"libamdhip64.so.7", "libamdhip64.so.6",
                           "libamdhip64.so.5", "libamdhip64.so"}) {
    std::string candidate = override && *override ? override : name;
    library = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (library)
      break;
    if (const char *why = dlerror())
      reason = why;
    tried = candidate;
    if (override && *override)
      break;
  }
  if (!library) {
    loaded.error = tried + " not found" +
                   (reason.empty() ? std::string() : " (" + reason + ")");
    return loaded;
  }
  Runtime &r = loaded.runtime;
  std::string &e = loaded.error;
  bool ok =
      resolve(library, "hipInit", r.hipInit, e) &
      resolve(library, "hipRuntimeGetVersion", r.hipRuntimeGetVersion, e) &
      resolve(library, "hipGetDeviceCount", r.hipGetDeviceCount, e) &
      resolve(library, "hipDeviceGet", r.hipDeviceGet, e) &
      resolve(library, "hipDeviceGetName", r.hipDeviceGetName, e) &
      resolve(library, "hipGetDevice", r.hipGetDevice, e) &
      resolve(library, "hipSetDevice", r.hipSetDevice, e) &
      resolve(library, "hipModuleLoadData", r.hipModuleLoadData, e) &
      resolve(library, "hipModuleUnload", r.hipModuleUnload, e) &
      resolve(library, "hipModuleGetFunction", r.hipModuleGetFunction, e) &
      resolve(library, "hipMalloc", r.hipMalloc, e) &
      resolve(library, "hipFree", r.hipFree, e) &
      resolve(library, "hipMemGetInfo", r.hipMemGetInfo, e) &
      resolve(library, "hipMemcpyHtoD", r.hipMemcpyHtoD, e) &
      resolve(library, "hipMemcpyHtoDAsync", r.hipMemcpyHtoDAsync, e) &
      resolve(library, "hipMemcpyDtoHAsync", r.hipMemcpyDtoHAsync, e) &
      resolve(library, "hipMemcpyDtoDAsync", r.hipMemcpyDtoDAsync, e) &
      resolve(library, "hipStreamCreateWithFlags", r.hipStreamCreateWithFlags,
              e) &
      resolve(library, "hipStreamDestroy", r.hipStreamDestroy, e) &
      resolve(library, "hipStreamSynchronize", r.hipStreamSynchronize, e) &
      resolve(library, "hipModuleLaunchKernel", r.hipModuleLaunchKernel, e) &
      resolve(library, "hipEventCreate", r.hipEventCreate, e) &
      resolve(library, "hipEventRecord", r.hipEventRecord, e) &
      resolve(library, "hipEventElapsedTime", r.hipEventElapsedTime, e) &
      resolve(library, "hipEventDestroy", r.hipEventDestroy, e) &
      resolve(library, "hipGetErrorName", r.hipGetErrorName, e) &
      resolve(library, "hipGetErrorString", r.hipGetErrorString, e);
  if (!ok) {
    dlclose(library);
    return loaded;
  }
  optional(library, "hipStreamBeginCapture", r.hipStreamBeginCapture);
  optional(library, "hipStreamEndCapture", r.hipStreamEndCapture);
  optional(library, "hipGraphInstantiateWithFlags",
           r.hipGraphInstantiateWithFlags);
  optional(library, "hipGraphLaunch", r.hipGraphLaunch);
  optional(library, "hipGraphExecDestroy", r.hipGraphExecDestroy);
  optional(library, "hipGraphDestroy", r.hipGraphDestroy);
  loaded.ok = true;
  return loaded;
}

} // namespace

const Runtime *runtime(std::string &error) {
  static Loaded loaded = load();
  if (!loaded.ok) {
    error = loaded.error;
    return nullptr;
  }
  return &loaded.runtime;
}

std::string errorText(const Runtime &runtime, hipError_t result) {
  const char *name = runtime.hipGetErrorName(result);
  const char *text = runtime.hipGetErrorString(result);
  std::string out =
      name && *name ? name : "HIP error " + std::to_string(result);
  // ROCm 5's runtime returns the name as the string too.
  if (text && *text && !(name && std::strcmp(name, text) == 0))
    out += std::string(" (") + text + ")";
  return out;
}

} // namespace kiln::rt::hip
