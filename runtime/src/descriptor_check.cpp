// Load-time checks of an artifact's descriptor: layout sanity and target.
#include "model.h"

#include "cpu_features.h"
#include "elf_check.h"
#include "status.h"

namespace kiln::rt {
namespace {

// Far above any real model; bounds the loops below if a descriptor is
// garbage.
constexpr uint32_t kMaxTensors = 1u << 20;
constexpr int32_t kMaxRank = 64;

std::string checkTensorList(const kiln_tensor_desc *descs, uint32_t count,
                            const char *kind, uint32_t numSymbols) {
  if (count > kMaxTensors)
    return std::string("implausible number of ") + kind + "s";
  if (count > 0 && !descs)
    return std::string(kind) + " list is NULL";
  for (uint32_t i = 0; i < count; ++i) {
    const kiln_tensor_desc &desc = descs[i];
    std::string which = std::string(kind) + " " + std::to_string(i);
    if (!desc.name)
      return which + " has no name";
    which = std::string(kind) + " " + quoted(desc.name);
    if (kiln_dtype_size(static_cast<kiln_dtype>(desc.dtype)) == 0)
      return which + " has unknown dtype " + std::to_string(desc.dtype);
    if (desc.rank < 0 || desc.rank > kMaxRank || (desc.rank > 0 && !desc.shape))
      return which + " has an invalid rank or shape";
    // Run-time extents are -1: an input's each name a symbol, an output's
    // are computed by the run.
    bool isOutput = std::string(kind) == "output";
    for (int32_t d = 0; d < desc.rank; ++d) {
      int32_t symbol = desc.symbols ? desc.symbols[d] : -1;
      if (symbol < -1 || symbol >= static_cast<int64_t>(numSymbols))
        return which + " names an unknown symbol";
      if (desc.shape[d] < 0 &&
          !(desc.shape[d] == -1 && (isOutput || symbol >= 0)))
        return which + " has a negative dimension";
    }
  }
  return "";
}

std::string checkSymbols(const kiln_artifact_descriptor &descriptor) {
  if (descriptor.num_symbols > kMaxTensors)
    return "implausible number of symbols";
  if (descriptor.num_symbols > 0 && !descriptor.symbols)
    return "symbol list is NULL";
  for (uint32_t i = 0; i < descriptor.num_symbols; ++i) {
    const kiln_symbol_desc &symbol = descriptor.symbols[i];
    if (!symbol.name)
      return "symbol " + std::to_string(i) + " has no name";
    if (symbol.min < 0 || symbol.max < symbol.min)
      return "symbol " + quoted(symbol.name) + " has an empty range";
  }
  return "";
}

// The GPU program's fields the runtime dereferences.
std::string checkGpuProgram(const kiln_artifact_descriptor &descriptor) {
  const kiln_gpu_program &gpu = *descriptor.gpu;
  if (gpu.num_kernels > kMaxTensors)
    return "implausible number of GPU kernels";
  if (gpu.num_kernels > 0 && !gpu.kernels)
    return "GPU kernel list is NULL";
  if (!gpu.archs)
    return "GPU architectures missing";
  if (gpu.platform != KILN_GPU_EMULATOR && gpu.num_kernels > 0 &&
      (!gpu.image || gpu.image_size == 0))
    return "GPU image missing";
  for (uint32_t k = 0; k < gpu.num_kernels; ++k) {
    const kiln_gpu_kernel &kernel = gpu.kernels[k];
    if (!kernel.name || !kernel.onnx_nodes)
      return "GPU kernel " + std::to_string(k) + " has no name";
    if (kernel.num_params > 256)
      return "GPU kernel " + std::string(kernel.name) +
             " has too many parameters";
    if (gpu.platform == KILN_GPU_EMULATOR && !kernel.emulated)
      return "emulated GPU kernel " + std::string(kernel.name) + " has no code";
  }
  return "";
}

// The architecture part of a target triple, with LLVM's aliases folded.
std::string tripleArch(const std::string &triple) {
  std::string arch = triple.substr(0, triple.find('-'));
  if (arch == "amd64")
    return "x86_64";
  if (arch == "arm64")
    return "aarch64";
  return arch;
}

} // namespace

kiln_status validateDescriptor(const kiln_artifact_descriptor &descriptor,
                               const std::string &path) {
  std::string problem = checkSymbols(descriptor);
  if (problem.empty())
    problem = checkTensorList(descriptor.inputs, descriptor.num_inputs, "input",
                              descriptor.num_symbols);
  if (problem.empty())
    problem = checkTensorList(descriptor.outputs, descriptor.num_outputs,
                              "output", descriptor.num_symbols);
  if (problem.empty() && !descriptor.entry)
    problem = "no entry point";
  if (problem.empty() && descriptor.gpu)
    problem = checkGpuProgram(descriptor);
  if (problem.empty())
    return KILN_OK;
  return fail(KILN_ERROR_BAD_ARTIFACT,
              quoted(path) + " has a malformed kiln descriptor: " + problem);
}

kiln_status checkTarget(const kiln_artifact_descriptor &descriptor,
                        const std::string &path) {
  std::string triple = descriptor.target_triple ? descriptor.target_triple : "";
  std::string arch = tripleArch(triple);
  if (!arch.empty() && arch != hostArchName())
    return fail(KILN_ERROR_BAD_ARTIFACT, quoted(path) + " was built for " +
                                             triple + ", but this machine is " +
                                             hostArchName());
  std::string features =
      descriptor.target_features ? descriptor.target_features : "";
  std::string missing = firstMissingCpuFeature(features);
  if (missing.empty())
    return KILN_OK;
  std::string cpu = descriptor.target_cpu ? descriptor.target_cpu : "";
  return fail(KILN_ERROR_BAD_ARTIFACT,
              quoted(path) + " needs CPU feature " + missing +
                  ", which this machine lacks" +
                  (cpu.empty() ? "" : " (built for " + cpu + ")"));
}

} // namespace kiln::rt
