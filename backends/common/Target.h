//===- Target.h - What an artifact is compiled for --------------*- C++ -*-===//
//
// The one target choice the driver, the pipeline and the artifact writer
// dispatch on: a CPU (x86-64 or aarch64) or a GPU platform (CUDA, HIP) with
// the host CPU that runs its launch sequence. Adding a platform adds a kind
// here and a leaf under backends/, not branches across the driver.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_BACKENDS_COMMON_TARGET_H
#define KILN_BACKENDS_COMMON_TARGET_H

#include "backends/common/CpuTarget.h"

#include <string>
#include <vector>

namespace mlir::kiln {

enum class TargetKind { Cpu, Cuda, Hip };

/// Arithmetic the GPU's matmuls, convolutions and attention may use for f32
/// models (as torch.backends.cuda.matmul.allow_tf32 and autocast do):
/// fp32 keeps f32 everywhere; the others run tensor-core MMAs on tf32, bf16
/// or f16 operands with f32 accumulation.
enum class GpuPrecision { Fp32, Tf32, Bf16, Fp16 };

struct GpuTarget {
  /// Device architectures code is built for, lowest first: "sm_80",
  /// "sm_90a" (CUDA); "gfx90a", "gfx942" (HIP).
  std::vector<std::string> archs;
  GpuPrecision precision = GpuPrecision::Fp32;
  /// Compile the kernels for the host CPU instead of the device (kiln's GPU
  /// emulator: the same block/thread-mapped kernels run by the runtime on
  /// this machine, to check their numerics without a GPU).
  bool emulate = false;
  /// Threads of a warp (CUDA 32) or wavefront (AMD Instinct 64).
  unsigned warpSize = 32;
  /// Static shared memory one block may use, bytes.
  unsigned sharedMemoryBytes = 48 * 1024;

  /// Whether every arch has the matrix instructions the contraction kernels
  /// use: CUDA's mma.sync m16n8k8 tf32 and m16n8k16 f16/bf16 (sm_80 and
  /// up), AMD's MFMA 16x16x4 f32 and 16x16x16 f16/bf16 (every accepted
  /// gfx9 Instinct arch).
  bool hasTensorCores() const;
  /// Whether the archs are AMD ones (gfx...).
  bool isAmd() const;
};

struct Target {
  TargetKind kind = TargetKind::Cpu;
  /// The CPU the artifact's host code runs on: for a CPU target the target
  /// itself, for a GPU target the machine that launches the kernels.
  CpuTarget host;
  GpuTarget gpu; ///< Meaningful only when isGpu().
  /// CPU targets, --precision=bf16: matmul weights stored in bf16 and
  /// multiplied in bf16 (AVX512-BF16) or extended to f32 as loaded.
  bool bf16Weights = false;

  bool isGpu() const { return kind != TargetKind::Cpu; }
  /// "cpu", "cuda" or "hip".
  StringRef platformName() const;

  /// The host CPU as a CPU target.
  static Target cpu(CpuTarget host);

  /// Parses --target, --cpu, --gpu-arch, --gpu-precision and --gpu-emulate.
  /// `target` is a CPU triple (see CpuTarget::fromFlags), "cuda" or "hip";
  /// `gpuArchs` is a comma list (default sm_80,sm_90a for CUDA, gfx90a,gfx942
  /// for HIP) and is refused for CPU targets, as are the other GPU flags.
  /// On failure `error` names the bad value and what is accepted.
  static FailureOr<Target> fromFlags(StringRef target, StringRef cpu,
                                     StringRef gpuArchs, StringRef precision,
                                     bool emulate, std::string &error);
};

/// "fp32", "tf32", "bf16", "fp16".
StringRef stringifyGpuPrecision(GpuPrecision precision);

} // namespace mlir::kiln

#endif // KILN_BACKENDS_COMMON_TARGET_H
