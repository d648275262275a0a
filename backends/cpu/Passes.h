//===- Passes.h - CPU backend passes ----------------------------*- C++ -*-===//
#ifndef KILN_BACKENDS_CPU_PASSES_H
#define KILN_BACKENDS_CPU_PASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"

namespace mlir::kiln {
#define GEN_PASS_DECL
#include "backends/cpu/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "backends/cpu/Passes.h.inc"

/// Generalizes matmul/convolution-like ops and moves the output's innermost
/// dimension to the innermost loop (see kiln-interchange-contractions).
void populateInterchangeContractionsPatterns(RewritePatternSet &patterns);

/// Rewrites arith.extf from f16 and arith.truncf to f16 into integer
/// arithmetic (see kiln-expand-f16-conversions).
void populateExpandF16ConversionsPatterns(RewritePatternSet &patterns,
                                          bool soft = true);

/// Registers the CPU backend's passes and the `kiln-cpu-codegen` pipeline
/// (defined in CpuPipeline.cpp).
void registerCpuBackendPasses();
} // namespace mlir::kiln

#endif // KILN_BACKENDS_CPU_PASSES_H
