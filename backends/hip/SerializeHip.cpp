//===- SerializeHip.cpp - @kiln_kernels to one offload bundle -------------===//
//
// Like the CUDA leaf, this pass drives the target itself rather than
// gpu-module-to-binary: the artifact wants one bundle for all archs and the
// code object's own report per kernel, and the chipset-specific lowering
// (MFMA intrinsics) runs once per arch on a copy of the kernels.
//
//===----------------------------------------------------------------------===//
#include "backends/common/KernelTable.h"
#include "backends/hip/HipToolkit.h"
#include "backends/hip/Passes.h"

#include "compiler/logging/Logging.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/GPU/IR/CompilationInterfaces.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVM/ROCDL/Target.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_SERIALIZEHIP
#include "backends/hip/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;

namespace {
struct SerializeHipPass
    : public kiln::impl::SerializeHipBase<SerializeHipPass> {
  using Base::Base;

  /// The code object of `kernels` for `arch`, lowered and serialized from a
  /// copy placed beside them in the module.
  FailureOr<std::string> build(gpu::GPUModuleOp kernels, StringRef arch,
                               const HipToolkit &toolkit);

  void runOnOperation() override;
};

FailureOr<std::string> SerializeHipPass::build(gpu::GPUModuleOp kernels,
                                               StringRef arch,
                                               const HipToolkit &toolkit) {
  MLIRContext *ctx = &getContext();
  OpBuilder b(kernels);
  auto copy = cast<gpu::GPUModuleOp>(b.clone(*kernels));
  copy.setName(("kiln_kernels_" + arch).str());
  llvm::scope_exit cleanup([&] { copy.erase(); });

  // Code object v5 (ROCm 5.3 and newer load it); wave64, as every
  // Instinct arch runs.
  auto target = ROCDL::ROCDLTargetAttr::get(
      ctx, optLevel, "amdgcn-amd-amdhsa", arch, "", /*abiVersion=*/"500",
      DictionaryAttr::get(ctx, {NamedAttribute(StringAttr::get(ctx, "wave64"),
                                               UnitAttr::get(ctx))}));
  copy.setTargetsAttr(ArrayAttr::get(ctx, {target}));

  OpPassManager lower(gpu::GPUModuleOp::getOperationName());
  ConvertAMDGPUToROCDLPassOptions amdgpu;
  amdgpu.chipset = arch.str();
  lower.addPass(createConvertAMDGPUToROCDLPass(amdgpu));
  ConvertGpuOpsToROCDLOpsOptions rocdl;
  rocdl.chipset = arch.str();
  rocdl.useBarePtrCallConv = true; // one address per buffer, as on CUDA
  rocdl.runtime = gpu::amd::Runtime::HIP;
  lower.addPass(createConvertGpuOpsToROCDLOps(rocdl));
  lower.addPass(createConvertMathToLLVMPass());
  lower.addPass(createReconcileUnrealizedCastsPass());
  lower.addPass(createCanonicalizerPass());
  if (failed(runPipeline(lower, copy))) {
    kernels.emitError("kiln-hip-serialize: lowering the kernels for ")
        << arch << " failed";
    return failure();
  }

  SymbolTable *symbols = nullptr;
  auto getSymbols = [&]() -> SymbolTable * { return symbols; };
  gpu::TargetOptions options(toolkit.root, {}, "", "",
                             gpu::CompilationTarget::Binary, getSymbols);
  std::optional<SmallVector<char, 0>> object =
      cast<gpu::TargetAttrInterface>(target).serializeToObject(copy, options);
  if (!object) {
    kernels.emitError("kiln-hip-serialize: building the code object for ")
        << arch << " failed";
    return failure();
  }
  return std::string(object->begin(), object->end());
}

void SerializeHipPass::runOnOperation() {
  ModuleOp module = getOperation();
  MLIRContext *ctx = &getContext();
  module->setAttr("kiln.gpu.platform", StringAttr::get(ctx, "hip"));
  module->setAttr("kiln.gpu.archs",
                  StringAttr::get(ctx, llvm::join(archs, ",")));
  auto kernels = module.lookupSymbol<gpu::GPUModuleOp>("kiln_kernels");
  if (!kernels) {
    setKernelTable(module, {});
    return;
  }
  if (archs.empty()) {
    module.emitError("kiln-hip-serialize: no architecture given");
    return signalPassFailure();
  }
  std::string error;
  FailureOr<HipToolkit> toolkit = HipToolkit::find(toolkitPath, error);
  FailureOr<std::vector<KernelInfo>> table =
      failed(toolkit) ? FailureOr<std::vector<KernelInfo>>(failure())
                      : getKernelTable(module, error);
  if (failed(table)) {
    module.emitError() << error;
    return signalPassFailure();
  }

  std::vector<std::pair<std::string, std::string>> objects;
  for (const std::string &arch : archs) {
    FailureOr<std::string> object = build(kernels, arch, *toolkit);
    if (failed(object))
      return signalPassFailure();
    FailureOr<std::map<std::string, KernelResources>> resources =
        readCodeObjectResources(*object, arch, error);
    if (failed(resources)) {
      module.emitError() << "kiln-hip-serialize: " << error;
      return signalPassFailure();
    }
    for (KernelInfo &kernel : *table) {
      auto it = resources->find(kernel.name);
      if (it == resources->end())
        continue;
      kernel.resources.push_back(it->second);
      const KernelResources &r = it->second;
      KILN_LOG("gpu", Debug)
          << kernel.name << " " << arch << ": " << r.registers << " VGPRs, "
          << r.scalarRegisters << " SGPRs, " << r.sharedBytes << " B LDS, "
          << r.localBytes << " B scratch, " << r.spillStoreBytes / 4
          << " VGPRs spilled, occupancy " << r.occupancy << "\n";
      if (scratchBudget >= 0 && r.localBytes > scratchBudget) {
        module.emitError() << "kernel " << kernel.name << " ("
                           << llvm::join(kernel.onnxNodes, ", ") << ") uses "
                           << r.localBytes << " bytes of scratch on " << arch
                           << ", over the budget of " << scratchBudget;
        return signalPassFailure();
      }
    }
    objects.emplace_back(arch, std::move(*object));
  }
  std::string bundle = writeOffloadBundle(objects);
  auto blobType =
      RankedTensorType::get({int64_t(bundle.size())}, IntegerType::get(ctx, 8));
  module->setAttr("kiln.gpu.image",
                  DenseResourceElementsAttr::get(
                      blobType, "kiln_gpu_image",
                      HeapAsmResourceBlob::allocateAndCopyWithAlign(
                          ArrayRef<char>(bundle.data(), bundle.size()), 64)));
  setKernelTable(module, *table);
  KILN_LOG("gpu", Info) << table->size() << " kernels for "
                        << llvm::join(archs, ",") << ", offload bundle "
                        << bundle.size() << " bytes\n";
  kernels.erase();
  module->removeAttr(gpu::GPUDialect::getContainerModuleAttrName());
}
} // namespace
