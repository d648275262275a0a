//===- RuntimeCalls.cpp - scratch alloc and check failure in LLVM IR ------===//
//
// The struct below mirrors kiln_runtime_callbacks (abi.h): {u32 abi_version,
// u32 num_threads, ptr pool, ptr parallel_for, ptr context, ptr alloc,
// ptr fail}.
//
//===----------------------------------------------------------------------===//
#include "backends/common/RuntimeCalls.h"

#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"

using namespace mlir::kiln;

namespace {
enum Field { kContext = 4, kAlloc = 5, kFail = 6 };

llvm::StructType *callbacksType(llvm::LLVMContext &ctx) {
  auto *ptrTy = llvm::PointerType::getUnqual(ctx);
  auto *i32Ty = llvm::Type::getInt32Ty(ctx);
  return llvm::StructType::get(
      ctx, {i32Ty, i32Ty, ptrTy, ptrTy, ptrTy, ptrTy, ptrTy});
}

/// Body of `fn(runtime, arg)`: calls field `field` with (context, arg) and
/// returns its result.
void defineForwarder(llvm::Function *fn, Field field) {
  llvm::LLVMContext &ctx = fn->getContext();
  auto *ptrTy = llvm::PointerType::getUnqual(ctx);
  llvm::StructType *callbacks = callbacksType(ctx);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", fn));
  llvm::Value *runtime = fn->getArg(0);
  llvm::Value *context =
      b.CreateLoad(ptrTy, b.CreateStructGEP(callbacks, runtime, kContext));
  llvm::Value *callee =
      b.CreateLoad(ptrTy, b.CreateStructGEP(callbacks, runtime, field));
  auto *calleeTy = llvm::FunctionType::get(
      fn->getReturnType(), {ptrTy, fn->getArg(1)->getType()}, false);
  llvm::Value *result =
      b.CreateCall(calleeTy, callee, {context, fn->getArg(1)});
  if (fn->getReturnType()->isVoidTy())
    b.CreateRetVoid();
  else
    b.CreateRet(result);
}
} // namespace

void mlir::kiln::defineRuntimeCalls(llvm::Module &module) {
  if (llvm::Function *alloc = module.getFunction("__kiln_alloc");
      alloc && alloc->isDeclaration()) {
    defineForwarder(alloc, kAlloc);
    // Fresh memory, aligned as abi.h promises.
    alloc->addRetAttr(llvm::Attribute::NoAlias);
  }
  if (llvm::Function *fail = module.getFunction("__kiln_fail");
      fail && fail->isDeclaration()) {
    defineForwarder(fail, kFail);
    fail->addFnAttr(llvm::Attribute::Cold);
  }
}
