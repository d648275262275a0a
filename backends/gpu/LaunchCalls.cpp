//===- LaunchCalls.cpp - gpu.launch_func as calls of the runtime's launch -===//
#include "backends/common/KernelTable.h"
#include "backends/gpu/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_LAUNCHCALLS
#include "backends/gpu/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;

namespace {
constexpr StringLiteral kLaunchName = "__kiln_gpu_launch";

/// The entry's `{kiln.runtime}` argument, added if missing.
FailureOr<Value> runtimeArgument(func::FuncOp entry) {
  for (unsigned i = 0; i < entry.getNumArguments(); ++i)
    if (entry.getArgAttr(i, "kiln.runtime"))
      return entry.getArgument(i);
  MLIRContext *ctx = entry.getContext();
  unsigned index = entry.getNumArguments();
  NamedAttribute marker(StringAttr::get(ctx, "kiln.runtime"),
                        UnitAttr::get(ctx));
  if (failed(entry.insertArgument(
          index, MemRefType::get({0}, IntegerType::get(ctx, 8)),
          DictionaryAttr::get(ctx, marker), entry.getLoc())))
    return failure();
  return entry.getArgument(index);
}

/// The 64-bit slot value of one kernel argument.
FailureOr<Value> slotValue(OpBuilder &b, Location loc, Value value) {
  Type i64 = b.getI64Type();
  Type type = value.getType();
  if (isa<MemRefType>(type)) {
    Value address =
        memref::ExtractAlignedPointerAsIndexOp::create(b, loc, value);
    return Value(arith::IndexCastUIOp::create(b, loc, i64, address));
  }
  if (type.isIndex())
    return Value(arith::IndexCastOp::create(b, loc, i64, value));
  if (auto intType = dyn_cast<IntegerType>(type)) {
    if (intType.getWidth() == 64)
      return value;
    if (intType.getWidth() < 64)
      return Value(arith::ExtUIOp::create(b, loc, i64, value));
  }
  if (auto floatType = dyn_cast<FloatType>(type)) {
    unsigned width = floatType.getWidth();
    Value bits =
        arith::BitcastOp::create(b, loc, b.getIntegerType(width), value);
    return width == 64 ? bits
                       : Value(arith::ExtUIOp::create(b, loc, i64, bits));
  }
  return failure();
}

struct LaunchCallsPass : public kiln::impl::LaunchCallsBase<LaunchCallsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto entry = module.lookupSymbol<func::FuncOp>(entryName);
    if (!entry || entry.isExternal())
      return;
    // Even an entry that launches nothing takes the runtime (the artifact
    // passes it to every GPU entry).
    FailureOr<Value> runtime = runtimeArgument(entry);
    if (failed(runtime)) {
      entry.emitError("kiln-gpu-launch-calls: cannot add the runtime");
      return signalPassFailure();
    }
    auto kernels = module.lookupSymbol<gpu::GPUModuleOp>("kiln_kernels");
    SmallVector<gpu::LaunchFuncOp> launches;
    entry.walk([&](gpu::LaunchFuncOp launch) { launches.push_back(launch); });
    if (!kernels || launches.empty())
      return;

    // Kernel index = position in @kiln_kernels, the artifact's table.
    llvm::StringMap<int32_t> kernelIndex;
    SmallVector<KernelInfo> table;
    for (auto func : kernels.getOps<gpu::GPUFuncOp>()) {
      kernelIndex[func.getName()] = kernelIndex.size();
      table.push_back(describeKernel(func));
    }
    setKernelTable(module, table);

    MLIRContext *ctx = &getContext();
    OpBuilder b(ctx);
    Type i32 = b.getI32Type();
    // The slots go by address: the bare-pointer convention has no
    // dynamically sized memrefs, and each launch has its own count.
    Type slots = LLVM::LLVMPointerType::get(ctx);
    b.setInsertionPointToEnd(module.getBody());
    SmallVector<Type> params{(*runtime).getType()};
    params.append(8, i32);
    params.push_back(slots);
    auto launchFn = module.lookupSymbol<func::FuncOp>(kLaunchName);
    if (!launchFn) {
      launchFn = func::FuncOp::create(b, module.getLoc(), kLaunchName,
                                      FunctionType::get(ctx, params, {i32}));
      launchFn.setPrivate();
    }

    for (gpu::LaunchFuncOp launch : launches) {
      Location loc = launch.getLoc();
      auto it = kernelIndex.find(launch.getKernelName().getValue());
      if (launch.getKernelModuleName().getValue() != "kiln_kernels" ||
          it == kernelIndex.end()) {
        launch.emitError("kiln-gpu-launch-calls: the kernel is not in "
                         "@kiln_kernels");
        return signalPassFailure();
      }
      b.setInsertionPoint(launch);
      ValueRange operands = launch.getKernelOperands();
      auto array = memref::AllocaOp::create(
          b, loc,
          MemRefType::get({int64_t(std::max<size_t>(operands.size(), 1))},
                          b.getI64Type()));
      for (auto [i, operand] : llvm::enumerate(operands)) {
        FailureOr<Value> slot = slotValue(b, loc, operand);
        if (failed(slot)) {
          launch.emitError("kiln-gpu-launch-calls: cannot pass a kernel "
                           "argument of type ")
              << operand.getType();
          return signalPassFailure();
        }
        Value position = arith::ConstantIndexOp::create(b, loc, i);
        memref::StoreOp::create(b, loc, *slot, array, position);
      }
      SmallVector<Value> args{
          *runtime, arith::ConstantIntOp::create(b, loc, i32, it->second)};
      gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
      gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
      for (Value dim : {grid.x, grid.y, grid.z, block.x, block.y, block.z})
        args.push_back(arith::IndexCastUIOp::create(b, loc, i32, dim));
      Value shared = launch.getDynamicSharedMemorySize();
      if (!shared)
        shared = arith::ConstantIntOp::create(b, loc, i32, 0);
      else if (shared.getType().isIndex())
        shared = arith::IndexCastUIOp::create(b, loc, i32, shared);
      args.push_back(shared);
      Value address = arith::IndexCastUIOp::create(
          b, loc, b.getI64Type(),
          memref::ExtractAlignedPointerAsIndexOp::create(b, loc, array));
      args.push_back(LLVM::IntToPtrOp::create(b, loc, slots, address));
      func::CallOp::create(b, loc, launchFn, args);
      launch.erase();
    }
  }
};
} // namespace
