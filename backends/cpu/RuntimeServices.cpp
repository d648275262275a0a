//===- RuntimeServices.cpp - Scratch memory and failed checks -------------===//
//
// Generated code allocates nothing itself and never aborts: run-time sized
// buffers come from the runtime's per-session scratch, and a failed check
// ends the run with an error the runtime reports. String kernels (calls of
// declarations marked `kiln.string_kernel`) are the runtime's too. All go
// through the `kiln.runtime` argument of the entry (kiln_runtime_callbacks).
//
//===----------------------------------------------------------------------===//
#include "backends/cpu/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/DataLayoutInterfaces.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_RUNTIMESERVICES
#include "backends/cpu/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;

namespace {
constexpr StringLiteral kAlloc = "__kiln_alloc";
constexpr StringLiteral kFail = "__kiln_fail";

func::FuncOp declare(ModuleOp module, StringRef name, FunctionType type) {
  if (auto existing = module.lookupSymbol<func::FuncOp>(name))
    return existing;
  OpBuilder b(module.getBodyRegion());
  b.setInsertionPointToStart(module.getBody());
  auto fn = func::FuncOp::create(b, module.getLoc(), name, type);
  fn.setPrivate();
  return fn;
}

Value runtimeArgument(func::FuncOp func) {
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (func.getArgAttr(i, "kiln.runtime"))
      return func.getArgument(i);
  return {};
}

LogicalResult replaceAlloc(memref::AllocOp alloc, Value runtime,
                           func::FuncOp allocFn, const DataLayout &layout) {
  MemRefType type = alloc.getType();
  if (!type.getLayout().isIdentity() || type.getMemorySpace() ||
      !type.getElementType().isIntOrIndexOrFloat())
    return alloc.emitError("kiln-runtime-services: cannot place a run-time "
                           "sized buffer of type ")
           << type;
  OpBuilder b(alloc);
  Location loc = alloc.getLoc();
  // i1 takes a byte per element, as LLVM stores it.
  uint64_t elementBytes =
      std::max<uint64_t>(1, layout.getTypeSize(type.getElementType()));
  Value bytes = arith::ConstantIndexOp::create(b, loc, elementBytes);
  unsigned dynamic = 0;
  for (int64_t d : type.getShape()) {
    Value extent = ShapedType::isDynamic(d)
                       ? alloc.getDynamicSizes()[dynamic++]
                       : arith::ConstantIndexOp::create(b, loc, d).getResult();
    bytes = arith::MulIOp::create(b, loc, bytes, extent);
  }
  Value bytes64 = arith::IndexCastOp::create(b, loc, b.getI64Type(), bytes);
  Value raw =
      func::CallOp::create(b, loc, allocFn, ValueRange{runtime, bytes64})
          .getResult(0);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  // NULL: the runtime could not give the memory and recorded why; the run
  // ends here (the check becomes a return below).
  Value address = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, raw);
  Value given =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, address, zero);
  cf::AssertOp::create(b, loc, given,
                       "out of memory for a run-time sized buffer");
  Value view =
      memref::ViewOp::create(b, loc, type, raw, zero, alloc.getDynamicSizes());
  for (Operation *user : llvm::make_early_inc_range(alloc->getUsers()))
    if (isa<memref::DeallocOp>(user))
      user->erase();
  alloc.getResult().replaceAllUsesWith(view);
  alloc.erase();
  return success();
}

void replaceAssert(cf::AssertOp check, Value runtime, func::FuncOp failFn,
                   unsigned id) {
  ModuleOp module = check->getParentOfType<ModuleOp>();
  Location loc = check.getLoc();
  std::string text = check.getMsg().str();
  text.push_back('\0');
  OpBuilder top(module.getBodyRegion());
  top.setInsertionPointToStart(module.getBody());
  auto arrayType = LLVM::LLVMArrayType::get(
      IntegerType::get(module.getContext(), 8), text.size());
  std::string name = "__kiln_check_" + std::to_string(id);
  LLVM::GlobalOp::create(top, loc, arrayType, /*isConstant=*/true,
                         LLVM::Linkage::Private, name,
                         StringAttr::get(module.getContext(), text));

  Block *before = check->getBlock();
  Block *after = before->splitBlock(check->getIterator());
  Region *region = before->getParent();
  Block *failed = new Block();
  region->getBlocks().insertAfter(before->getIterator(), failed);

  OpBuilder b(failed, failed->end());
  Value message = LLVM::AddressOfOp::create(
      b, loc, LLVM::LLVMPointerType::get(module.getContext()), name);
  func::CallOp::create(b, loc, failFn, ValueRange{runtime, message});
  func::ReturnOp::create(b, loc);

  b.setInsertionPointToEnd(before);
  cf::CondBranchOp::create(b, loc, check.getArg(), after, ValueRange{}, failed,
                           ValueRange{});
  check.erase();
}

