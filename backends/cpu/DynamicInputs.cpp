//===- DynamicInputs.cpp - Entry arguments with symbolic dims -------------===//
//
// The entry takes every argument as a bare pointer, which a memref with
// run-time extents cannot be. Each such argument becomes the data pointer
// (a one-element memref of its element type) followed by its extents (an
// i64 memref of its rank); the body rebuilds the memref with
// memref.reinterpret_cast (row-major strides). The artifact's entry wrapper
// fills both from the input's record (abi.h).
//
//===----------------------------------------------------------------------===//
#include "backends/cpu/Passes.h"
#include "backends/cpu/RowMajorStrides.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_DYNAMICINPUTS
#include "backends/cpu/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;

namespace {
struct DynamicInputsPass
    : public kiln::impl::DynamicInputsBase<DynamicInputsPass> {
  using Base::Base;

  void runOnOperation() override {
    auto func = getOperation().lookupSymbol<func::FuncOp>(entryName);
    if (!func || func.isExternal())
      return;
    Block &entry = func.getBody().front();
    // Walk backwards so that inserted arguments do not shift the ones left.
    for (int64_t i = int64_t(func.getNumArguments()) - 1; i >= 0; --i) {
      auto type = dyn_cast<MemRefType>(func.getArgument(i).getType());
      if (!type || type.hasStaticShape())
        continue;
      if (!type.getLayout().isIdentity()) {
        func.emitError() << "kiln-dynamic-inputs: argument " << i
                         << " has a non-identity layout";
        return signalPassFailure();
      }
      MLIRContext *ctx = &getContext();
      Location loc = func.getArgument(i).getLoc();
      auto dataType = MemRefType::get({1}, type.getElementType());
      auto dimsType =
          MemRefType::get({type.getRank()}, IntegerType::get(ctx, 64));
      // The extents are host memory, read by the host (a GPU entry's
      // launches take them as values).
      NamedAttribute host(StringAttr::get(ctx, "kiln.host"),
                          UnitAttr::get(ctx));
      if (failed(func.insertArgument(i + 1, dimsType,
                                     DictionaryAttr::get(ctx, host), loc)))
        return signalPassFailure();
      BlockArgument data = func.getArgument(i);
      BlockArgument dims = func.getArgument(i + 1);
      OpBuilder b = OpBuilder::atBlockBegin(&entry);
      SmallVector<OpFoldResult> sizes;
      for (int64_t d = 0; d < type.getRank(); ++d) {
        if (!type.isDynamicDim(d)) {
          sizes.push_back(b.getIndexAttr(type.getDimSize(d)));
          continue;
        }
        Value at = arith::ConstantIndexOp::create(b, loc, d);
        Value extent = memref::LoadOp::create(b, loc, dims, ValueRange{at});
        sizes.push_back(
            arith::IndexCastOp::create(b, loc, b.getIndexType(), extent)
                .getResult());
      }
      SmallVector<OpFoldResult> strides = kiln::rowMajorStrides(b, loc, sizes);
      // Uses of the argument move to the rebuilt memref; the argument itself
      // becomes the data pointer.
      data.setType(dataType);
      auto rebuilt = memref::ReinterpretCastOp::create(
          b, loc, type, data, b.getIndexAttr(0), sizes, strides);
      data.replaceAllUsesExcept(rebuilt.getResult(), rebuilt);
    }
    SmallVector<Type> inputs(entry.getArgumentTypes());
    func.setFunctionType(FunctionType::get(
        &getContext(), inputs, func.getFunctionType().getResults()));
  }
};
} // namespace
