//===- ObjectCodegen.h - LLVM IR to an object file --------------*- C++ -*-===//
#ifndef KILN_BACKENDS_COMMON_OBJECTCODEGEN_H
#define KILN_BACKENDS_COMMON_OBJECTCODEGEN_H

#include "backends/common/CpuTarget.h"

#include <memory>

namespace llvm {
class Module;
class TargetMachine;
} // namespace llvm

namespace mlir::kiln {

/// A position-independent TargetMachine for `target` at -O`optLevel`.
std::unique_ptr<llvm::TargetMachine>
createCpuTargetMachine(const CpuTarget &target, int optLevel,
                       std::string &error);

/// Sets the module's triple and data layout from `machine` and runs LLVM's
/// default pipeline for `optLevel` (0-3) on it.
void optimizeModule(llvm::Module &module, llvm::TargetMachine &machine,
                    int optLevel);

/// Emits `module` as an ELF object file at `path`.
LogicalResult emitObjectFile(llvm::Module &module, llvm::TargetMachine &machine,
                             StringRef path, std::string &error);

} // namespace mlir::kiln

#endif // KILN_BACKENDS_COMMON_OBJECTCODEGEN_H
