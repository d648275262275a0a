//===- Passes.h - GPU code generation passes (CUDA and HIP) -----*- C++ -*-===//
#ifndef KILN_BACKENDS_GPU_PASSES_H
#define KILN_BACKENDS_GPU_PASSES_H

#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::kiln {
#define GEN_PASS_DECL
#include "backends/gpu/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "backends/gpu/Passes.h.inc"
} // namespace mlir::kiln

#endif // KILN_BACKENDS_GPU_PASSES_H