/// `call @__kiln_string_call_N(%a, %buf : memref<..>, ...)` of a declaration
/// marked `kiln.string_kernel = "K"` becomes `call @__kiln_K(%runtime, %a,
/// %ptr, ...)`, each buffer passed as its aligned data address (i64); the
/// declaration goes once unused.
LogicalResult replaceStringCall(func::CallOp call, func::FuncOp callee,
                                Value runtime) {
  ModuleOp module = call->getParentOfType<ModuleOp>();
  OpBuilder b(call);
  Location loc = call.getLoc();
  SmallVector<Value> operands{runtime};
  for (Value v : call.getOperands()) {
    if (auto type = dyn_cast<MemRefType>(v.getType())) {
      if (!type.getLayout().isIdentity())
        return call.emitError("kiln-runtime-services: a string kernel "
                              "operand of non-dense type ")
               << type;
      Value address = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, v);
      v = arith::IndexCastOp::create(b, loc, b.getI64Type(), address);
    }
    operands.push_back(v);
  }
  auto kernel = callee->getAttrOfType<StringAttr>("kiln.string_kernel");
  func::FuncOp fn = declare(module, ("__kiln_" + kernel.getValue()).str(),
                            FunctionType::get(call.getContext(),
                                              ValueRange(operands).getTypes(),
                                              call.getResultTypes()));
  auto replacement = func::CallOp::create(b, loc, fn, operands);
  call.replaceAllUsesWith(replacement.getResults());
  call.erase();
  // Each call site has a declaration of its own.
  if (SymbolTable::symbolKnownUseEmpty(callee, module))
    callee.erase();
  return success();
}

struct RuntimeServicesPass
    : public kiln::impl::RuntimeServicesBase<RuntimeServicesPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto func = module.lookupSymbol<func::FuncOp>(entryName);
    if (!func || func.isExternal())
      return;
    SmallVector<memref::AllocOp> allocs;
    SmallVector<cf::AssertOp> checks;
    func.walk([&](memref::AllocOp alloc) {
      if (!alloc.getType().hasStaticShape())
        allocs.push_back(alloc);
    });
    func.walk([&](cf::AssertOp check) { checks.push_back(check); });
    SmallVector<std::pair<func::CallOp, func::FuncOp>> stringCalls;
    WalkResult walk = module.walk([&](func::CallOp call) {
      auto callee = module.lookupSymbol<func::FuncOp>(call.getCallee());
      if (!callee || !callee->hasAttr("kiln.string_kernel"))
        return WalkResult::advance();
      if (call->getParentOfType<func::FuncOp>() != func) {
        call.emitError("kiln-runtime-services: a string kernel call outside "
                       "the entry function");
        return WalkResult::interrupt();
      }
      stringCalls.push_back({call, callee});
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return signalPassFailure();
    if (allocs.empty() && checks.empty() && stringCalls.empty())
      return;
    Value runtime = runtimeArgument(func);
    if (!runtime || func.getNumResults() != 0) {
      func.emitError("kiln-runtime-services: the entry needs the kiln.runtime "
                     "argument and no results");
      return signalPassFailure();
    }
    MLIRContext *ctx = &getContext();
    Type i64 = IntegerType::get(ctx, 64);
    Type runtimeType = runtime.getType();
    if (!allocs.empty()) {
      func::FuncOp allocFn =
          declare(module, kAlloc,
                  FunctionType::get(ctx, {runtimeType, i64}, {runtimeType}));
      DataLayout layout = DataLayout::closest(func);
      for (memref::AllocOp alloc : allocs)
        if (failed(replaceAlloc(alloc, runtime, allocFn, layout)))
          return signalPassFailure();
    }
    for (auto [call, callee] : stringCalls)
      if (failed(replaceStringCall(call, callee, runtime)))
        return signalPassFailure();
    // The model's checks and those of the allocations above.
    checks.clear();
    func.walk([&](cf::AssertOp check) { checks.push_back(check); });
    if (!checks.empty()) {
      for (cf::AssertOp check : checks)
        if (check->getParentRegion() != &func.getBody()) {
          check.emitError("kiln-runtime-services: a run-time check inside a "
                          "region; run scf-to-cf first");
          return signalPassFailure();
        }
      func::FuncOp failFn =
          declare(module, kFail,
                  FunctionType::get(
                      ctx, {runtimeType, LLVM::LLVMPointerType::get(ctx)}, {}));
      for (auto [id, check] : llvm::enumerate(checks))
        replaceAssert(check, runtime, failFn, id);
    }
  }
};
} // namespace
