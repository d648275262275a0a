//===- HipPipeline.h - The HIP leaf of the GPU pipeline ---------*- C++ -*-===//
#ifndef KILN_BACKENDS_HIP_HIPPIPELINE_H
#define KILN_BACKENDS_HIP_HIPPIPELINE_H

#include "backends/gpu/GpuPipeline.h"

namespace mlir::kiln {

/// The whole HIP pipeline: the shared GPU stages with the HIP leaf
/// (arch-independent lowering of @kiln_kernels, then kiln-hip-serialize).
void buildHipCodegenPipeline(OpPassManager &pm,
                             const GpuCodegenOptions &options);

/// Registers kiln-hip-serialize.
void registerHipBackendPasses();

} // namespace mlir::kiln

#endif // KILN_BACKENDS_HIP_HIPPIPELINE_H
