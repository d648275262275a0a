//===- GpuProgram.h - The kiln_gpu_program of a GPU artifact ----*- C++ -*-===//
#ifndef KILN_BACKENDS_COMMON_GPUPROGRAM_H
#define KILN_BACKENDS_COMMON_GPUPROGRAM_H

#include "backends/common/ArtifactInterface.h"

namespace llvm {
class Constant;
class Module;
} // namespace llvm

namespace mlir::kiln {

/// Builds the descriptor's kiln_gpu_program (abi.h) in `module`: the kernel
/// table with its per-architecture resources, the device image as raw bytes
/// (section .kiln.gpu); the runtime uploads the weights it maps. For the
/// emulator, each kernel `K(params..., ptr thread)` (as the host pipeline
/// leaves it) gets an entry point `K.emulated(ptr args, ptr thread)` that
/// loads each parameter from its slot, and `__kiln_emulator_barrier` and
/// `__kiln_emulator_mma` are defined. Fails with `error` set if a kernel of the
/// table is missing.
llvm::Constant *buildGpuProgram(llvm::Module &module, const GpuContents &gpu,
                                std::string &error);

} // namespace mlir::kiln

#endif // KILN_BACKENDS_COMMON_GPUPROGRAM_H
