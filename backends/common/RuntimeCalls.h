//===- RuntimeCalls.h - scratch alloc and check failure in LLVM IR -*- C++
//-*-===//
#ifndef KILN_BACKENDS_COMMON_RUNTIMECALLS_H
#define KILN_BACKENDS_COMMON_RUNTIMECALLS_H

namespace llvm {
class Module;
} // namespace llvm

namespace mlir::kiln {

/// Defines the declarations kiln-runtime-services leaves, if present:
/// `ptr __kiln_alloc(ptr runtime, i64 bytes)` calls
/// `runtime->alloc(runtime->context, bytes)`, and
/// `void __kiln_fail(ptr runtime, ptr message)` calls
/// `runtime->fail(runtime->context, message)`. Only models with run-time
/// shapes use them, and those need the runtime's callbacks.
void defineRuntimeCalls(llvm::Module &module);

} // namespace mlir::kiln

#endif // KILN_BACKENDS_COMMON_RUNTIMECALLS_H
