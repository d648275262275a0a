//===- ArtifactInterface.h - The ABI glue in LLVM IR ------------*- C++ -*-===//
#ifndef KILN_BACKENDS_COMMON_ARTIFACTINTERFACE_H
#define KILN_BACKENDS_COMMON_ARTIFACTINTERFACE_H

#include "backends/common/Artifact.h"

#include "llvm/ADT/ArrayRef.h"

namespace llvm {
class Module;
} // namespace llvm

namespace mlir::kiln {

/// What the generated code needs from the artifact around it.
struct ArtifactContents {
  uint64_t arenaSize = 0;
  llvm::ArrayRef<char> weights; ///< Raw bytes; empty if none.
};

/// Adds to `module` (which defines `main(ptr...)` as the backend pipeline
/// leaves it) the weights global, `kiln_entry`, the descriptor and the
/// exported `kiln_artifact`, then gives every other definition internal
/// linkage. Fails, with `error` set, if `main` does not match `spec`.
LogicalResult addArtifactInterface(llvm::Module &module,
                                   const ArtifactSpec &spec,
                                   const CpuTarget &target,
                                   const ArtifactContents &contents,
                                   std::string &error);

} // namespace mlir::kiln

#endif // KILN_BACKENDS_COMMON_ARTIFACTINTERFACE_H
