//===- Linker.h - Link an object into an artifact with ld.lld ---*- C++ -*-===//
#ifndef KILN_BACKENDS_COMMON_LINKER_H
#define KILN_BACKENDS_COMMON_LINKER_H

#include "backends/common/CpuTarget.h"

namespace mlir::kiln {

/// Links `objectPath` into the shared library `outputPath` with ld.lld,
/// exporting only kiln_artifact (version script). When the target's libc and
/// libm are found, they are linked --as-needed and undefined symbols are an
/// error, so an artifact can never import something the runtime lacks.
LogicalResult linkSharedLibrary(StringRef objectPath, StringRef outputPath,
                                const CpuTarget &target, std::string &error);

} // namespace mlir::kiln

#endif // KILN_BACKENDS_COMMON_LINKER_H
