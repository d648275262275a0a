//===- GpuProgram.cpp - Kernel table, device image, emulator entries ------===//
//
// The structs below mirror kiln_gpu_kernel_resources, kiln_gpu_kernel,
// kiln_gpu_program and kiln_emulated_thread (abi.h) field by field, laid out
// with the C rules of the LP64 hosts.
//
//===----------------------------------------------------------------------===//
#include "backends/common/GpuProgram.h"

#include "kiln/abi.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"

using namespace mlir;
using namespace mlir::kiln;

namespace {
class ProgramBuilder {
public:
  explicit ProgramBuilder(llvm::Module &module)
      : module(module), ctx(module.getContext()),
        ptrTy(llvm::PointerType::getUnqual(ctx)),
        i32Ty(llvm::Type::getInt32Ty(ctx)), i64Ty(llvm::Type::getInt64Ty(ctx)) {
  }

  llvm::Constant *constant(llvm::Constant *init, const llvm::Twine &name,
                           unsigned align = 8) {
    auto *global =
        new llvm::GlobalVariable(module, init->getType(), /*isConstant=*/true,
                                 llvm::GlobalValue::PrivateLinkage, init, name);
    global->setAlignment(llvm::Align(align));
    return global;
  }
  llvm::Constant *string(llvm::StringRef text, const llvm::Twine &name) {
    return constant(llvm::ConstantDataArray::getString(ctx, text), name, 1);
  }
  llvm::Constant *i32(uint64_t value) {
    return llvm::ConstantInt::get(i32Ty, value);
  }

  llvm::Constant *resources(const KernelInfo &kernel, size_t index);
  FailureOr<llvm::Constant *> emulatedEntry(const KernelInfo &kernel,
                                            std::string &error);
  void defineEmulatorCalls();
  llvm::Constant *image(llvm::ArrayRef<char> bytes);

  llvm::Module &module;
  llvm::LLVMContext &ctx;
  llvm::PointerType *ptrTy;
  llvm::IntegerType *i32Ty, *i64Ty;
};

llvm::Constant *ProgramBuilder::resources(const KernelInfo &kernel,
                                          size_t index) {
  if (kernel.resources.empty())
    return llvm::ConstantPointerNull::get(ptrTy);
  auto *type = llvm::StructType::get(
      ctx, {ptrTy, i32Ty, i32Ty, i32Ty, i32Ty, i32Ty, i32Ty});
  std::vector<llvm::Constant *> entries;
  for (const KernelResources &r : kernel.resources)
    entries.push_back(llvm::ConstantStruct::get(
        type,
        {string(r.arch, "kiln_gpu_arch"), i32(r.registers), i32(r.sharedBytes),
         i32(r.localBytes), i32(r.spillStoreBytes + r.spillLoadBytes),
         i32(r.scalarRegisters), i32(r.occupancy)}));
  return constant(llvm::ConstantArray::get(
                      llvm::ArrayType::get(type, entries.size()), entries),
                  "kiln_gpu_resources" + llvm::Twine(index));
}

FailureOr<llvm::Constant *>
ProgramBuilder::emulatedEntry(const KernelInfo &kernel, std::string &error) {
  llvm::Function *fn = module.getFunction(kernel.name);
  if (!fn || fn->isDeclaration() ||
      fn->arg_size() != size_t(kernel.numParams) + 1) {
    error = "the emulated kernel " + kernel.name + " is missing or has " +
            "other parameters than its table entry";
    return failure();
  }
  auto *type = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx),
                                       {ptrTy, ptrTy}, false);
  auto *entry = llvm::Function::Create(type, llvm::GlobalValue::InternalLinkage,
                                       kernel.name + ".emulated", module);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", entry));
  llvm::SmallVector<llvm::Value *> args;
  for (unsigned i = 0; i < kernel.numParams; ++i) {
    llvm::Value *slot = b.CreateLoad(
        ptrTy, b.CreateConstInBoundsGEP1_64(ptrTy, entry->getArg(0), i));
    args.push_back(b.CreateLoad(fn->getArg(i)->getType(), slot));
  }
  args.push_back(entry->getArg(1));
  b.CreateCall(fn, args);
  b.CreateRetVoid();
  return entry;
}

