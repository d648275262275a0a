//===- ArtifactInterface.cpp - Entry wrapper, descriptor, weights ---------===//
//
// Builds, next to the generated @main, the few symbols abi.h promises. The
// struct types below mirror kiln_tensor_desc and kiln_artifact_descriptor
// field by field; LLVM lays them out with the C rules of the LP64 targets we
// emit for, so no explicit padding is needed.
//
//===----------------------------------------------------------------------===//
#include "backends/common/ArtifactInterface.h"
#include "backends/common/GpuProgram.h"
#include "backends/common/ParallelLaunch.h"
#include "backends/common/RuntimeCalls.h"

#include "kiln/abi.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"
#include "llvm/Transforms/Utils/ModuleUtils.h"

using namespace mlir;
using namespace mlir::kiln;

namespace {
class InterfaceBuilder {
public:
  InterfaceBuilder(llvm::Module &module)
      : module(module), ctx(module.getContext()),
        ptrTy(llvm::PointerType::getUnqual(ctx)),
        i32Ty(llvm::Type::getInt32Ty(ctx)), i64Ty(llvm::Type::getInt64Ty(ctx)) {
  }

  llvm::Function *entry(llvm::Function *main, llvm::ArrayRef<bool> recordInputs,
                        size_t numOutputs, bool passRuntime,
                        bool deviceWeights);
  llvm::Constant *descriptor(const ArtifactSpec &spec, const CpuTarget &target,
                             uint64_t arenaSize, uint64_t weightsSize,
                             llvm::Function *entry, llvm::Constant *gpu);

private:
  llvm::Constant *internalConstant(llvm::Constant *init,
                                   const llvm::Twine &name, unsigned align = 0);
  llvm::Constant *string(llvm::StringRef text, const llvm::Twine &name);
  llvm::Constant *tensorDescs(const std::vector<TensorSpec> &tensors,
                              llvm::StringRef kind);
  llvm::Constant *symbolDescs(const std::vector<SymbolSpec> &symbols);

  llvm::Module &module;
  llvm::LLVMContext &ctx;
  llvm::PointerType *ptrTy;
  llvm::IntegerType *i32Ty, *i64Ty;
};
} // namespace

llvm::Constant *InterfaceBuilder::internalConstant(llvm::Constant *init,
                                                   const llvm::Twine &name,
                                                   unsigned align) {
  auto *global = new llvm::GlobalVariable(
      module, init->getType(),
      /*isConstant=*/true, llvm::GlobalValue::PrivateLinkage, init, name);
  global->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
  if (align)
    global->setAlignment(llvm::Align(align));
  return global;
}

llvm::Constant *InterfaceBuilder::string(llvm::StringRef text,
                                         const llvm::Twine &name) {
  return internalConstant(llvm::ConstantDataArray::getString(ctx, text), name);
}

llvm::Function *InterfaceBuilder::entry(llvm::Function *main,
                                        llvm::ArrayRef<bool> recordInputs,
                                        size_t numOutputs, bool passRuntime,
                                        bool deviceWeights) {
  auto *type = llvm::FunctionType::get(i32Ty, {ptrTy, ptrTy, ptrTy, ptrTy},
                                       /*isVarArg=*/false);
  auto *fn = llvm::Function::Create(type, llvm::GlobalValue::InternalLinkage,
                                    "kiln_entry", module);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", fn));
  llvm::SmallVector<llvm::Value *> args;
  auto loadPointers = [&](llvm::Value *array, size_t count) {
    for (size_t i = 0; i < count; ++i)
      args.push_back(
          b.CreateLoad(ptrTy, b.CreateConstInBoundsGEP1_64(ptrTy, array, i)));
  };
  // An input with symbolic dims comes as a record {data address, dims...}:
  // @main takes the data pointer and a pointer to the dims.
  for (auto [i, isRecord] : llvm::enumerate(recordInputs)) {
    llvm::Value *slot = b.CreateLoad(
        ptrTy, b.CreateConstInBoundsGEP1_64(ptrTy, fn->getArg(0), i));
    if (!isRecord) {
      args.push_back(slot);
      continue;
    }
    args.push_back(b.CreateIntToPtr(b.CreateLoad(i64Ty, slot), ptrTy));
    args.push_back(b.CreateConstInBoundsGEP1_64(i64Ty, slot, 1));
  }
  loadPointers(fn->getArg(1), numOutputs);
  args.push_back(fn->getArg(2));
  // The weights the runtime mapped from the artifact; a GPU artifact's
  // kernels read the copy the runtime uploaded.
  args.push_back(loadWeights(b, fn->getArg(3), deviceWeights));
  if (passRuntime)
    args.push_back(fn->getArg(3));
  b.CreateCall(main, args);
  b.CreateRet(llvm::ConstantInt::get(i32Ty, 0));
  return fn;
}

