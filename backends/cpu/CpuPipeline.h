//===- CpuPipeline.h - linalg on tensors to the LLVM dialect ----*- C++ -*-===//
//
// The CPU backend's one entry point: a pass pipeline from linalg on tensors
// (func.func @main(tensor...) -> tensor...) to an LLVM-dialect module whose
// @main takes bare pointers (inputs..., outputs..., arena, weights, runtime
// callbacks), with big loops outlined for the runtime's parallel_for, and
// that carries `kiln.arena_size` and `kiln.weights` for the artifact writer.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_BACKENDS_CPU_CPUPIPELINE_H
#define KILN_BACKENDS_CPU_CPUPIPELINE_H

#include "backends/common/CpuTarget.h"

#include "mlir/Pass/PassManager.h"

namespace mlir {
class DialectRegistry;
namespace kiln {

struct CpuCodegenOptions {
  CpuTarget target;
  int optLevel = 2; ///< 0-3, as -O.
  /// Free each weight's data once packed (kiln-tile-contractions
  /// release-weights): only for a module alone in its context.
  bool releaseWeights = false;
  /// --precision=bf16: matmul weights in bf16 (kiln-tile-contractions
  /// bf16-weights; bf16-dot where the CPU has AVX512-BF16).
  bool bf16Weights = false;
  /// kiln-tile-nhwc-convolutions `winograd`: -1 the cost model, 0 never,
  /// 2 or 4 that F(m x m, 3 x 3) for every 3x3 stride-1 convolution.
  int64_t winograd = -1;
};

/// Appends the CPU code generation stages to `pm` (anchored on ModuleOp):
///   1. tensor level: inputs read-only, elementwise fusion, cleanup, loop
///      order of contractions (kiln-interchange-contractions; tiling and
///      vectorization will take this slot);
///   2. bufferization: one-shot with function boundaries, identity layouts,
///      results become out-params written in place;
///   3. memory: kiln-plan-arena, kiln-outline-weights;
///   4. loops: kiln-expand-strided-copies, linalg to parallel loops,
///      kiln-outline-parallel-loops, f16/bf16 math in f32,
///      kiln-approximate-math, bf16 (and f16 without F16C) arithmetic in f32;
///   5. LLVM dialect: bare-pointer calling convention, libm for the math the
///      approximations leave.
void buildCpuCodegenPipeline(OpPassManager &pm,
                             const CpuCodegenOptions &options);

/// Stage 2 of the CPU pipeline, shared with the GPU backends: one-shot
/// bufferization with function boundaries and identity layouts, results as
/// out-params written in place, cleanup.
void addBufferizationPasses(OpPassManager &pm);

/// Stage 5, shared with the GPU backends' host code (and the emulator's
/// kernels): f16/bf16 math in f32, approximations, then every dialect to the
/// LLVM dialect with the bare-pointer calling convention.
void addLLVMLoweringPasses(OpPassManager &pm, const CpuCodegenOptions &options);

/// Dialects and external interface models the pipeline needs to be loaded
/// (bufferization models of linalg/tensor/arith/scf/func, LLVM translation).
void registerCpuBackendDialects(DialectRegistry &registry);

} // namespace kiln
} // namespace mlir

#endif // KILN_BACKENDS_CPU_CPUPIPELINE_H
