#ifndef KILN_BACKENDS_CUDA_PASSES_TD
#define KILN_BACKENDS_CUDA_PASSES_TD

include "mlir/Pass/PassBase.td"

def SerializeCuda : Pass<"kiln-cuda-serialize", "ModuleOp"> {
  let summary = "Assemble @kiln_kernels (NVVM) into a fatbin for the "
                "artifact";
  let description = [{
    The CUDA leaf's last step. For each architecture in `archs` the
    NVVM-dialect `gpu.module @kiln_kernels` is translated to PTX (NVPTX
    backend, libdevice linked for math), assembled by the CUDA toolkit's
    `ptxas -v` into a cubin, and the cubins plus the PTX of the lowest
    architecture (for newer GPUs to JIT) are bundled by `fatbinary`. ptxas's
    report (registers, shared memory, stack, spills per kernel and arch)
    goes into the kernel table; a kernel that spills at ptxas's default
    occupancy is assembled again with the launch bound of one block per SM
    (`.minnctapersm 1`, up to 255 registers); a kernel that spills more than
    `spill-budget` bytes is an error naming it. The module gets
    `kiln.gpu.platform = "cuda"`, `kiln.gpu.archs`, `kiln.gpu.kernels` and
    the fatbin as the `kiln.gpu.image` blob; the gpu.module is erased.

    Before:
    ```mlir
    gpu.module @kiln_kernels {
      llvm.func @kiln_kernel_0(%arg0: !llvm.ptr) attributes {gpu.kernel,
          nvvm.kernel, kiln.onnx_nodes = ["relu"]} { ... }
    }
    ```
    After:
    ```mlir
    module attributes {kiln.gpu.platform = "cuda",
        kiln.gpu.archs = "sm_80,sm_90a",
        kiln.gpu.kernels = [
          {name = "kiln_kernel_0", nodes = ["relu"], params = 1,
           resources = [{arch = "sm_80", registers = 16, ...}, ...], ...}
        ],
        kiln.gpu.image = dense_resource<kiln_gpu_image> : tensor<9544xi8>}
    ```
  }];
  let options = [
    ListOption<"archs", "archs", "std::string",
               "Architectures, lowest first (sm_80, sm_90a, ...)">,
    Option<"toolkitPath", "toolkit", "std::string", "\"\"",
           "CUDA toolkit root (default: CUDA_ROOT, CUDA_HOME, the folder of "
           "ptxas on PATH, /usr/local/cuda)">,
    Option<"optLevel", "opt-level", "int", "3", "NVPTX and ptxas -O level">,
    Option<"spillBudget", "spill-budget", "int64_t", "-1",
           "Most spill bytes (stores + loads) a kernel may have on any "
           "architecture; -1: no limit">,
  ];
  let dependentDialects = ["gpu::GPUDialect", "NVVM::NVVMDialect"];
}

#endif // KILN_BACKENDS_CUDA_PASSES_TD