llvm::Constant *
InterfaceBuilder::tensorDescs(const std::vector<TensorSpec> &tensors,
                              llvm::StringRef kind) {
  if (tensors.empty())
    return llvm::ConstantPointerNull::get(ptrTy);
  auto *descTy =
      llvm::StructType::get(ctx, {ptrTy, i32Ty, i32Ty, ptrTy, ptrTy});
  std::vector<llvm::Constant *> descs;
  for (auto [i, tensor] : llvm::enumerate(tensors)) {
    std::string prefix = ("kiln_" + kind + llvm::Twine(i)).str();
    llvm::Constant *shape = llvm::ConstantPointerNull::get(ptrTy);
    if (!tensor.shape.empty()) {
      // A run-time extent is -1 in the descriptor (abi.h).
      std::vector<uint64_t> dims;
      for (int64_t d : tensor.shape)
        dims.push_back(d < 0 ? uint64_t(-1) : uint64_t(d));
      shape = internalConstant(llvm::ConstantDataArray::get(ctx, dims),
                               prefix + "_shape", 8);
    }
    llvm::Constant *symbols = llvm::ConstantPointerNull::get(ptrTy);
    if (!tensor.symbols.empty()) {
      std::vector<uint32_t> indices;
      for (int32_t s : tensor.symbols)
        indices.push_back(uint32_t(s));
      symbols = internalConstant(llvm::ConstantDataArray::get(ctx, indices),
                                 prefix + "_symbols", 4);
    }
    descs.push_back(llvm::ConstantStruct::get(
        descTy,
        {string(tensor.name, prefix + "_name"),
         llvm::ConstantInt::get(i32Ty, tensor.dtype),
         llvm::ConstantInt::get(i32Ty, tensor.shape.size()), shape, symbols}));
  }
  auto *arrayTy = llvm::ArrayType::get(descTy, descs.size());
  return internalConstant(llvm::ConstantArray::get(arrayTy, descs),
                          "kiln_" + kind + "s", 8);
}

llvm::Constant *
InterfaceBuilder::symbolDescs(const std::vector<SymbolSpec> &symbols) {
  if (symbols.empty())
    return llvm::ConstantPointerNull::get(ptrTy);
  auto *symbolTy = llvm::StructType::get(ctx, {ptrTy, i64Ty, i64Ty});
  std::vector<llvm::Constant *> descs;
  for (auto [i, symbol] : llvm::enumerate(symbols))
    descs.push_back(llvm::ConstantStruct::get(
        symbolTy,
        {string(symbol.name, "kiln_symbol" + llvm::Twine(i) + "_name"),
         llvm::ConstantInt::get(i64Ty, symbol.min),
         llvm::ConstantInt::get(i64Ty, symbol.max)}));
  auto *arrayTy = llvm::ArrayType::get(symbolTy, descs.size());
  return internalConstant(llvm::ConstantArray::get(arrayTy, descs),
                          "kiln_symbols", 8);
}

llvm::Constant *
InterfaceBuilder::descriptor(const ArtifactSpec &spec, const CpuTarget &target,
                             uint64_t arenaSize, uint64_t weightsSize,
                             llvm::Function *entry, llvm::Constant *gpu) {
  auto *descTy = llvm::StructType::get(
      ctx, {i32Ty, i32Ty, ptrTy, ptrTy, ptrTy, ptrTy, ptrTy, i32Ty, i32Ty,
            ptrTy, ptrTy, i64Ty, i64Ty, ptrTy, i64Ty, ptrTy, i32Ty, ptrTy});
  llvm::Constant *fields[] = {
      llvm::ConstantInt::get(i32Ty, KILN_ARTIFACT_MAGIC),
      llvm::ConstantInt::get(i32Ty, KILN_ABI_VERSION),
      string(target.triple, "kiln_target_triple"),
      string(target.cpu, "kiln_target_cpu"),
      string(target.features, "kiln_target_features"),
      string(spec.modelName, "kiln_model_name"),
      string("kiln " KILN_PRODUCER_VERSION, "kiln_producer"),
      llvm::ConstantInt::get(i32Ty, spec.inputs.size()),
      llvm::ConstantInt::get(i32Ty, spec.outputs.size()),
      tensorDescs(spec.inputs, "input"),
      tensorDescs(spec.outputs, "output"),
      llvm::ConstantInt::get(i64Ty, arenaSize),
      llvm::ConstantInt::get(i64Ty, weightsSize),
      entry,
      llvm::ConstantInt::get(i64Ty, spec.flops),
      gpu ? gpu : llvm::ConstantPointerNull::get(ptrTy),
      llvm::ConstantInt::get(i32Ty, spec.symbols.size()),
      symbolDescs(spec.symbols)};
  return internalConstant(llvm::ConstantStruct::get(descTy, fields),
                          "kiln_descriptor", 8);
}

