//===- HipToolkit.h - What the HIP leaf needs besides LLVM ------*- C++ -*-===//
//
// LLVM's AMDGPU backend (inside MLIR's ROCDL target) emits the code
// objects; linking them needs ld.lld, and math needs ROCm's device
// libraries (ocml, ockl bitcode). A toolkit folder lays both out as ROCm
// does: llvm/bin/ld.lld and amdgcn/bitcode/*.bc. The build makes one from
// Debian's lld-22 and rocm-device-libs (build/rocm-toolkit).
//
// Also here: the code object's own report (VGPRs, SGPRs, LDS, scratch,
// spills from the amdhsa.kernels metadata note), the occupancy it allows,
// and the clang offload bundle that carries one code object per arch.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_BACKENDS_HIP_HIPTOOLKIT_H
#define KILN_BACKENDS_HIP_HIPTOOLKIT_H

#include "backends/common/KernelTable.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <map>
#include <string>
#include <utility>

namespace mlir::kiln {

struct HipToolkit {
  std::string root; ///< Folder with llvm/bin/ld.lld and amdgcn/bitcode.

  /// Finds the toolkit: `hint` if given, else ROCM_PATH, the build's
  /// rocm-toolkit folder, /opt/rocm. On failure `error` says where it looked
  /// and what was missing.
  static FailureOr<HipToolkit> find(llvm::StringRef hint, std::string &error);
};

/// The resources of each kernel of an AMDGPU code object (ELF), by name,
/// from its amdhsa.kernels metadata; `arch` goes into each entry. Fails with
/// `error` set if the object has no readable metadata.
FailureOr<std::map<std::string, KernelResources>>
readCodeObjectResources(llvm::StringRef object, llvm::StringRef arch,
                        std::string &error);

/// Waves per SIMD (at most 8) a kernel with these resources can keep
/// resident on a CDNA compute unit: 512 VGPRs (arch + AGPRs, granule 8)
/// and 800 SGPRs (granule 16) per SIMD lane, 64 KiB LDS per CU shared by its
/// workgroups of `workgroupSize` threads (waves spread over 4 SIMDs).
int64_t cdnaOccupancy(int64_t vgprs, int64_t sgprs, int64_t ldsBytes,
                      int64_t workgroupSize);

/// A clang offload bundle (the format of clang-offload-bundler and HIP
/// fat binaries) holding an empty host entry and one code object per arch,
/// with ids "hipv4-amdgcn-amd-amdhsa--<arch>".
std::string
writeOffloadBundle(llvm::ArrayRef<std::pair<std::string, std::string>> objects);

} // namespace mlir::kiln

#endif // KILN_BACKENDS_HIP_HIPTOOLKIT_H
