//===- MarkInputsReadOnly.cpp - Keep bufferization out of the inputs ------===//
#include "backends/cpu/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_MARKINPUTSREADONLY
#include "backends/cpu/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;

namespace {
struct MarkInputsReadOnlyPass
    : public kiln::impl::MarkInputsReadOnlyBase<MarkInputsReadOnlyPass> {
  using Base::Base;

  void runOnOperation() override {
    auto func = getOperation().lookupSymbol<func::FuncOp>(entryName);
    if (!func || func.isExternal()) {
      getOperation().emitError()
          << "kiln-mark-inputs-readonly: no entry function @" << entryName;
      return signalPassFailure();
    }
    auto readOnly = BoolAttr::get(&getContext(), false);
    for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
      if (isa<TensorType>(func.getArgument(i).getType()))
        func.setArgAttr(i,
                        bufferization::BufferizationDialect::kWritableAttrName,
                        readOnly);
  }
};
} // namespace
