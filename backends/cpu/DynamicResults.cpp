//===- DynamicResults.cpp - Run-time shaped entry results as records ------===//
//
// The runtime cannot allocate an output before the run when its shape is
// computed by the run. The entry instead fills, per such output, an i64
// record {aligned data pointer, dim 0, ..., dim rank-1}; the record is a
// plain static out-param (abi.h, "dynamic outputs").
//
//===----------------------------------------------------------------------===//
#include "backends/cpu/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_DYNAMICRESULTS
#include "backends/cpu/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;

namespace {

/// Stores pointer and dims of `value` into a new record; returns the record.
Value buildRecord(OpBuilder &b, Location loc, Value value) {
  auto type = cast<MemRefType>(value.getType());
  auto recordType = MemRefType::get({1 + type.getRank()}, b.getI64Type());
  Value record = memref::AllocOp::create(b, loc, recordType);
  auto store = [&](Value index, int64_t slot) {
    Value i64 = arith::IndexCastOp::create(b, loc, b.getI64Type(), index);
    Value at = arith::ConstantIndexOp::create(b, loc, slot);
    memref::StoreOp::create(b, loc, i64, record, ValueRange{at});
  };
  store(memref::ExtractAlignedPointerAsIndexOp::create(b, loc, value), 0);
  for (int64_t d = 0; d < type.getRank(); ++d)
    store(memref::DimOp::create(b, loc, value, d), 1 + d);
  return record;
}

struct DynamicResultsPass
    : public kiln::impl::DynamicResultsBase<DynamicResultsPass> {
  using Base::Base;

  void runOnOperation() override {
    auto func = getOperation().lookupSymbol<func::FuncOp>(entryName);
    if (!func || func.isExternal())
      return;
    FunctionType type = func.getFunctionType();
    SmallVector<Type> results(type.getResults());
    bool changed = false;
    for (auto [i, result] : llvm::enumerate(results)) {
      auto memref = dyn_cast<MemRefType>(result);
      if (!memref || memref.hasStaticShape())
        continue;
      if (!memref.getLayout().isIdentity()) {
        func.emitError() << "kiln-dynamic-results: result " << i
                         << " has a non-identity layout";
        return signalPassFailure();
      }
      changed = true;
      result = MemRefType::get({1 + memref.getRank()},
                               IntegerType::get(&getContext(), 64));
      for (Block &block : func.getBody()) {
        auto ret = dyn_cast<func::ReturnOp>(block.getTerminator());
        if (!ret)
          continue;
        OpBuilder b(ret);
        Value record = buildRecord(b, ret.getLoc(), ret.getOperand(i));
        ret.setOperand(i, record);
      }
      // The record is host memory, written by the host (on a GPU target
      // too); the out-param made of it keeps the mark.
      func.setResultAttr(i, "kiln.host", UnitAttr::get(&getContext()));
    }
    if (changed)
      func.setFunctionType(
          FunctionType::get(&getContext(), type.getInputs(), results));
  }
};
} // namespace
