//===- SerializeCuda.cpp - @kiln_kernels to one fatbin --------------------===//
//
// gpu-module-to-binary would give one object per target and swallow ptxas's
// report; the artifact wants one fatbin and the report per kernel. So this
// pass asks the NVVM target attribute for PTX (per architecture: sm_90a PTX
// may use instructions older GPUs lack) and runs the toolkit itself.
//
//===----------------------------------------------------------------------===//
#include "backends/common/KernelTable.h"
#include "backends/cuda/CudaToolkit.h"
#include "backends/cuda/Passes.h"

#include "compiler/logging/Logging.h"

#include "mlir/Dialect/GPU/IR/CompilationInterfaces.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_SERIALIZECUDA
#include "backends/cuda/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;

namespace {
struct SerializeCudaPass
    : public kiln::impl::SerializeCudaBase<SerializeCudaPass> {
  using Base::Base;

  /// PTX of `kernels` for `arch`; the kernels named in `wide` get the
  /// launch bound of one block per SM.
  FailureOr<std::string> translate(gpu::GPUModuleOp kernels, StringRef arch,
                                   const CudaToolkit &toolkit,
                                   const llvm::StringSet<> &wide);

  void runOnOperation() override;
};

FailureOr<std::string>
SerializeCudaPass::translate(gpu::GPUModuleOp kernels, StringRef arch,
                             const CudaToolkit &toolkit,
                             const llvm::StringSet<> &wide) {
  MLIRContext *ctx = &getContext();
  auto target =
      NVVM::NVVMTargetAttr::get(ctx, optLevel, "nvptx64-nvidia-cuda", arch);
  OwningOpRef<gpu::GPUModuleOp> copy = kernels.clone();
  (*copy).setTargetsAttr(ArrayAttr::get(ctx, {target}));
  copy->walk([&](LLVM::LLVMFuncOp func) {
    if (wide.contains(func.getName()))
      func->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(),
                    IntegerAttr::get(IntegerType::get(ctx, 32), 1));
  });
  std::string ptx;
  SymbolTable *symbols = nullptr;
  auto getSymbols = [&]() -> SymbolTable * { return symbols; };
  gpu::TargetOptions options(toolkit.root, {}, "", "",
                             gpu::CompilationTarget::Assembly, getSymbols);
  auto serializer = cast<gpu::TargetAttrInterface>(target);
  std::optional<SmallVector<char, 0>> object =
      serializer.serializeToObject(*copy, options);
  if (!object) {
    kernels.emitError("kiln-cuda-serialize: translating the kernels to PTX "
                      "for ")
        << arch << " failed";
    return failure();
  }
  ptx.assign(object->begin(), object->end());
  // The PTX comes NUL-terminated; ptxas wants text.
  while (!ptx.empty() && ptx.back() == '\0')
    ptx.pop_back();
  return ptx;
}

