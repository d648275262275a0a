//===- Artifact.cpp - LLVM-dialect module to a Kiln artifact --------------===//
#include "backends/common/Artifact.h"
#include "backends/common/ArtifactInterface.h"
#include "backends/common/KernelTable.h"
#include "backends/common/Linker.h"
#include "backends/common/ObjectCodegen.h"
#include "backends/common/WeightsSection.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Signals.h"
#include "llvm/Target/TargetMachine.h"

#include "kiln/abi.h"

using namespace mlir;
using namespace mlir::kiln;

namespace {
/// What the backend pipeline left on the module for the artifact.
struct ModuleContents {
  uint64_t arenaSize = 0;
  WeightsLayout weights;
  std::optional<GpuContents> gpu;
};
} // namespace

/// The raw bytes of a dense_resource module attribute, or failure.
static FailureOr<ArrayRef<char>> blobBytes(Attribute attr, StringRef name,
                                           std::string &error) {
  auto blob = dyn_cast_or_null<DenseResourceElementsAttr>(attr);
  AsmResourceBlob *data = blob ? blob.getRawHandle().getBlob() : nullptr;
  if (!data) {
    error = (name + " must be a dense_resource blob with its data").str();
    return failure();
  }
  return data->getData();
}

/// The kiln.gpu.* attributes a GPU leaf left, checked against the target.
static LogicalResult readGpuContents(ModuleOp module, const Target &target,
                                     std::optional<GpuContents> &gpu,
                                     std::string &error) {
  auto platform = module->getAttrOfType<StringAttr>("kiln.gpu.platform");
  if (!target.isGpu()) {
    if (platform)
      error = "the module holds GPU kernels, but the target is a CPU";
    return failure(bool(platform));
  }
  if (!platform) {
    error = "the module has no GPU kernels (kiln.gpu.platform is missing)";
    return failure();
  }
  GpuContents contents;
  if (platform.getValue() == "cuda")
    contents.platform = KILN_GPU_CUDA;
  else if (platform.getValue() == "hip")
    contents.platform = KILN_GPU_HIP;
  else if (platform.getValue() == "emulator")
    contents.platform = KILN_GPU_EMULATOR;
  else {
    error = ("unknown kiln.gpu.platform '" + platform.getValue() + "'").str();
    return failure();
  }
  if (auto archs = module->getAttrOfType<StringAttr>("kiln.gpu.archs"))
    contents.archs = archs.str();
  FailureOr<std::vector<KernelInfo>> kernels = getKernelTable(module, error);
  if (failed(kernels))
    return failure();
  contents.kernels = std::move(*kernels);
  if (Attribute image = module->getAttr("kiln.gpu.image")) {
    FailureOr<ArrayRef<char>> bytes = blobBytes(image, "kiln.gpu.image", error);
    if (failed(bytes))
      return failure();
    contents.image = *bytes;
  }
  if (contents.platform != KILN_GPU_EMULATOR && contents.image.empty() &&
      !contents.kernels.empty()) {
    error = "the module's GPU kernels have no device image";
    return failure();
  }
  gpu = std::move(contents);
  return success();
}

static FailureOr<ModuleContents>
readContents(ModuleOp module, const Target &target, std::string &error) {
  ModuleContents contents;
  if (Attribute attr = module->getAttr("kiln.arena_size")) {
    auto size = dyn_cast<IntegerAttr>(attr);
    if (!size || size.getInt() < 0) {
      error = "kiln.arena_size must be a non-negative integer";
      return failure();
    }
    contents.arenaSize = size.getInt();
  }
  if (Attribute attr = module->getAttr("kiln.weights")) {
    FailureOr<WeightsLayout> weights = readWeightsLayout(attr, error);
    if (failed(weights))
      return failure();
    contents.weights = std::move(*weights);
  }
  if (failed(readGpuContents(module, target, contents.gpu, error)))
    return failure();
  return contents;
}

