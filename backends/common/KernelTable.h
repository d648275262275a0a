//===- KernelTable.h - The GPU kernels an artifact carries ------*- C++ -*-===//
//
// The GPU leaves (CUDA, HIP, the emulator) record what they built on the
// host module as `kiln.gpu.*` attributes; the artifact writer turns them into
// the descriptor's kiln_gpu_program (abi.h):
//   kiln.gpu.platform  "cuda" | "hip" | "emulator"
//   kiln.gpu.kernels   one dictionary per kernel, in launch-index order
//   kiln.gpu.archs     the device architectures of the image ("sm_80,...")
//   kiln.gpu.image     the device image (fatbin, code object), a blob
//
//===----------------------------------------------------------------------===//
#ifndef KILN_BACKENDS_COMMON_KERNELTABLE_H
#define KILN_BACKENDS_COMMON_KERNELTABLE_H

#include "mlir/IR/BuiltinOps.h"

#include <array>
#include <string>
#include <vector>

namespace mlir::kiln {

/// What the device assembler reports for one kernel on one architecture.
struct KernelResources {
  std::string arch;
  int64_t registers = 0;
  int64_t sharedBytes = 0; ///< Static shared memory.
  int64_t localBytes = 0;  ///< Stack frame (local memory) per thread.
  int64_t spillStoreBytes = 0, spillLoadBytes = 0;
  /// AMD only (0 elsewhere): SGPRs, and the waves per SIMD the kernel's
  /// registers, LDS and workgroup size allow.
  int64_t scalarRegisters = 0, occupancy = 0;
};

struct KernelInfo {
  std::string name;
  std::vector<std::string> onnxNodes;
  int64_t numParams = 0;
  bool usesBarriers = false;
  /// Static shared memory the kernel declares, bytes.
  int64_t sharedBytes = 0;
  /// The launch shape when fixed at compile time (0: computed by the run).
  std::array<int64_t, 3> grid = {0, 0, 0}, block = {0, 0, 0};
  std::vector<KernelResources> resources;
};

/// Name, ONNX nodes (`kiln.onnx_nodes`), parameter count and static shared
/// memory of an outlined kernel. `kernel` is a gpu.func.
KernelInfo describeKernel(Operation *kernel);

void setKernelTable(ModuleOp module, ArrayRef<KernelInfo> kernels);
/// The table, or failure with `error` set if the attribute is malformed.
FailureOr<std::vector<KernelInfo>> getKernelTable(ModuleOp module,
                                                  std::string &error);

} // namespace mlir::kiln

#endif // KILN_BACKENDS_COMMON_KERNELTABLE_H
