//===- ArtifactInterface.h - The ABI glue in LLVM IR ------------*- C++ -*-===//
#ifndef KILN_BACKENDS_COMMON_ARTIFACTINTERFACE_H
#define KILN_BACKENDS_COMMON_ARTIFACTINTERFACE_H

#include "backends/common/Artifact.h"
#include "backends/common/KernelTable.h"

#include "llvm/ADT/ArrayRef.h"

#include <optional>

namespace llvm {
class GlobalVariable;
class Module;
} // namespace llvm

namespace mlir::kiln {

/// The device program of a GPU artifact (kiln_gpu_program in abi.h).
struct GpuContents {
  int32_t platform = 0; ///< kiln_gpu_platform
  std::string archs;
  std::vector<KernelInfo> kernels;
  llvm::ArrayRef<char> image; ///< Empty for the emulator.
};

/// What the generated code needs from the artifact around it.
struct ArtifactContents {
  uint64_t arenaSize = 0;
  uint64_t weightsSize = 0; ///< Bytes the writer puts in .kiln.weights.
  std::optional<GpuContents> gpu;
  /// The CPU math precision when not fp32 ("bf16"), for the manifest.
  std::string precision;
};

/// Adds to `module` (which defines `main(ptr...)` as the backend pipeline
/// leaves it) `kiln_entry`, the descriptor and the exported
/// `kiln_artifact`, then gives every other definition internal linkage.
/// `main`'s weights are those the runtime mapped from the artifact's
/// `.kiln.weights` section (`runtime->weights`, abi.h), or for a GPU artifact
/// their device copy (`runtime->device_weights`); the descriptor gets the
/// kernel table (with emulator entry points when the kernels are host
/// functions). Fails, with `error` set, if `main` does not match `spec`.
LogicalResult addArtifactInterface(llvm::Module &module,
                                   const ArtifactSpec &spec,
                                   const CpuTarget &target,
                                   const ArtifactContents &contents,
                                   std::string &error);

/// `bytes` as one internal constant global in section `section`, aligned to
/// KILN_ALIGNMENT (device images).
llvm::GlobalVariable *rawBytesGlobal(llvm::Module &module,
                                     llvm::ArrayRef<char> bytes,
                                     llvm::StringRef name,
                                     llvm::StringRef section);

} // namespace mlir::kiln

#endif // KILN_BACKENDS_COMMON_ARTIFACTINTERFACE_H
