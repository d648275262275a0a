//===- FlattenEmptyArguments.cpp - Zero-element entry buffers as [0] ------===//
//
// The entry function is lowered with the bare-pointer calling convention
// (one pointer per buffer), which MLIR's func-to-llvm refuses for a memref
// with a zero dim among others (memref<20x0x5xf32>): the whole signature
// stays unconverted. Such a buffer holds no element, so nothing reads or
// writes through it; this pass gives the argument the type memref<0xT>,
// which converts, and hands its uses a zero-byte alloca of the old type.
//
//===----------------------------------------------------------------------===//
#include "backends/cpu/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_FLATTENEMPTYARGUMENTS
#include "backends/cpu/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;

namespace {
struct FlattenEmptyArgumentsPass
    : public kiln::impl::FlattenEmptyArgumentsBase<FlattenEmptyArgumentsPass> {
  using Base::Base;

  void runOnOperation() override {
    auto func = getOperation().lookupSymbol<func::FuncOp>(entryName);
    if (!func || func.isExternal())
      return;
    Block &entry = func.getBody().front();
    OpBuilder b = OpBuilder::atBlockBegin(&entry);
    bool changed = false;
    for (BlockArgument arg : entry.getArguments()) {
      auto type = dyn_cast<MemRefType>(arg.getType());
      if (!type || !type.hasStaticShape() || type.getNumElements() != 0 ||
          type.getRank() == 1)
        continue;
      Value stand = memref::AllocaOp::create(b, func.getLoc(), type);
      arg.replaceAllUsesWith(stand);
      arg.setType(MemRefType::get({0}, type.getElementType()));
      changed = true;
    }
    if (changed)
      func.setFunctionType(
          FunctionType::get(&getContext(), entry.getArgumentTypes(),
                            func.getFunctionType().getResults()));
  }
};
} // namespace
