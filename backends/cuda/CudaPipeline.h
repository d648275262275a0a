//===- CudaPipeline.h - The CUDA leaf of the GPU pipeline -------*- C++ -*-===//
#ifndef KILN_BACKENDS_CUDA_CUDAPIPELINE_H
#define KILN_BACKENDS_CUDA_CUDAPIPELINE_H

#include "backends/gpu/GpuPipeline.h"

namespace mlir::kiln {

/// The whole CUDA pipeline: the shared GPU stages with the CUDA leaf
/// (NVVM conversion of @kiln_kernels, then kiln-cuda-serialize).
void buildCudaCodegenPipeline(OpPassManager &pm,
                              const GpuCodegenOptions &options);

/// Registers kiln-cuda-serialize.
void registerCudaBackendPasses();

} // namespace mlir::kiln

#endif // KILN_BACKENDS_CUDA_CUDAPIPELINE_H