void ProgramBuilder::defineEmulatorCalls() {
  // {u32 coordinates[12], ptr scheduler, ptr barrier, ptr mma}
  auto *threadTy = llvm::StructType::get(
      ctx, {llvm::ArrayType::get(i32Ty, 12), ptrTy, ptrTy, ptrTy});
  for (auto [name, field] : {std::pair{"__kiln_emulator_barrier", 2u},
                             std::pair{"__kiln_emulator_mma", 3u}}) {
    llvm::Function *fn = module.getFunction(name);
    if (!fn || !fn->isDeclaration())
      continue;
    // fn(thread, args...) calls thread->field(thread, args...).
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", fn));
    llvm::Value *callee =
        b.CreateLoad(ptrTy, b.CreateStructGEP(threadTy, fn->getArg(0), field));
    llvm::SmallVector<llvm::Value *> args;
    for (llvm::Argument &arg : fn->args())
      args.push_back(&arg);
    b.CreateCall(fn->getFunctionType(), callee, args);
    b.CreateRetVoid();
  }
}

llvm::Constant *ProgramBuilder::image(llvm::ArrayRef<char> bytes) {
  if (bytes.empty())
    return llvm::ConstantPointerNull::get(ptrTy);
  return rawBytesGlobal(module, bytes, "kiln_gpu_image", ".kiln.gpu");
}
} // namespace

llvm::Constant *mlir::kiln::buildGpuProgram(llvm::Module &module,
                                            const GpuContents &gpu,
                                            std::string &error) {
  ProgramBuilder b(module);
  bool emulated = gpu.platform == KILN_GPU_EMULATOR;
  if (emulated)
    b.defineEmulatorCalls();
  auto *dimsTy = llvm::ArrayType::get(b.i32Ty, 3);
  auto *kernelTy =
      llvm::StructType::get(b.ctx, {b.ptrTy, b.ptrTy, b.i32Ty, b.i32Ty, b.i32Ty,
                                    b.i32Ty, b.ptrTy, b.ptrTy, dimsTy, dimsTy});
  auto dims = [&](const std::array<int64_t, 3> &shape) {
    return llvm::ConstantArray::get(
        dimsTy, {b.i32(shape[0]), b.i32(shape[1]), b.i32(shape[2])});
  };
  std::vector<llvm::Constant *> kernels;
  for (auto [index, kernel] : llvm::enumerate(gpu.kernels)) {
    llvm::Constant *entry = llvm::ConstantPointerNull::get(b.ptrTy);
    if (emulated) {
      FailureOr<llvm::Constant *> fn = b.emulatedEntry(kernel, error);
      if (failed(fn))
        return nullptr;
      entry = *fn;
    }
    uint32_t flags = kernel.usesBarriers ? KILN_GPU_KERNEL_BARRIERS : 0;
    kernels.push_back(llvm::ConstantStruct::get(
        kernelTy,
        {b.string(kernel.name, "kiln_gpu_kernel_name"),
         b.string(llvm::join(kernel.onnxNodes, ","), "kiln_gpu_kernel_nodes"),
         b.i32(kernel.numParams), b.i32(flags), b.i32(kernel.sharedBytes),
         b.i32(kernel.resources.size()), b.resources(kernel, index), entry,
         dims(kernel.grid), dims(kernel.block)}));
  }
  llvm::Constant *table = llvm::ConstantPointerNull::get(b.ptrTy);
  if (!kernels.empty())
    table =
        b.constant(llvm::ConstantArray::get(
                       llvm::ArrayType::get(kernelTy, kernels.size()), kernels),
                   "kiln_gpu_kernels");
  auto *programTy = llvm::StructType::get(
      b.ctx, {b.i32Ty, b.i32Ty, b.ptrTy, b.ptrTy, b.ptrTy, b.i64Ty});
  return b.constant(
      llvm::ConstantStruct::get(
          programTy, {b.i32(gpu.platform), b.i32(gpu.kernels.size()), table,
                      b.string(gpu.archs, "kiln_gpu_archs"), b.image(gpu.image),
                      llvm::ConstantInt::get(b.i64Ty, gpu.image.size())}),
      "kiln_gpu_program");
}
