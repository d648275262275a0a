//===- CpuTarget.h - Which CPU an artifact is compiled for ------*- C++ -*-===//
#ifndef KILN_BACKENDS_COMMON_CPUTARGET_H
#define KILN_BACKENDS_COMMON_CPUTARGET_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace mlir::kiln {

/// An LLVM target triple, CPU name and feature string ("+avx2,+fma,...").
/// The triple is always normalized (`x86_64-unknown-linux-gnu`,
/// `aarch64-unknown-linux-gnu`), so the runtime compares plain strings.
struct CpuTarget {
  std::string triple;
  std::string cpu;
  std::string features;

  /// The machine the compiler runs on, with all of its CPU features.
  static CpuTarget host();

  /// Parses `--target` and `--cpu`. `target` accepts "x86_64",
  /// "x86_64-linux-gnu", "aarch64", "aarch64-linux-gnu" (and the normalized
  /// triples); empty means the host. `cpu` accepts "native" (host CPU, only
  /// for the host's architecture), "generic" or any CPU LLVM knows for the
  /// target (znver5, neoverse-n1, ...); empty means "native" for the host
  /// target and "generic" otherwise. On failure `error` names the bad value
  /// and what is accepted.
  static FailureOr<CpuTarget> fromFlags(StringRef target, StringRef cpu,
                                        std::string &error);

  /// Whether code for this target may use the LLVM subtarget feature `name`
  /// (e.g. "f16c", "avx512f", "neon"), given its CPU and feature string.
  bool hasFeature(StringRef name) const;
};

/// Makes the X86 and AArch64 LLVM targets available (idempotent).
void initializeCpuLLVMTargets();

} // namespace mlir::kiln

#endif // KILN_BACKENDS_COMMON_CPUTARGET_H
