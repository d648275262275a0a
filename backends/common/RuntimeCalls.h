//===- RuntimeCalls.h - scratch alloc and check failure in LLVM IR -*- C++
//-*-===//
#ifndef KILN_BACKENDS_COMMON_RUNTIMECALLS_H
#define KILN_BACKENDS_COMMON_RUNTIMECALLS_H

#include "llvm/IR/IRBuilder.h"

namespace llvm {
class Module;
} // namespace llvm

namespace mlir::kiln {

/// Defines the declarations kiln-runtime-services leaves, if present:
/// `ptr __kiln_alloc(ptr runtime, i64 bytes)` calls
/// `runtime->alloc(runtime->context, bytes)`, and
/// `void __kiln_fail(ptr runtime, ptr message)` calls
/// `runtime->fail(runtime->context, message)`, and `__kiln_<kernel>(ptr
/// runtime, ...)` calls `runtime-><kernel>(runtime->context, ...)` for the
/// string kernels. Only models with run-time shapes or strings use them.
/// `void __kiln_gpu_launch(ptr runtime, i32 kernel, i32 x 7, ptr args)`
/// calls `runtime->launch(runtime->context, ...)` (GPU artifacts).
void defineRuntimeCalls(llvm::Module &module);

/// Loads `runtime->weights` (the weights the runtime mapped from the
/// artifact) or, for `device`, `runtime->device_weights` (their copy on the
/// GPU) at `b`'s insertion point.
llvm::Value *loadWeights(llvm::IRBuilder<> &b, llvm::Value *runtime,
                         bool device);

} // namespace mlir::kiln

#endif // KILN_BACKENDS_COMMON_RUNTIMECALLS_H
