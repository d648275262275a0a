//===- LowerToLinalg.cpp - kiln -> linalg on tensors ----------------------===//
#include "passes/lowering/Passes.h"

#include "dialects/kiln/KilnOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_LOWERTOLINALG
#include "passes/lowering/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;

namespace {
struct LowerToLinalgPass
    : public kiln::impl::LowerToLinalgBase<LowerToLinalgPass> {
  using Base::Base;
  void runOnOperation() override {}
};
} // namespace
