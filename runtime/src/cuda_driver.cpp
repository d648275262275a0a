// Loads the CUDA driver's entry points with dlopen/dlsym, once per process.
#include "cuda_driver.h"

#include <cstdlib>
#include <dlfcn.h>

namespace kiln::rt::cuda {
namespace {

struct Loaded {
  Driver driver{};
  std::string error;
  bool ok = false;
};

// Resolves `name` into `slot`; false if the library lacks it.
template <typename Fn>
bool resolve(void *library, const char *name, Fn &slot, std::string &error) {
  slot = reinterpret_cast<Fn>(dlsym(library, name));
  if (!slot && error.empty())
    error = std::string("the CUDA driver has no ") + name +
            " (a driver older than CUDA 12?)";
  return slot != nullptr;
}

Loaded load() {
  Loaded loaded;
  const char *override = std::getenv("KILN_CUDA_DRIVER");
  std::string name = override && *override ? override : "libcuda.so.1";
  void *library = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char *reason = dlerror();
    loaded.error = name + " not found" +
                   (reason ? std::string(" (") + reason + ")" : std::string());
    return loaded;
  }
  Driver &d = loaded.driver;
  std::string &e = loaded.error;
  // The symbols cuda.h maps these names to (cuMemAlloc -> cuMemAlloc_v2...).
  bool ok =
      resolve(library, "cuInit", d.cuInit, e) &
      resolve(library, "cuDriverGetVersion", d.cuDriverGetVersion, e) &
      resolve(library, "cuDeviceGetCount", d.cuDeviceGetCount, e) &
      resolve(library, "cuDeviceGet", d.cuDeviceGet, e) &
      resolve(library, "cuDeviceGetAttribute", d.cuDeviceGetAttribute, e) &
      resolve(library, "cuDeviceGetName", d.cuDeviceGetName, e) &
      resolve(library, "cuDevicePrimaryCtxRetain", d.cuDevicePrimaryCtxRetain,
              e) &
      resolve(library, "cuDevicePrimaryCtxRelease_v2",
              d.cuDevicePrimaryCtxRelease, e) &
      resolve(library, "cuCtxGetCurrent", d.cuCtxGetCurrent, e) &
      resolve(library, "cuCtxSetCurrent", d.cuCtxSetCurrent, e) &
      resolve(library, "cuModuleLoadData", d.cuModuleLoadData, e) &
      resolve(library, "cuModuleUnload", d.cuModuleUnload, e) &
      resolve(library, "cuModuleGetFunction", d.cuModuleGetFunction, e) &
      resolve(library, "cuFuncGetAttribute", d.cuFuncGetAttribute, e) &
      resolve(library, "cuFuncSetAttribute", d.cuFuncSetAttribute, e) &
      resolve(library, "cuMemAlloc_v2", d.cuMemAlloc, e) &
      resolve(library, "cuMemFree_v2", d.cuMemFree, e) &
      resolve(library, "cuMemGetInfo_v2", d.cuMemGetInfo, e) &
      resolve(library, "cuMemcpyHtoD_v2", d.cuMemcpyHtoD, e) &
      resolve(library, "cuMemcpyHtoDAsync_v2", d.cuMemcpyHtoDAsync, e) &
      resolve(library, "cuMemcpyDtoHAsync_v2", d.cuMemcpyDtoHAsync, e) &
      resolve(library, "cuMemcpyDtoDAsync_v2", d.cuMemcpyDtoDAsync, e) &
      resolve(library, "cuStreamCreate", d.cuStreamCreate, e) &
      resolve(library, "cuStreamDestroy_v2", d.cuStreamDestroy, e) &
      resolve(library, "cuStreamSynchronize", d.cuStreamSynchronize, e) &
      resolve(library, "cuLaunchKernel", d.cuLaunchKernel, e) &
      resolve(library, "cuStreamBeginCapture_v2", d.cuStreamBeginCapture, e) &
      resolve(library, "cuStreamEndCapture", d.cuStreamEndCapture, e) &
      resolve(library, "cuGraphInstantiateWithFlags",
              d.cuGraphInstantiateWithFlags, e) &
      resolve(library, "cuGraphLaunch", d.cuGraphLaunch, e) &
      resolve(library, "cuGraphExecDestroy", d.cuGraphExecDestroy, e) &
      resolve(library, "cuGraphDestroy", d.cuGraphDestroy, e) &
      resolve(library, "cuEventCreate", d.cuEventCreate, e) &
      resolve(library, "cuEventRecord", d.cuEventRecord, e) &
      resolve(library, "cuEventElapsedTime", d.cuEventElapsedTime, e) &
      resolve(library, "cuEventDestroy_v2", d.cuEventDestroy, e) &
      resolve(library, "cuGetErrorName", d.cuGetErrorName, e) &
      resolve(library, "cuGetErrorString", d.cuGetErrorString, e);
  if (!ok) {
    dlclose(library);
    return loaded;
  }
  // The library stays loaded for the life of the process, as the driver
  // expects.
  loaded.ok = true;
  return loaded;
}

} // namespace

const Driver *driver(std::string &error) {
  static Loaded loaded = load();
  if (!loaded.ok) {
    error = loaded.error;
    return nullptr;
  }
  return &loaded.driver;
}

std::string errorText(const Driver &driver, CUresult result) {
  const char *name = nullptr, *text = nullptr;
  if (driver.cuGetErrorName(result, &name) != CUDA_SUCCESS)
    name = nullptr;
  if (driver.cuGetErrorString(result, &text) != CUDA_SUCCESS)
    text = nullptr;
  // The toolkit's link stub knows no names.
  if (!name && result == 34) {
    name = "CUDA_ERROR_STUB_LIBRARY";
    text = "the link-time stub libcuda.so, not an installed driver";
  }
  std::string out = name ? name : "CUDA error " + std::to_string(result);
  if (text)
    out += std::string(" (") + text + ")";
  return out;
}

} // namespace kiln::rt::cuda