/// A dtype abi.h knows, so the runtime can trust the descriptor.
static bool isKnownDtype(int32_t dtype) {
  return llvm::is_contained({KILN_DTYPE_F32, KILN_DTYPE_U8, KILN_DTYPE_I8,
                             KILN_DTYPE_U16, KILN_DTYPE_I16, KILN_DTYPE_I32,
                             KILN_DTYPE_I64, KILN_DTYPE_STRING, KILN_DTYPE_BOOL,
                             KILN_DTYPE_F16, KILN_DTYPE_F64, KILN_DTYPE_U32,
                             KILN_DTYPE_U64, KILN_DTYPE_BF16},
                            kiln_dtype(dtype));
}

static LogicalResult checkSpec(const ArtifactSpec &spec, std::string &error) {
  for (const auto *tensors : {&spec.inputs, &spec.outputs})
    for (const TensorSpec &tensor : *tensors) {
      if (!isKnownDtype(tensor.dtype)) {
        error = "tensor '" + tensor.name + "' has unknown dtype " +
                std::to_string(tensor.dtype);
        return failure();
      }
      // Outputs may be shaped by the run (kiln-dynamic-results); an input's
      // run-time dims are its symbols.
      if (!tensor.symbols.empty() &&
          tensor.symbols.size() != tensor.shape.size()) {
        error = "tensor '" + tensor.name + "' has " +
                std::to_string(tensor.symbols.size()) + " symbols for " +
                std::to_string(tensor.shape.size()) + " dims";
        return failure();
      }
      for (auto [d, extent] : llvm::enumerate(tensor.shape)) {
        int32_t symbol = tensor.symbols.empty() ? -1 : tensor.symbols[d];
        if (symbol >= (int32_t)spec.symbols.size() ||
            (tensors == &spec.inputs && extent < 0 && symbol < 0)) {
          error = "input '" + tensor.name + "' dim " + std::to_string(d) +
                  " is dynamic without a symbol";
          return failure();
        }
      }
    }
  return success();
}

llvm::GlobalVariable *mlir::kiln::rawBytesGlobal(llvm::Module &module,
                                                 llvm::ArrayRef<char> bytes,
                                                 llvm::StringRef name,
                                                 llvm::StringRef section) {
  // One raw copy of the bytes; never one constant per element.
  llvm::Constant *data = llvm::ConstantDataArray::getRaw(
      llvm::StringRef(bytes.data(), bytes.size()), bytes.size(),
      llvm::Type::getInt8Ty(module.getContext()));
  auto *global = new llvm::GlobalVariable(
      module, data->getType(),
      /*isConstant=*/true, llvm::GlobalValue::InternalLinkage, data, name);
  global->setSection(section);
  global->setAlignment(llvm::Align(KILN_ALIGNMENT));
  return global;
}

