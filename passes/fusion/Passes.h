//===- Passes.h - Fusion passes on the kiln dialect -------------*- C++ -*-===//
#ifndef KILN_PASSES_FUSION_PASSES_H
#define KILN_PASSES_FUSION_PASSES_H

#include "dialects/kiln/KilnOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::kiln {
#define GEN_PASS_DECL
#include "passes/fusion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/fusion/Passes.h.inc"

inline void registerFusionPasses() { registerKilnFusionPasses(); }
} // namespace mlir::kiln

#endif // KILN_PASSES_FUSION_PASSES_H