void SerializeCudaPass::runOnOperation() {
  ModuleOp module = getOperation();
  MLIRContext *ctx = &getContext();
  module->setAttr("kiln.gpu.platform", StringAttr::get(ctx, "cuda"));
  module->setAttr("kiln.gpu.archs",
                  StringAttr::get(ctx, llvm::join(archs, ",")));
  auto kernels = module.lookupSymbol<gpu::GPUModuleOp>("kiln_kernels");
  if (!kernels) {
    setKernelTable(module, {});
    return;
  }
  if (archs.empty()) {
    module.emitError("kiln-cuda-serialize: no architecture given");
    return signalPassFailure();
  }
  std::string error;
  FailureOr<CudaToolkit> toolkit = CudaToolkit::find(toolkitPath, error);
  FailureOr<std::vector<KernelInfo>> table =
      failed(toolkit) ? FailureOr<std::vector<KernelInfo>>(failure())
                      : getKernelTable(module, error);
  if (failed(table)) {
    module.emitError() << error;
    return signalPassFailure();
  }

  std::vector<std::pair<std::string, std::string>> cubins;
  std::string lowestPtx, lowestPtxArch;
  for (const std::string &arch : archs) {
    // ptxas aims at full occupancy and spills to reach it; a kernel that
    // spills is assembled again with one block per SM as its bound
    // (.minnctapersm 1), which lets it keep its values in up to 255
    // registers.
    llvm::StringSet<> wide;
    FailureOr<std::string> ptx;
    FailureOr<std::map<std::string, KernelResources>> resources;
    std::string cubin;
    for (int attempt = 0; attempt < 2; ++attempt) {
      ptx = translate(kernels, arch, *toolkit, wide);
      if (failed(ptx))
        return signalPassFailure();
      resources = assemblePtx(*toolkit, *ptx, arch, optLevel, cubin, error);
      if (failed(resources)) {
        module.emitError() << "kiln-cuda-serialize: " << error;
        return signalPassFailure();
      }
      size_t before = wide.size();
      for (const auto &[name, r] : *resources)
        if (r.spillStoreBytes + r.spillLoadBytes > 0 &&
            wide.insert(name).second) {
          KILN_LOG("gpu", Info)
              << name << " spills " << r.spillStoreBytes + r.spillLoadBytes
              << " bytes on " << arch << " with " << r.registers
              << " registers; assembling it with one block per SM\n";
        }
      if (wide.size() == before)
        break;
    }
    if (logs::artifactEnabled("output_code"))
      logs::artifactStream("output_code") << "// PTX for " << arch << "\n"
                                          << *ptx << "\n";
    for (KernelInfo &kernel : *table) {
      auto it = resources->find(kernel.name);
      if (it == resources->end())
        continue;
      kernel.resources.push_back(it->second);
      const KernelResources &r = it->second;
      KILN_LOG("gpu", Debug)
          << kernel.name << " " << arch << ": " << r.registers << " registers, "
          << r.sharedBytes << " B shared, " << r.localBytes << " B stack, "
          << r.spillStoreBytes << "/" << r.spillLoadBytes << " B spilled\n";
      // CUDA gives a thread at most 512 KiB of local memory; a kernel that
      // needs more would fail every launch.
      constexpr int64_t kMaxStackBytes = 512 * 1024;
      if (r.localBytes > kMaxStackBytes) {
        module.emitError() << "kernel " << kernel.name << " ("
                           << llvm::join(kernel.onnxNodes, ", ") << ") needs "
                           << r.localBytes << " bytes of stack per thread on "
                           << arch << "; CUDA allows " << kMaxStackBytes;
        return signalPassFailure();
      }
      int64_t spills = r.spillStoreBytes + r.spillLoadBytes;
      if (spillBudget >= 0 && spills > spillBudget) {
        module.emitError() << "kernel " << kernel.name << " ("
                           << llvm::join(kernel.onnxNodes, ", ") << ") spills "
                           << spills << " bytes on " << arch
                           << ", over the budget of " << spillBudget;
        return signalPassFailure();
      }
    }
    cubins.emplace_back(arch, std::move(cubin));
    // PTX of the lowest architecture without arch-specific features, for
    // GPUs newer than every cubin to JIT.
    if (lowestPtx.empty() && !StringRef(arch).ends_with("a") &&
        !StringRef(arch).ends_with("f")) {
      lowestPtx = *ptx;
      lowestPtxArch = arch;
    }
  }
  FailureOr<std::string> fatbin =
      bundleFatbin(*toolkit, cubins, lowestPtxArch, lowestPtx, error);
  if (failed(fatbin)) {
    module.emitError() << "kiln-cuda-serialize: " << error;
    return signalPassFailure();
  }
  auto blobType = RankedTensorType::get({int64_t(fatbin->size())},
                                        IntegerType::get(ctx, 8));
  module->setAttr("kiln.gpu.image",
                  DenseResourceElementsAttr::get(
                      blobType, "kiln_gpu_image",
                      HeapAsmResourceBlob::allocateAndCopyWithAlign(
                          ArrayRef<char>(fatbin->data(), fatbin->size()), 64)));
  setKernelTable(module, *table);
  KILN_LOG("gpu", Info) << table->size() << " kernels for "
                        << llvm::join(archs, ",") << ", fatbin "
                        << fatbin->size() << " bytes\n";
  kernels.erase();
  module->removeAttr(gpu::GPUDialect::getContainerModuleAttrName());
}
} // namespace