/// Translates a copy of `module` without the kiln.* attributes (module and
/// argument attributes from the pipeline and the importer), which mean
/// nothing to LLVM IR and make the translator warn. Cloning shares
/// attributes, so the weights blob is not copied.
static std::unique_ptr<llvm::Module>
translate(ModuleOp module, llvm::LLVMContext &llvmContext, StringRef name) {
  MLIRContext *ctx = module.getContext();
  registerBuiltinDialectTranslation(*ctx);
  registerLLVMDialectTranslation(*ctx);
  OwningOpRef<ModuleOp> copy = module.clone();
  for (NamedAttribute attr : module->getDiscardableAttrs())
    if (attr.getName().strref().starts_with("kiln."))
      (*copy)->removeDiscardableAttr(attr.getName());
  copy->walk([](FunctionOpInterface func) {
    for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
      for (NamedAttribute attr :
           SmallVector<NamedAttribute>(func.getArgAttrs(i)))
        if (attr.getName().strref().starts_with("kiln."))
          func.removeArgAttr(i, attr.getName());
  });
  return translateModuleToLLVMIR(*copy, llvmContext, name);
}

/// The directory `path` is in ("." for a bare file name).
static SmallString<128> directoryOf(StringRef path) {
  SmallString<128> dir = llvm::sys::path::parent_path(path);
  if (dir.empty())
    dir = ".";
  return dir;
}

namespace {
/// A new, uniquely named file beside the output; its name begins with a dot
/// so a half-written artifact never looks like a finished one. Removed when
/// this goes out of scope unless kept, and on a signal or when the compile
/// runs out of memory (llvm::sys::RunInterruptHandlers) until then.
struct SiblingFile {
  SmallString<128> path;
  bool keep = false;

  LogicalResult create(StringRef dir, StringRef stem, StringRef suffix,
                       std::string &error) {
    SmallString<128> model(dir);
    llvm::sys::path::append(model, "." + stem + "-%%%%%%" + suffix);
    if (std::error_code ec = llvm::sys::fs::createUniqueFile(model, path)) {
      error = ("cannot create a file in '" + dir + "': " + ec.message()).str();
      path.clear();
      return failure();
    }
    llvm::sys::RemoveFileOnSignal(path);
    return success();
  }
  ~SiblingFile() {
    if (path.empty())
      return;
    if (!keep)
      llvm::sys::fs::remove(path);
    llvm::sys::DontRemoveFileOnSignal(path);
  }
};
} // namespace

LogicalResult mlir::kiln::writeArtifact(ModuleOp llvmDialectModule,
                                        const ArtifactSpec &spec,
                                        const Target &target, int optLevel,
                                        StringRef outputPath,
                                        std::string &error) {
  if (outputPath.empty() || llvm::sys::fs::is_directory(outputPath)) {
    error = ("output '" + outputPath + "' is not a file path").str();
    return failure();
  }
  FailureOr<ModuleContents> contents =
      readContents(llvmDialectModule, target, error);
  if (failed(contents))
    return failure();

  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> module =
      translate(llvmDialectModule, llvmContext, spec.modelName);
  if (!module) {
    error = "translation to LLVM IR failed (is the module in the LLVM "
            "dialect?)";
    return failure();
  }
  ArtifactContents glue{contents->arenaSize, contents->weights.size,
                        contents->gpu, target.bf16Weights ? "bf16" : ""};
  if (failed(addArtifactInterface(*module, spec, target.host, glue, error)))
    return failure();

  std::unique_ptr<llvm::TargetMachine> machine =
      createCpuTargetMachine(target.host, optLevel, error);
  if (!machine)
    return failure();
  optimizeModule(*module, *machine, optLevel);

  // Both intermediate files live beside the output, so the final rename
  // stays within one file system and is atomic.
  SmallString<128> dir = directoryOf(outputPath);
  StringRef stem = llvm::sys::path::filename(outputPath);
  SiblingFile object, output;
  if (failed(object.create(dir, stem, ".o", error)) ||
      failed(emitObjectFile(*module, *machine, object.path, error)))
    return failure();
  module.reset();

  if (failed(output.create(dir, stem, ".so", error)) ||
      failed(linkSharedLibrary(object.path, output.path, target.host, error)))
    return failure();
  if (contents->weights.size &&
      failed(appendWeightsSection(output.path, contents->weights, error)))
    return failure();
  if (std::error_code ec = llvm::sys::fs::rename(output.path, outputPath)) {
    error =
        ("cannot move the artifact to '" + outputPath + "': " + ec.message())
            .str();
    return failure();
  }
  output.keep = true;
  return success();
}
