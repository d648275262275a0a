//===- CpuPipeline.h - linalg on tensors to the LLVM dialect ----*- C++ -*-===//
//
// The CPU backend's one entry point: a pass pipeline from linalg on tensors
// (func.func @main(tensor...) -> tensor...) to an LLVM-dialect module whose
// @main takes bare pointers (inputs..., outputs..., arena, weights) and that
// carries `kiln.arena_size` and `kiln.weights` for the artifact writer.
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
};

/// Appends the CPU code generation stages to `pm` (anchored on ModuleOp):
///   1. tensor level: inputs read-only, elementwise fusion, cleanup;
///   2. bufferization: one-shot with function boundaries, identity layouts,
///      results become out-params written in place;
///   3. memory: kiln-plan-arena, kiln-outline-weights;
///   4. loops: kiln-expand-strided-copies, linalg to loops,
///      kiln-approximate-math;
///   5. LLVM dialect: bare-pointer calling convention, libm for the math the
///      approximations leave.
/// Tiling/vectorization of contractions belongs between stages 1 and 2.
void buildCpuCodegenPipeline(OpPassManager &pm,
                             const CpuCodegenOptions &options);

/// Dialects and external interface models the pipeline needs to be loaded
/// (bufferization models of linalg/tensor/arith/scf/func, LLVM translation).
void registerCpuBackendDialects(DialectRegistry &registry);

} // namespace kiln
} // namespace mlir

#endif // KILN_BACKENDS_CPU_CPUPIPELINE_H
