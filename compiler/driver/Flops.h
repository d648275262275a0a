//===- Flops.h - Floating-point work of a lowered model ---------*- C++ -*-===//
#ifndef KILN_COMPILER_DRIVER_FLOPS_H
#define KILN_COMPILER_DRIVER_FLOPS_H

#include <cstdint>

namespace mlir {
class ModuleOp;
} // namespace mlir

namespace mlir::kiln {

/// Floating-point operations of one run of @main in its contractions and
/// convolutions (2 per multiply-add), counted on linalg ops after
/// kiln-lower-to-linalg: each op's static iteration space times the static
/// trip counts of the loops around it (the flash attention's block loops).
/// Elementwise ops and reductions are not counted, and a contraction under
/// a loop of run-time trip count (causal attention's key loop) is left out,
/// so this is the figure benchmarks report as GFLOP, a lower bound of the
/// work. 0 if there is none.
uint64_t countContractionFlops(ModuleOp module);

} // namespace mlir::kiln

#endif // KILN_COMPILER_DRIVER_FLOPS_H
