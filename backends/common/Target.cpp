//===- Target.cpp - The target choice from command-line flags -------------===//
#include "backends/common/Target.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::kiln;

StringRef Target::platformName() const {
  switch (kind) {
  case TargetKind::Cpu:
    return "cpu";
  case TargetKind::Cuda:
    return "cuda";
  case TargetKind::Hip:
    return "hip";
  }
  return "cpu";
}

StringRef mlir::kiln::stringifyGpuPrecision(GpuPrecision precision) {
  switch (precision) {
  case GpuPrecision::Fp32:
    return "fp32";
  case GpuPrecision::Tf32:
    return "tf32";
  case GpuPrecision::Bf16:
    return "bf16";
  case GpuPrecision::Fp16:
    return "fp16";
  }
  return "fp32";
}

Target Target::cpu(CpuTarget host) {
  Target target;
  target.host = std::move(host);
  return target;
}

namespace {
/// The compute capability of "sm_90a" (90), or 0 if `arch` is not one.
unsigned cudaCapability(StringRef arch) {
  if (!arch.consume_front("sm_"))
    return 0;
  if (arch.ends_with("a") || arch.ends_with("f"))
    arch = arch.drop_back();
  unsigned cc = 0;
  if (arch.getAsInteger(10, cc))
    return 0;
  return cc;
}

/// The GFX version number of "gfx942" (0x942), or 0 if not one.
unsigned gfxVersion(StringRef arch) {
  if (!arch.consume_front("gfx") || arch.empty())
    return 0;
  unsigned version = 0;
  if (arch.getAsInteger(16, version))
    return 0;
  return version;
}

/// Validates and sorts the --gpu-arch list, lowest first.
LogicalResult parseArchs(TargetKind kind, StringRef list,
                         std::vector<std::string> &archs, std::string &error) {
  SmallVector<StringRef> parts;
  list.split(parts, ',', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
  for (StringRef part : parts) {
    StringRef arch = part.trim();
    if (kind == TargetKind::Cuda) {
      // mma.sync with f32 accumulation and the async copies need sm_80;
      // ptxas of CUDA 13 knows sm_75 and up.
      unsigned cc = cudaCapability(arch);
      if (cc < 75 || cc > 121) {
        error = ("unknown --gpu-arch '" + arch +
                 "' for --target=cuda; accepted: sm_75 to sm_121 with an "
                 "optional a suffix (sm_80, sm_86, sm_89, sm_90a, sm_100a, "
                 "sm_120)")
                    .str();
        return failure();
      }
    } else {
      // AMD Instinct (CDNA2 and newer): wave64 with MFMA, including
      // 16x16x16 bf16 (gfx908's bf16 MFMAs are the older 16x16x8 ones).
      if (!llvm::is_contained(
              {"gfx90a", "gfx940", "gfx941", "gfx942", "gfx950"}, arch)) {
        error = ("unknown --gpu-arch '" + arch +
                 "' for --target=hip; accepted: the AMD Instinct archs "
                 "gfx90a (MI200), gfx940, gfx941, gfx942 (MI300), gfx950 "
                 "(MI350)")
                    .str();
        return failure();
      }
    }
    if (!llvm::is_contained(archs, arch.str()))
      archs.push_back(arch.str());
  }
  if (archs.empty()) {
    error = "--gpu-arch needs at least one architecture";
    return failure();
  }
  llvm::stable_sort(archs, [&](const std::string &a, const std::string &b) {
    if (kind == TargetKind::Cuda)
      return std::make_pair(cudaCapability(a), a.size()) <
             std::make_pair(cudaCapability(b), b.size());
    return gfxVersion(a) < gfxVersion(b);
  });
  return success();
}
} // namespace

bool GpuTarget::isAmd() const {
  return !archs.empty() && StringRef(archs.front()).starts_with("gfx");
}

bool GpuTarget::hasTensorCores() const {
  if (isAmd())
    return true;
  // The archs are sorted, lowest first.
  return !archs.empty() && cudaCapability(archs.front()) >= 80;
}

FailureOr<Target> Target::fromFlags(StringRef targetFlag, StringRef cpu,
                                    StringRef gpuArchs, StringRef precision,
                                    bool emulate, std::string &error) {
  Target target;
  if (targetFlag == "cuda")
    target.kind = TargetKind::Cuda;
  else if (targetFlag == "hip")
    target.kind = TargetKind::Hip;

  if (!target.isGpu()) {
    for (auto [flag, given] : {std::pair{"--gpu-arch", !gpuArchs.empty()},
                               std::pair{"--gpu-precision", !precision.empty()},
                               std::pair{"--gpu-emulate", emulate}})
      if (given) {
        error = std::string(flag) +
                " needs a GPU target (--target=cuda or --target=hip)";
        return failure();
      }
    FailureOr<CpuTarget> host = CpuTarget::fromFlags(targetFlag, cpu, error);
    if (failed(host))
      return failure();
    target.host = *host;
    return target;
  }

  // The host code of a GPU artifact only launches kernels: generic x86-64
  // runs on any machine the GPU sits in. The emulator runs the kernels on
  // the host, so it takes this machine's CPU.
  if (cpu.empty())
    cpu = emulate ? "native" : "generic";
  FailureOr<CpuTarget> host = CpuTarget::fromFlags("", cpu, error);
  if (failed(host))
    return failure();
  target.host = *host;

  GpuTarget &gpu = target.gpu;
  gpu.emulate = emulate;
  StringRef archs = gpuArchs;
  if (archs.empty())
    archs = target.kind == TargetKind::Cuda ? "sm_80,sm_90a" : "gfx90a,gfx942";
  if (failed(parseArchs(target.kind, archs, gpu.archs, error)))
    return failure();
  if (precision.empty() || precision == "fp32")
    gpu.precision = GpuPrecision::Fp32;
  else if (precision == "tf32")
    gpu.precision = GpuPrecision::Tf32;
  else if (precision == "bf16")
    gpu.precision = GpuPrecision::Bf16;
  else if (precision == "fp16")
    gpu.precision = GpuPrecision::Fp16;
  else {
    error = ("unknown --gpu-precision '" + precision +
             "'; accepted: fp32, tf32, bf16, fp16")
                .str();
    return failure();
  }
  if (gpu.precision != GpuPrecision::Fp32 && !gpu.hasTensorCores()) {
    error =
        ("--gpu-precision=" + precision +
         " runs on the tensor cores of sm_80 and newer, and --gpu-arch "
         "includes " +
         gpu.archs.front() + "; drop it from --gpu-arch or compile with fp32")
            .str();
    return failure();
  }
  gpu.warpSize = target.kind == TargetKind::Cuda ? 32 : 64;
  // Static shared memory: 48 KiB on CUDA (more needs the dynamic kind);
  // the LDS of a workgroup on AMD Instinct, 64 KiB.
  gpu.sharedMemoryBytes =
      target.kind == TargetKind::Cuda ? 48 * 1024 : 64 * 1024;
  return target;
}
