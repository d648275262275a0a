//===- Artifact.h - Write a Kiln artifact (.so) -----------------*- C++ -*-===//
//
// Turns an LLVM-dialect module produced by a Kiln backend pipeline into the
// shared library described by runtime/include/kiln/abi.h.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_BACKENDS_COMMON_ARTIFACT_H
#define KILN_BACKENDS_COMMON_ARTIFACT_H

#include "backends/common/Target.h"

#include "mlir/IR/BuiltinOps.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir::kiln {

/// One model input or output as the descriptor reports it.
struct TensorSpec {
  std::string name;
  int32_t dtype = 0; ///< ONNX TensorProto numbering (kiln_dtype).
  std::vector<int64_t> shape;
  /// Per dim, the index of its symbol in ArtifactSpec::symbols, or -1;
  /// empty when no dim has one.
  std::vector<int32_t> symbols;
};

/// A symbolic input dim and the extents it may take (kiln_symbol_desc).
struct SymbolSpec {
  std::string name;
  int64_t min = 1, max = 1;
};

struct ArtifactSpec {
  std::string modelName;
  std::vector<TensorSpec> inputs, outputs;
  std::vector<SymbolSpec> symbols;
  /// Floating-point operations of one run in contractions (0: unknown).
  uint64_t flops = 0;
};

/// Writes the artifact for `llvmDialectModule` to `outputPath`.
///
/// The module must hold `llvm.func @main(ptr x (inputs + outputs + 2 or 3))`:
/// input pointers, output pointers, the arena, the weights base and
/// optionally the runtime callbacks (as kiln-plan-arena,
/// kiln-outline-weights and kiln-outline-parallel-loops leave it);
/// `kiln.arena_size` and `kiln.weights` module attributes are optional; a
/// GPU target's module carries its kernels as `kiln.gpu.*` attributes
/// (backends/common/KernelTable.h). The
/// declarations `__kiln_parallel_for_K` get their definitions here. The
/// module is not modified.
///
/// Translates to LLVM IR, adds the entry wrapper, the descriptor and the
/// exported `kiln_artifact` function, optimizes at `optLevel` (0-3), emits
/// an object for `target`, links it with ld.lld into a shared library that
/// exports only `kiln_artifact`, then appends the weights as raw bytes in
/// the unloaded section `.kiln.weights` (WeightsSection.h). The file appears
/// atomically (temporary file in the same directory, then rename): on
/// failure nothing is left at `outputPath` and `error` says why.
LogicalResult writeArtifact(ModuleOp llvmDialectModule,
                            const ArtifactSpec &spec, const Target &target,
                            int optLevel, StringRef outputPath,
                            std::string &error);

} // namespace mlir::kiln

#endif // KILN_BACKENDS_COMMON_ARTIFACT_H