LogicalResult mlir::kiln::addArtifactInterface(llvm::Module &module,
                                               const ArtifactSpec &spec,
                                               const CpuTarget &target,
                                               const ArtifactContents &contents,
                                               std::string &error) {
  if (failed(checkSpec(spec, error)))
    return failure();
  llvm::Function *main = module.getFunction("main");
  if (!main || main->isDeclaration()) {
    error = "the module has no @main to wrap";
    return failure();
  }
  // The runtime callbacks are a trailing argument once
  // kiln-outline-parallel-loops has run; pipelines without it omit them.
  SmallVector<bool> recordInputs;
  for (const TensorSpec &input : spec.inputs)
    recordInputs.push_back(
        llvm::any_of(input.shape, [](int64_t d) { return d < 0; }));
  size_t numRecords = llvm::count(recordInputs, true);
  size_t expected = spec.inputs.size() + numRecords + spec.outputs.size() + 2;
  bool passRuntime = main->arg_size() == expected + 1;
  if ((main->arg_size() != expected && !passRuntime) ||
      !main->getReturnType()->isVoidTy() ||
      llvm::any_of(main->args(), [](llvm::Argument &a) {
        return !a.getType()->isPointerTy();
      })) {
    error = "@main must return nothing and take " + std::to_string(expected) +
            " pointers (" + std::to_string(spec.inputs.size()) + " inputs, " +
            std::to_string(numRecords) + " input dims, " +
            std::to_string(spec.outputs.size()) +
            " outputs, arena, weights), plus optionally the runtime; it "
            "takes " +
            std::to_string(main->arg_size()) + " arguments";
    return failure();
  }

  bool isGpu = contents.gpu.has_value();
  if (isGpu && !passRuntime) {
    error = "the GPU entry @main takes no runtime argument";
    return failure();
  }
  InterfaceBuilder builder(module);
  llvm::Function *entry =
      builder.entry(main, recordInputs, spec.outputs.size(), passRuntime,
                    /*deviceWeights=*/isGpu);
  llvm::Constant *gpu = nullptr;
  if (isGpu) {
    gpu = buildGpuProgram(module, *contents.gpu, error);
    if (!gpu)
      return failure();
  }
  // The arena (runtime scratch) and the weights (mapped read-only) share no
  // byte with each other or any input/output: telling LLVM spares alias
  // checks and lets it keep weights in registers across stores. The
  // outlined loop bodies see the arguments through a context, so they need
  // the fact restated.
  unsigned arenaArg = spec.inputs.size() + numRecords + spec.outputs.size();
  SmallVector<unsigned> noAliasArgs = {arenaArg, arenaArg + 1};
  for (unsigned arg : noAliasArgs)
    main->addParamAttr(arg, llvm::Attribute::NoAlias);
  if (failed(defineParallelLaunchers(module, noAliasArgs, error)))
    return failure();
  defineRuntimeCalls(module);
  llvm::Constant *descriptor = builder.descriptor(
      spec, target, contents.arenaSize, contents.weightsSize, entry, gpu);

  auto *artifactFn = llvm::Function::Create(
      llvm::FunctionType::get(llvm::PointerType::getUnqual(module.getContext()),
                              /*isVarArg=*/false),
      llvm::GlobalValue::ExternalLinkage, KILN_ARTIFACT_SYMBOL, module);
  llvm::IRBuilder<> b(
      llvm::BasicBlock::Create(module.getContext(), "entry", artifactFn));
  b.CreateRet(descriptor);

  // Only kiln_artifact is visible; everything else may be inlined, merged
  // or dropped by the optimizer.
  for (llvm::GlobalValue &value : module.global_values()) {
    if (&value == artifactFn || value.isDeclaration())
      continue;
    if (!value.hasLocalLinkage())
      value.setLinkage(llvm::GlobalValue::InternalLinkage);
  }
  // A plain-text manifest in a section of its own, so `kiln inspect` can
  // tell what an artifact was built for without loading it (an aarch64
  // artifact on an x86-64 machine, say).
  std::string manifest =
      "kiln-manifest 1\nabi=" + std::to_string(KILN_ABI_VERSION) +
      "\ntriple=" + target.triple + "\ncpu=" + target.cpu +
      "\nmodel=" + spec.modelName + "\n";
  if (!contents.precision.empty())
    manifest += "precision=" + contents.precision + "\n";
  if (isGpu)
    manifest += "gpu=" + std::to_string(contents.gpu->platform) +
                "\narchs=" + contents.gpu->archs +
                "\nkernels=" + std::to_string(contents.gpu->kernels.size()) +
                "\n";
  auto *manifestInit =
      llvm::ConstantDataArray::getString(module.getContext(), manifest);
  auto *manifestVar = new llvm::GlobalVariable(
      module, manifestInit->getType(), /*isConstant=*/true,
      llvm::GlobalValue::InternalLinkage, manifestInit, "kiln_manifest");
  manifestVar->setSection(".kiln.manifest");
  llvm::appendToUsed(module, {manifestVar});

  for (llvm::Function &fn : module) {
    if (fn.isDeclaration())
      continue;
    fn.addFnAttr("target-cpu", target.cpu);
    if (!target.features.empty())
      fn.addFnAttr("target-features", target.features);
  }
  return success();
}
