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
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
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
/// Device-side checks (cf.assert: run-time shape or value checks inside a
/// kernel) as on CUDA: the message printed through the HIP runtime's
/// printf, then a trap that fails the launch. ROCDL's own lowering would
/// call the host's abort.
void lowerAsserts(gpu::GPUModuleOp kernels) {
  SmallVector<cf::AssertOp> asserts;
  kernels.walk([&](cf::AssertOp op) { asserts.push_back(op); });
  for (cf::AssertOp op : asserts) {
    Location loc = op.getLoc();
    Block *before = op->getBlock();
    Block *after = before->splitBlock(std::next(op->getIterator()));
    OpBuilder b(op->getContext());
    Block *trap = b.createBlock(after);
    std::string message;
    for (char c : ("kiln: " + op.getMsg() + "\n").str())
      message += c == '%' ? std::string("%%") : std::string(1, c);
    gpu::PrintfOp::create(b, loc, b.getStringAttr(message), ValueRange{});
    LLVM::Trap::create(b, loc);
    LLVM::UnreachableOp::create(b, loc);
    b.setInsertionPointToEnd(before);
    cf::CondBranchOp::create(b, loc, op.getArg(), after, trap);
    op.erase();
  }
}

/// Math ops that ROCDL lowers to LLVM intrinsics the AMDGPU backend has no
/// code for ("no libcall available for ftanh") become calls of ROCm's ocml
/// (__ocml_tanh_f32), which the serializer links.
void callOcml(gpu::GPUModuleOp kernels) {
  static const llvm::StringMap<StringRef> kOcml = {
      {"math.tan", "tan"},     {"math.tanh", "tanh"},   {"math.sinh", "sinh"},
      {"math.cosh", "cosh"},   {"math.asin", "asin"},   {"math.acos", "acos"},
      {"math.atan", "atan"},   {"math.atan2", "atan2"}, {"math.asinh", "asinh"},
      {"math.acosh", "acosh"}, {"math.atanh", "atanh"},
  };
  SmallVector<Operation *> ops;
  kernels.walk([&](Operation *op) {
    if (kOcml.count(op->getName().getStringRef()) && op->getNumResults() == 1)
      ops.push_back(op);
  });
  SymbolTable symbols(kernels);
  for (Operation *op : ops) {
    Type type = op->getResult(0).getType();
    StringRef suffix = type.isF32()   ? "_f32"
                       : type.isF64() ? "_f64"
                       : type.isF16() ? "_f16"
                                      : "";
    if (suffix.empty())
      continue; // vectors and bf16 are unrolled or widened before this
    std::string name =
        ("__ocml_" + kOcml.lookup(op->getName().getStringRef()) + suffix).str();
    auto callee = symbols.lookup<func::FuncOp>(name);
    if (!callee) {
      OpBuilder b = OpBuilder::atBlockEnd(kernels.getBody());
      callee = func::FuncOp::create(
          b, op->getLoc(), name,
          b.getFunctionType(op->getOperandTypes(), {type}));
      callee.setPrivate();
      symbols.insert(callee);
    }
    OpBuilder b(op);
    op->replaceAllUsesWith(
        func::CallOp::create(b, op->getLoc(), callee, op->getOperands()));
    op->erase();
  }
}

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
  lowerAsserts(copy);
  callOcml(copy);

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
  auto serializer = cast<gpu::TargetAttrInterface>(target);
  // KILN_LOGS=output_code: the AMDGCN assembly, as CUDA prints its PTX.
  if (logs::artifactEnabled("output_code")) {
    gpu::TargetOptions assembly(toolkit.root, {}, "", "",
                                gpu::CompilationTarget::Assembly, getSymbols);
    if (std::optional<SmallVector<char, 0>> isa =
            serializer.serializeToObject(copy, assembly))
      logs::artifactStream("output_code")
          << "// AMDGCN for " << arch << "\n"
          << StringRef(isa->data(), isa->size()) << "\n";
  }
  gpu::TargetOptions options(toolkit.root, {}, "", "",
                             gpu::CompilationTarget::Binary, getSymbols);
  std::optional<SmallVector<char, 0>> object =
      serializer.serializeToObject(copy, options);
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
