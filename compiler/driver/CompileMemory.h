//===- CompileMemory.h - The memory limit of `kiln compile` -----*- C++ -*-===//
//
// A compile that needs more memory than the machine can give should say so,
// not thrash or be killed by the kernel. Two guards: before the pipelines,
// the model's weights (what compile memory grows with) against the limit;
// during them, the limit on the process's data, whose exhaustion ends the
// compile with one error line and exit code 1.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_COMPILER_DRIVER_COMPILEMEMORY_H
#define KILN_COMPILER_DRIVER_COMPILEMEMORY_H

#include "mlir/IR/BuiltinOps.h"

#include <cstdint>
#include <optional>
#include <string>

namespace mlir::kiln {

/// "8G", "512M", "1.5G", "300K", plain bytes, or "none" (no limit: 0).
/// Units are binary (1G = 2^30 bytes). Returns nothing for bad text.
std::optional<uint64_t> parseMemorySize(StringRef text);

struct CompileMemoryLimit {
  uint64_t bytes = 0; ///< 0: no limit
  std::string source; ///< "--max-memory", "MemAvailable", ...
};

/// `--max-memory` when given (0 turns the limit off), else what the process
/// can get now (the smaller of MemAvailable and the cgroup's room).
CompileMemoryLimit compileMemoryLimit(std::optional<uint64_t> flag);

/// Bytes of weights the module holds: distinct dense_resource blobs and
/// dense constants (each counted once).
uint64_t weightBytes(ModuleOp module);

/// Checks that the weights fit in the limit with what the compile needs
/// beside them (a quarter more, as measured: 3 GB of weights compile at
/// 1.13x their size). On failure sets `error` naming the sizes.
LogicalResult checkWeightsFit(uint64_t weights, const CompileMemoryLimit &limit,
                              std::string &error);

/// Caps the process's data (RLIMIT_DATA) at the limit and makes running out
/// of memory print "error: kiln compile ran out of memory ..." and exit 1,
/// removing the temporary files registered with RemoveFileOnSignal. No-op
/// for no limit and in sanitizer builds (their shadow memory is data).
void enforceMemoryLimit(const CompileMemoryLimit &limit);

/// "3.2 GB" (decimal units, as free and the runtime print them).
std::string formatMemory(uint64_t bytes);

} // namespace mlir::kiln

#endif // KILN_COMPILER_DRIVER_COMPILEMEMORY_H
