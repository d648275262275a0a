//===- RuntimeCalls.cpp - scratch alloc and check failure in LLVM IR ------===//
//
// The struct below mirrors kiln_runtime_callbacks (abi.h): {u32 abi_version,
// u32 num_threads, ptr pool, ptr parallel_for, ptr context, ptr alloc,
// ptr fail, ptr strings_from_numbers, ptr strings_to_numbers,
// ptr normalize_strings, ptr device_weights, ptr launch, ptr weights}. Buffers
// reach the string kernels as i64 addresses, passed in the same registers as
// pointers on every target.
//
//===----------------------------------------------------------------------===//
#include "backends/common/RuntimeCalls.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"

using namespace mlir::kiln;

namespace {
enum Field {
  kContext = 4,
  kAlloc = 5,
  kFail = 6,
  kStringsFromNumbers = 7,
  kStringsToNumbers = 8,
  kNormalizeStrings = 9,
  kDeviceWeights = 10,
  kLaunch = 11,
  kWeights = 12
};

llvm::StructType *callbacksType(llvm::LLVMContext &ctx) {
  auto *ptrTy = llvm::PointerType::getUnqual(ctx);
  auto *i32Ty = llvm::Type::getInt32Ty(ctx);
  return llvm::StructType::get(ctx,
                               {i32Ty, i32Ty, ptrTy, ptrTy, ptrTy, ptrTy, ptrTy,
                                ptrTy, ptrTy, ptrTy, ptrTy, ptrTy, ptrTy});
}

/// Body of `fn(runtime, args...)`: calls field `field` with (context,
/// args...) and returns its result.
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
  llvm::SmallVector<llvm::Type *> params{ptrTy};
  llvm::SmallVector<llvm::Value *> args{context};
  for (unsigned i = 1; i < fn->arg_size(); ++i) {
    params.push_back(fn->getArg(i)->getType());
    args.push_back(fn->getArg(i));
  }
  auto *calleeTy = llvm::FunctionType::get(fn->getReturnType(), params, false);
  llvm::Value *result = b.CreateCall(calleeTy, callee, args);
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
  for (auto [name, field] :
       {std::pair{"__kiln_strings_from_numbers", kStringsFromNumbers},
        std::pair{"__kiln_strings_to_numbers", kStringsToNumbers},
        std::pair{"__kiln_normalize_strings", kNormalizeStrings},
        std::pair{"__kiln_gpu_launch", kLaunch}})
    if (llvm::Function *fn = module.getFunction(name);
        fn && fn->isDeclaration())
      defineForwarder(fn, field);
}

llvm::Value *mlir::kiln::loadWeights(llvm::IRBuilder<> &b, llvm::Value *runtime,
                                     bool device) {
  llvm::LLVMContext &ctx = b.getContext();
  return b.CreateLoad(llvm::PointerType::getUnqual(ctx),
                      b.CreateStructGEP(callbacksType(ctx), runtime,
                                        device ? kDeviceWeights : kWeights));
}
