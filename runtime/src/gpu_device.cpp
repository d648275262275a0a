// The platform of a GPU artifact, and what every platform shares.
#include "gpu_device.h"

#include "status.h"

#include <cstdlib>
#include <cstring>

namespace kiln::rt {

std::string describeKernel(const kiln_gpu_program &program, uint32_t kernel) {
  const kiln_gpu_kernel &k = program.kernels[kernel];
  std::string text = std::string("kernel ") + k.name;
  if (k.onnx_nodes && *k.onnx_nodes)
    text += std::string(" (ONNX nodes: ") + k.onnx_nodes + ")";
  return text;
}

namespace gpu_driver {
bool envFlag(const char *name) {
  const char *env = std::getenv(name);
  return env && std::strcmp(env, "1") == 0;
}

kiln_status launchParams(const kiln_gpu_program &program, uint32_t kernel,
                         const uint64_t *args, void *(&params)[kMaxParams]) {
  const kiln_gpu_kernel &k = program.kernels[kernel];
  if (k.num_params > kMaxParams)
    return fail(KILN_ERROR_BAD_ARTIFACT,
                describeKernel(program, kernel) + " has more than " +
                    std::to_string(kMaxParams) + " parameters");
  // The driver copies each parameter's bytes from its slot at launch.
  for (uint32_t i = 0; i < k.num_params; ++i)
    params[i] = const_cast<uint64_t *>(args + i);
  return KILN_OK;
}

std::string launchFailure(const kiln_gpu_program &program, uint32_t kernel,
                          const uint32_t grid[3], const uint32_t block[3]) {
  return describeKernel(program, kernel) + " failed to launch (grid " +
         std::to_string(grid[0]) + "x" + std::to_string(grid[1]) + "x" +
         std::to_string(grid[2]) + ", block " + std::to_string(block[0]) + "x" +
         std::to_string(block[1]) + "x" + std::to_string(block[2]) + ")";
}
} // namespace gpu_driver

kiln_status openGpuDevice(const kiln_artifact_descriptor &descriptor,
                          const std::string &path, const void *hostWeights,
                          std::unique_ptr<GpuDevice> &out) {
  switch (descriptor.gpu->platform) {
  case KILN_GPU_CUDA:
    return openCudaDevice(descriptor, path, hostWeights, out);
  case KILN_GPU_EMULATOR:
    return openEmulatedDevice(descriptor, path, hostWeights, out);
  case KILN_GPU_HIP:
    return openHipDevice(descriptor, path, hostWeights, out);
  default:
    return fail(KILN_ERROR_BAD_ARTIFACT,
                quoted(path) + " has an unknown GPU platform " +
                    std::to_string(descriptor.gpu->platform));
  }
}

} // namespace kiln::rt
