#ifndef KILN_BACKENDS_HIP_PASSES_TD
#define KILN_BACKENDS_HIP_PASSES_TD

include "mlir/Pass/PassBase.td"

def SerializeHip : Pass<"kiln-hip-serialize", "ModuleOp"> {
  let summary = "Lower @kiln_kernels to ROCDL and build a code object per "
                "AMD arch, bundled for the artifact";
  let description = [{
    The HIP leaf's last step. For each architecture in `archs` a copy of
    `gpu.module @kiln_kernels` is lowered for that chipset
    (convert-amdgpu-to-rocdl: MFMA ops to the arch's intrinsics;
    convert-gpu-to-rocdl with bare pointers: thread ids, barriers, math
    through ROCm's ocml), then LLVM's AMDGPU backend emits a wave64 code
    object (code object v5, ROCm's device libraries linked where math needs
    them, ld.lld from the toolkit folder). Each code object's amdhsa.kernels
    metadata (VGPRs with AGPRs, SGPRs, LDS, scratch, VGPR spills) and the
    occupancy it allows go into the kernel table; a kernel with scratch
    above `scratch-budget` bytes is an error naming it. The code objects go
    into one clang offload bundle (ids `hipv4-amdgcn-amd-amdhsa--gfx942`),
    the module's `kiln.gpu.image`; the gpu.module is erased.

    Before:
    ```mlir
    gpu.module @kiln_kernels {
      gpu.func @kiln_kernel_0(%arg0: memref<1024xf32>) kernel
          attributes {kiln.onnx_nodes = ["relu"]} { ... }
    }
    ```
    After:
    ```mlir
    module attributes {kiln.gpu.platform = "hip",
        kiln.gpu.archs = "gfx90a,gfx942",
        kiln.gpu.kernels = [
          {name = "kiln_kernel_0", nodes = ["relu"], params = 1,
           resources = [{arch = "gfx90a", registers = 4, sgprs = 16,
                         occupancy = 8, ...}, ...], ...}
        ],
        kiln.gpu.image = dense_resource<kiln_gpu_image> : tensor<12345xi8>}
    ```
  }];
  let options = [
    ListOption<"archs", "archs", "std::string",
               "AMD architectures, lowest first (gfx90a, gfx942, ...)">,
    Option<"toolkitPath", "toolkit", "std::string", "\"\"",
           "Folder with llvm/bin/ld.lld and amdgcn/bitcode (default: "
           "ROCM_PATH, the build's rocm-toolkit, /opt/rocm)">,
    Option<"optLevel", "opt-level", "int", "3", "AMDGPU backend -O level">,
    Option<"scratchBudget", "scratch-budget", "int64_t", "-1",
           "Most scratch bytes per thread a kernel may use on any arch; -1: "
           "no limit">,
  ];
  let dependentDialects = ["gpu::GPUDialect", "ROCDL::ROCDLDialect",
                           "LLVM::LLVMDialect", "func::FuncDialect",
                           "cf::ControlFlowDialect"];
}

#endif // KILN_BACKENDS_HIP_PASSES_TD
