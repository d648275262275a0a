// The platform of a GPU artifact, and what every platform shares.
#include "gpu_device.h"

#include "status.h"

namespace kiln::rt {

std::string describeKernel(const kiln_gpu_program &program, uint32_t kernel) {
  const kiln_gpu_kernel &k = program.kernels[kernel];
  std::string text = std::string("kernel ") + k.name;
  if (k.onnx_nodes && *k.onnx_nodes)
    text += std::string(" (ONNX nodes: ") + k.onnx_nodes + ")";
  return text;
}

kiln_status openGpuDevice(const kiln_artifact_descriptor &descriptor,
                          const std::string &path,
                          std::unique_ptr<GpuDevice> &out) {
  switch (descriptor.gpu->platform) {
  case KILN_GPU_CUDA:
    return openCudaDevice(descriptor, path, out);
  case KILN_GPU_EMULATOR:
    return openEmulatedDevice(descriptor, path, out);
  case KILN_GPU_HIP:
    return fail(KILN_ERROR_BAD_ARTIFACT,
                quoted(path) + " is a HIP artifact; this runtime has no HIP "
                               "support yet");
  default:
    return fail(KILN_ERROR_BAD_ARTIFACT,
                quoted(path) + " has an unknown GPU platform " +
                    std::to_string(descriptor.gpu->platform));
  }
}

} // namespace kiln::rt
