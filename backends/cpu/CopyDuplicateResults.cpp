//===- CopyDuplicateResults.cpp - One buffer per returned value -----------===//
//
// buffer-results-to-out-params{hoist-static-allocs} replaces a returned
// alloc by its out-param and erases it; when the same alloc is returned
// twice, the second result still refers to the erased op and the pass
// crashes (MLIR 22). ONNX graphs do list one tensor as two outputs, so every
// repeated return operand gets its own buffer and a copy first.
//
//===----------------------------------------------------------------------===//
#include "backends/cpu/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_COPYDUPLICATERESULTS
#include "backends/cpu/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;

namespace {
void copyDuplicateOperands(func::ReturnOp ret) {
  OpBuilder builder(ret);
  DenseSet<Value> seen;
  for (OpOperand &operand : ret->getOpOperands()) {
    Value value = operand.get();
    auto type = dyn_cast<MemRefType>(value.getType());
    if (seen.insert(value).second || !type || !type.hasStaticShape())
      continue;
    Value copy = memref::AllocOp::create(builder, ret.getLoc(), type);
    memref::CopyOp::create(builder, ret.getLoc(), value, copy);
    operand.set(copy);
  }
}

struct CopyDuplicateResultsPass
    : public kiln::impl::CopyDuplicateResultsBase<CopyDuplicateResultsPass> {
  using Base::Base;

  void runOnOperation() override { getOperation().walk(copyDuplicateOperands); }
};
} // namespace
