//===- InitAll.h - Register Kiln's dialects and passes ----------*- C++ -*-===//
//
// Shared by `kiln` and `kiln-opt`, so both see the same dialects and passes.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_COMPILER_DRIVER_INITALL_H
#define KILN_COMPILER_DRIVER_INITALL_H

namespace mlir {
class DialectRegistry;
namespace kiln {
/// The kiln dialect plus every upstream dialect, interface and extension the
/// pipelines use (bufferization models, LLVM translation, ...).
void registerAllDialects(DialectRegistry &registry);
/// Kiln's passes and pipelines, plus upstream passes for kiln-opt.
void registerAllPasses();
} // namespace kiln
} // namespace mlir

#endif // KILN_COMPILER_DRIVER_INITALL_H
