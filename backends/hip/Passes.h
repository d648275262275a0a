//===- Passes.h - HIP leaf passes -------------------------------*- C++ -*-===//
#ifndef KILN_BACKENDS_HIP_PASSES_H
#define KILN_BACKENDS_HIP_PASSES_H

#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::kiln {
#define GEN_PASS_DECL
#include "backends/hip/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "backends/hip/Passes.h.inc"
} // namespace mlir::kiln

#endif // KILN_BACKENDS_HIP_PASSES_H
