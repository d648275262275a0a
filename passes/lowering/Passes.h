//===- Passes.h - kiln -> linalg lowering passes ----------------*- C++ -*-===//
#ifndef KILN_PASSES_LOWERING_PASSES_H
#define KILN_PASSES_LOWERING_PASSES_H

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::kiln {
#define GEN_PASS_DECL
#include "passes/lowering/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/lowering/Passes.h.inc"

inline void registerLoweringPasses() { registerKilnLoweringPasses(); }
} // namespace mlir::kiln

#endif // KILN_PASSES_LOWERING_PASSES_H
