//===- GpuPipeline.h - linalg on tensors to GPU kernels ---------*- C++ -*-===//
//
// What CUDA and HIP share: kernels formed from linalg on tensors, buffers in
// one device arena and one device weights blob, kernels outlined into one
// gpu.module, the host entry reduced to launch calls. A leaf (the CUDA or
// HIP device lowering, or the emulator) turns the gpu.module into the
// artifact's device code; the host code then goes through the CPU backend's
// LLVM lowering for the host CPU.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_BACKENDS_GPU_GPUPIPELINE_H
#define KILN_BACKENDS_GPU_GPUPIPELINE_H

#include "backends/common/Target.h"

#include "mlir/Pass/PassManager.h"

#include <functional>

namespace mlir {
class DialectRegistry;
namespace kiln {

struct GpuCodegenOptions {
  Target target;
  int optLevel = 2;
};

/// Adds the passes that turn `@kiln_kernels` into device code and record the
/// kernel table (kiln.gpu.* module attributes, backends/common/KernelTable.h).
using GpuLeafBuilder =
    std::function<void(OpPassManager &, const GpuCodegenOptions &)>;

/// Appends the GPU code generation stages to `pm` (anchored on ModuleOp):
///   1. tensor level: inputs read-only, elementwise fusion;
///   2. bufferization (shared with the CPU backend);
///   3. memory: one device arena (kiln-plan-arena), one weights blob
///      (kiln-outline-weights), scratch of parallel iterations private;
///   4. kernels: every copy a loop, linalg to parallel loops,
///      kiln-gpu-form-kernels, kiln-gpu-outline-kernels,
///      kiln-gpu-launch-calls;
///   5. the leaf: `deviceLeaf`, or the emulator when
///      options.target.gpu.emulate;
///   6. host (and emulated kernels) to the LLVM dialect.
void buildGpuCodegenPipeline(OpPassManager &pm,
                             const GpuCodegenOptions &options,
                             const GpuLeafBuilder &deviceLeaf);

/// Dialects and interfaces the GPU pipelines need in the context's registry
/// (GPU, NVVM, ROCDL and their target attributes).
void registerGpuBackendDialects(DialectRegistry &registry);

/// Registers the GPU passes.
void registerGpuBackendPasses();

} // namespace kiln
} // namespace mlir

#endif // KILN_BACKENDS_GPU_GPUPIPELINE_H
