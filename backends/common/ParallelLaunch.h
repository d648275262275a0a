//===- ParallelLaunch.h - parallel_for launchers in LLVM IR -----*- C++ -*-===//
#ifndef KILN_BACKENDS_COMMON_PARALLELLAUNCH_H
#define KILN_BACKENDS_COMMON_PARALLELLAUNCH_H

#include "mlir/Support/LLVM.h"

#include <string>

namespace llvm {
class Module;
} // namespace llvm

namespace mlir::kiln {

/// Defines every declaration `__kiln_parallel_for_K(i64 n, ptr runtime,
/// ptr args...)` left by kiln-outline-parallel-loops: it stores the argument
/// pointers in a stack context and calls `runtime->parallel_for(pool, n,
/// trampoline, ctx)`, or the trampoline over [0, n) itself when the runtime
/// has no pool. The trampoline unpacks the context and calls
/// `__kiln_parallel_body_K(begin, end, args...)`. The body's pointer
/// arguments listed in `noAliasArgs` (indices among `args`) are marked
/// `noalias`, as the entry function's are.
LogicalResult defineParallelLaunchers(llvm::Module &module,
                                      ArrayRef<unsigned> noAliasArgs,
                                      std::string &error);

} // namespace mlir::kiln

#endif // KILN_BACKENDS_COMMON_PARALLELLAUNCH_H
