//===- ParallelLaunch.cpp - parallel_for launchers in LLVM IR -------------===//
//
// The launchers are written here, in LLVM IR, because they deal in what the
// MLIR side has no types for: a C callback table, a function pointer and an
// untyped context. The struct below mirrors kiln_runtime_callbacks.
//
//===----------------------------------------------------------------------===//
#include "backends/common/ParallelLaunch.h"

#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"

using namespace mlir;
using namespace mlir::kiln;

static constexpr llvm::StringLiteral kLaunchPrefix = "__kiln_parallel_for_";
static constexpr llvm::StringLiteral kBodyPrefix = "__kiln_parallel_body_";

/// void trampoline(ptr ctx, i64 begin, i64 end): the kiln_parallel_body.
static llvm::Function *createTrampoline(llvm::Module &module,
                                        llvm::Function *body,
                                        unsigned numPointers) {
  llvm::LLVMContext &ctx = module.getContext();
  auto *ptrTy = llvm::PointerType::getUnqual(ctx);
  auto *i64Ty = llvm::Type::getInt64Ty(ctx);
  auto *fn = llvm::Function::Create(
      llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), {ptrTy, i64Ty, i64Ty},
                              false),
      llvm::GlobalValue::InternalLinkage, body->getName() + "_trampoline",
      module);
  // One copy of each loop body: inlined into its trampoline, never again
  // into the launcher's no-pool path (that doubled the code and the time
  // LLVM spends on it).
  fn->addFnAttr(llvm::Attribute::NoInline);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", fn));
  SmallVector<llvm::Value *> args{fn->getArg(1), fn->getArg(2)};
  for (unsigned i = 0; i < numPointers; ++i)
    args.push_back(b.CreateLoad(
        ptrTy, b.CreateConstInBoundsGEP1_64(ptrTy, fn->getArg(0), i)));
  b.CreateCall(body, args);
  b.CreateRetVoid();
  return fn;
}

static void defineLauncher(llvm::Function *launch, llvm::Function *trampoline) {
  llvm::LLVMContext &ctx = launch->getContext();
  auto *ptrTy = llvm::PointerType::getUnqual(ctx);
  auto *i32Ty = llvm::Type::getInt32Ty(ctx);
  auto *i64Ty = llvm::Type::getInt64Ty(ctx);
  // kiln_runtime_callbacks: {u32 abi_version, u32 num_threads, ptr pool,
  // ptr parallel_for}.
  auto *callbacksTy = llvm::StructType::get(ctx, {i32Ty, i32Ty, ptrTy, ptrTy});
  auto *bodyTy = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx),
                                         {ptrTy, i64Ty, i64Ty}, false);
  auto *parallelForTy = llvm::FunctionType::get(
      llvm::Type::getVoidTy(ctx), {ptrTy, i64Ty, ptrTy, ptrTy}, false);

  auto *entry = llvm::BasicBlock::Create(ctx, "entry", launch);
  auto *checkFn = llvm::BasicBlock::Create(ctx, "check_fn", launch);
  auto *pooled = llvm::BasicBlock::Create(ctx, "pooled", launch);
  auto *inline_ = llvm::BasicBlock::Create(ctx, "inline", launch);

  llvm::IRBuilder<> b(entry);
  unsigned numPointers = launch->arg_size() - 2;
  llvm::Value *context = b.CreateAlloca(
      llvm::ArrayType::get(ptrTy, std::max(numPointers, 1u)), nullptr, "ctx");
  for (unsigned i = 0; i < numPointers; ++i)
    b.CreateStore(launch->getArg(i + 2),
                  b.CreateConstInBoundsGEP1_64(ptrTy, context, i));
  llvm::Value *n = launch->getArg(0), *runtime = launch->getArg(1);
  b.CreateCondBr(b.CreateIsNull(runtime), inline_, checkFn);

  b.SetInsertPoint(checkFn);
  llvm::Value *parallelFor = b.CreateLoad(
      ptrTy, b.CreateStructGEP(callbacksTy, runtime, 3), "parallel_for");
  b.CreateCondBr(b.CreateIsNull(parallelFor), inline_, pooled);

  b.SetInsertPoint(pooled);
  llvm::Value *pool =
      b.CreateLoad(ptrTy, b.CreateStructGEP(callbacksTy, runtime, 2), "pool");
  b.CreateCall(parallelForTy, parallelFor, {pool, n, trampoline, context});
  b.CreateRetVoid();

  b.SetInsertPoint(inline_);
  b.CreateCall(bodyTy, trampoline,
               {context, llvm::ConstantInt::get(i64Ty, 0), n});
  b.CreateRetVoid();
}

LogicalResult mlir::kiln::defineParallelLaunchers(
    llvm::Module &module, ArrayRef<unsigned> noAliasArgs, std::string &error) {
  SmallVector<llvm::Function *> launches;
  for (llvm::Function &fn : module)
    if (fn.isDeclaration() && fn.getName().starts_with(kLaunchPrefix))
      launches.push_back(&fn);
  for (llvm::Function *launch : launches) {
    StringRef id = launch->getName().drop_front(kLaunchPrefix.size());
    llvm::Function *body = module.getFunction((kBodyPrefix + id).str());
    unsigned numPointers = launch->arg_size() < 2 ? 0 : launch->arg_size() - 2;
    bool wellFormed =
        body && !body->isDeclaration() && launch->arg_size() >= 2 &&
        launch->getReturnType()->isVoidTy() &&
        launch->getArg(0)->getType()->isIntegerTy(64) &&
        body->arg_size() == numPointers + 2 &&
        llvm::all_of(llvm::drop_begin(launch->args()), [](llvm::Argument &a) {
          return a.getType()->isPointerTy();
        });
    if (!wellFormed) {
      error = ("malformed parallel loop '" + launch->getName() +
               "': expected a matching " + kBodyPrefix + id)
                  .str();
      return failure();
    }
    for (unsigned arg : noAliasArgs)
      if (arg < numPointers)
        body->addParamAttr(arg + 2, llvm::Attribute::NoAlias);
    defineLauncher(launch, createTrampoline(module, body, numPointers));
  }
  return success();
}
