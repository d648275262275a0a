//===- Compile.cpp - `kiln compile`: model file -> artifact ---------------===//
//
// import -> graph passes -> lowering -> CPU codegen -> object + link. Each
// stage is timed (-v), may print its artifact (KILN_LOGS), and every pass may
// dump its IR (--dump-ir-after). Errors are one line and name the ONNX node.
//
//===----------------------------------------------------------------------===//

#include "compiler/driver/Compile.h"
#include "compiler/driver/Autotune.h"
#include "compiler/driver/CompileMemory.h"
#include "compiler/driver/ModelInput.h"

#include "backends/common/Artifact.h"
#include "backends/common/KernelTable.h"
#include "compiler/driver/Diagnostics.h"
#include "compiler/driver/Flops.h"
#include "compiler/driver/InitAll.h"
#include "compiler/driver/Pipeline.h"
#include "compiler/driver/Progress.h"
#include "compiler/import/onnx/OnnxImporter.h"
#include "compiler/logging/Logging.h"
#include "compiler/logging/Report.h"
#include "dialects/kiln/KilnTypes.h"
#include "kiln/abi.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"

#include <chrono>

using namespace mlir;
using namespace mlir::kiln;

namespace {
OpPrintingFlags dumpFlags() {
  return OpPrintingFlags().elideLargeElementsAttrs(16).elideLargeResourceString(
      64);
}

/// --dump-ir-after: writes DIR/NN-<pass>.mlir after each selected pass, with
/// one counter across all stages so files sort in pipeline order.
class NumberedDumpConfig : public PassManager::IRPrinterConfig {
public:
  NumberedDumpConfig(std::string filter, std::string dir, int &counter)
      : IRPrinterConfig(/*printModuleScope=*/true, false, false, dumpFlags()),
        filter(std::move(filter)), dir(std::move(dir)), counter(counter) {}

  void printAfterIfEnabled(Pass *pass, Operation *op,
                           PrintCallbackFn print) override {
    if (filter != "all" && pass->getArgument() != filter &&
        pass->getName() != filter)
      return;
    std::string arg = pass->getArgument().str();
    if (arg.empty())
      arg = pass->getName().str();
    write(arg, print);
  }

  void write(StringRef name, PrintCallbackFn print) {
    llvm::SmallString<256> path(dir);
    llvm::sys::path::append(
        path, llvm::formatv("{0:D2}-{1}.mlir", counter++, name).str());
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    if (ec) {
      llvm::errs() << "warning: cannot write '" << path << "': " << ec.message()
                   << "\n";
      return;
    }
    print(os);
  }

private:
  std::string filter, dir;
  int &counter;
};

/// The artifact's I/O table, read from @main before lowering erases the
/// signedness of integer types.
FailureOr<ArtifactSpec> describeIO(ModuleOp module) {
  auto main = module.lookupSymbol<func::FuncOp>("main");
  if (!main)
    return failure();
  ArtifactSpec spec;
  if (auto name = module->getAttrOfType<StringAttr>("kiln.model_name"))
    spec.modelName = name.str();
  auto add = [](std::vector<TensorSpec> &list, Type type, StringAttr name,
                size_t index, const char *kind) {
    auto tensor = cast<RankedTensorType>(type);
    TensorSpec t;
    t.name = name ? name.str() : llvm::formatv("{0}{1}", kind, index).str();
    t.dtype = abiDtypeOf(tensor.getElementType());
    t.shape.assign(tensor.getShape().begin(), tensor.getShape().end());
    list.push_back(std::move(t));
    return t.dtype != KILN_DTYPE_UNDEFINED;
  };
  auto type = main.getFunctionType();
  // Symbolic dims: their ranges on @main, each input dim's on the argument.
  if (auto symbols = main->getAttrOfType<DictionaryAttr>("kiln.symbols"))
    for (NamedAttribute symbol : symbols) {
      auto range = dyn_cast<DenseI64ArrayAttr>(symbol.getValue());
      if (!range || range.size() != 2)
        return failure();
      spec.symbols.push_back({symbol.getName().str(), range[0], range[1]});
    }
  // Each dim's symbol (`kiln.dims`: an input's, or an output's computed
  // extent the model names after one), as an index into spec.symbols.
  auto label = [&](TensorSpec &tensor, ArrayAttr dims) {
    if (!dims)
      return;
    for (Attribute dim : dims) {
      StringRef name = cast<StringAttr>(dim).getValue();
      auto it = llvm::find_if(spec.symbols, [&](const SymbolSpec &symbol) {
        return symbol.name == name;
      });
      tensor.symbols.push_back(name.empty() || it == spec.symbols.end()
                                   ? -1
                                   : int32_t(it - spec.symbols.begin()));
    }
  };
  for (size_t i = 0; i < type.getNumInputs(); ++i) {
    if (!add(spec.inputs, type.getInput(i),
             main.getArgAttrOfType<StringAttr>(i, "kiln.name"), i, "input"))
      return failure();
    label(spec.inputs.back(), main.getArgAttrOfType<ArrayAttr>(i, "kiln.dims"));
  }
  for (size_t i = 0; i < type.getNumResults(); ++i) {
    if (!add(spec.outputs, type.getResult(i),
             main.getResultAttrOfType<StringAttr>(i, "kiln.name"), i, "output"))
      return failure();
    label(spec.outputs.back(),
          main.getResultAttrOfType<ArrayAttr>(i, "kiln.dims"));
  }
  return spec;
}

/// The kernel table a GPU leaf left on the module, for --report.
void reportGpuKernels(ModuleOp module) {
  std::string error;
  FailureOr<std::vector<KernelInfo>> table = getKernelTable(module, error);
  if (failed(table))
    return;
  llvm::json::Array kernels;
  for (const KernelInfo &kernel : *table) {
    llvm::json::Array nodes, resources;
    for (const std::string &node : kernel.onnxNodes)
      nodes.push_back(node);
    for (const KernelResources &r : kernel.resources) {
      llvm::json::Object entry{
          {"arch", r.arch},
          {"registers", r.registers},
          {"shared_bytes", r.sharedBytes},
          {"stack_bytes", r.localBytes},
          {"spill_bytes", r.spillStoreBytes + r.spillLoadBytes}};
      if (r.scalarRegisters) {
        entry["scalar_registers"] = r.scalarRegisters;
        entry["occupancy_waves_per_simd"] = r.occupancy;
      }
      resources.push_back(std::move(entry));
    }
    kernels.push_back(llvm::json::Object{
        {"kernel", kernel.name},
        {"onnx_nodes", std::move(nodes)},
        {"shared_bytes", kernel.sharedBytes},
        {"grid",
         llvm::json::Array{kernel.grid[0], kernel.grid[1], kernel.grid[2]}},
        {"block",
         llvm::json::Array{kernel.block[0], kernel.block[1], kernel.block[2]}},
        {"resources", std::move(resources)}});
  }
  auto attr = [&](StringRef name) {
    auto value = module->getAttrOfType<StringAttr>(name);
    return value ? value.str() : std::string();
  };
  report::gpu(llvm::json::Object{{"platform", attr("kiln.gpu.platform")},
                                 {"archs", attr("kiln.gpu.archs")},
                                 {"kernels", std::move(kernels)}});
}

struct StageTimer {
  bool verbose;
  std::chrono::steady_clock::time_point start =
      std::chrono::steady_clock::now();
  double total = 0;
  void done(const char *stage) {
    auto now = std::chrono::steady_clock::now();
    double ms = std::chrono::duration<double, std::milli>(now - start).count();
    total += ms;
    start = now;
    if (verbose)
      llvm::errs() << llvm::formatv("  {0,-10} {1,9:f1} ms\n", stage, ms);
  }
};
} // namespace

int mlir::kiln::compileModel(const CompileOptions &options) {
  DialectRegistry registry;
  registerAllDialects(registry);
  MLIRContext context(registry);
  NodeDiagnosticHandler diagnostics(&context);
  report::reset();

  std::string error;
  PipelineOptions pipeline;
  pipeline.optLevel = options.optLevel;
  pipeline.convLayout = options.convLayout;
  pipeline.winograd = options.winograd;
  auto target =
      Target::fromFlags(options.target, options.cpu, options.gpuArchs,
                        options.gpuPrecision, options.gpuEmulate, error);
  if (failed(target)) {
    llvm::errs() << "error: " << error << "\n";
    return 1;
  }
  pipeline.target = *target;
  if (options.precision == "bf16") {
    if (target->isGpu()) {
      llvm::errs() << "error: --precision is for CPU targets; --target="
                   << target->platformName() << " takes --gpu-precision\n";
      return 1;
    }
    if (options.optLevel < 1) {
      llvm::errs() << "error: --precision=bf16 selects the tiled matmul "
                      "kernels of -O1 and up; -O0 computes in fp32\n";
      return 1;
    }
    pipeline.target.bf16Weights = true;
  }
  // The module is the only IR of this context (the autotuner's kernels turn
  // this off for their clones).
  pipeline.releaseWeights = true;
  if (target->isGpu() && target->gpu.precision != GpuPrecision::Fp32 &&
      options.optLevel < 1) {
    llvm::errs() << "error: --gpu-precision="
                 << stringifyGpuPrecision(target->gpu.precision)
                 << " selects the tensor-core kernels of -O1 and up; -O0 "
                    "computes in fp32\n";
    return 1;
  }

  if (options.autotune && !options.analyzeOnly) {
    if (options.optLevel < 1) {
      llvm::errs() << "error: --autotune tunes the tiled kernels of -O1 and "
                      "up; it does nothing at -O0\n";
      return 1;
    }
    if (pipeline.target.isGpu()) {
      llvm::errs() << "error: --autotune times CPU kernels; it cannot tune "
                      "for --target="
                   << pipeline.target.platformName() << "\n";
      return 1;
    }
    if (!options.target.empty() || !options.cpu.empty()) {
      CpuTarget host = CpuTarget::host();
      if (pipeline.target.host.triple != host.triple ||
          pipeline.target.host.cpu != host.cpu) {
        llvm::errs() << "error: --autotune times kernels on this machine ("
                     << host.triple << ", " << host.cpu
                     << "); it cannot tune for --target/--cpu "
                     << pipeline.target.host.triple << " ("
                     << pipeline.target.host.cpu << ")\n";
        return 1;
      }
    }
  }

  bool dumping = !options.dumpIrAfter.empty();
  if (dumping) {
    if (auto ec = llvm::sys::fs::create_directories(options.dumpDir)) {
      llvm::errs() << "error: cannot create --dump-dir '" << options.dumpDir
                   << "': " << ec.message() << "\n";
      return 1;
    }
    context.disableMultithreading();
  }
  int dumpCounter = 0;

  StageTimer timer{options.verbose};
  if (options.verbose)
    llvm::errs() << "kiln: compiling " << options.inputPath << " for "
                 << (pipeline.target.isGpu()
                         ? pipeline.target.platformName().str() + " " +
                               llvm::join(pipeline.target.gpu.archs, ",") +
                               " on "
                         : std::string())
                 << pipeline.target.host.triple << " ("
                 << pipeline.target.host.cpu << ", -O" << options.optLevel
                 << ")\n";

  CompileMemoryLimit memoryLimit = compileMemoryLimit(options.maxMemory);
  enforceMemoryLimit(memoryLimit);

  // `kiln inspect` (analyzeOnly) and -v print their own lines.
  Progress progress(!options.verbose && !options.analyzeOnly);
  progress.show("importing " + options.inputPath);
  // The model's weights are checked against the memory limit before they
  // are read (ONNX, .pt2), or once parsed (kiln IR).
  auto checkWeights = [&](uint64_t bytes) -> llvm::Error {
    std::string why;
    if (failed(checkWeightsFit(bytes, memoryLimit, why)))
      return llvm::createStringError(why);
    return llvm::Error::success();
  };
  auto imported = loadModel(context, options.inputPath, options.inputShapes,
                            options.dimRanges, checkWeights);
  if (!imported) {
    Progress::clear();
    llvm::errs() << "error: " << llvm::toString(imported.takeError()) << "\n";
    return 1;
  }
  OwningOpRef<ModuleOp> module = std::move(*imported);
  timer.done("import");
  KILN_LOG("import", Info) << "imported " << options.inputPath << " (opset "
                           << (*module)->getAttr("kiln.opset") << ")\n";
  if (logs::artifactEnabled("graph"))
    module->print(logs::artifactStream("graph"), dumpFlags());
  if (dumping && options.dumpIrAfter == "all") {
    NumberedDumpConfig(options.dumpIrAfter, options.dumpDir, dumpCounter)
        .write("import",
               [&](raw_ostream &os) { module->print(os, dumpFlags()); });
  }

  auto spec = describeIO(*module);
  if (failed(spec)) {
    llvm::errs() << "error: the model has an input or output of an "
                    "unsupported type\n";
    return 1;
  }
  struct Stage {
    const char *name;
    void (*build)(OpPassManager &, const PipelineOptions &);
    const char *artifact;
  };
  const Stage stages[] = {
      {"graph", buildGraphPipeline, "fused_graph"},
      {"lowering", buildLoweringPipeline, "linalg"},
      {"codegen", buildBackendPipeline, nullptr},
  };
  for (const Stage &stage : stages) {
    PassManager pm(&context);
    stage.build(pm, pipeline);
    if (progress.enabled()) {
      std::string what = stage.build == buildGraphPipeline ? "graph passes"
                         : stage.build == buildLoweringPipeline
                             ? "lowering"
                             : "code generation, " +
                                   std::to_string(report::kernels().size()) +
                                   " kernels";
      progress.show(what);
      pm.addInstrumentation(
          std::make_unique<ProgressInstrumentation>(progress, what));
    }
    if (dumping)
      pm.enableIRPrinting(std::make_unique<NumberedDumpConfig>(
          options.dumpIrAfter, options.dumpDir, dumpCounter));
    if (options.timePasses)
      pm.enableTiming();
    if (failed(pm.run(*module))) {
      Progress::clear();
      if (!diagnostics.sawError())
        llvm::errs() << "error: the " << stage.name << " stage failed\n";
      return 1;
    }
    // An error reported by a pass that went on anyway (printed above) still
    // ends the compile: no artifact is written past it.
    if (diagnostics.sawError()) {
      Progress::clear();
      return 1;
    }
    timer.done(stage.name);
    if (stage.build == buildLoweringPipeline)
      spec->flops = countContractionFlops(*module);
    if (stage.artifact && logs::artifactEnabled(stage.artifact))
      module->print(logs::artifactStream(stage.artifact), dumpFlags());
    if (options.autotune && stage.build == buildLoweringPipeline &&
        !options.analyzeOnly) {
      AutotuneOptions tune;
      tune.cachePath = options.autotuneCache.empty()
                           ? defaultAutotuneCachePath()
                           : options.autotuneCache;
      tune.threads = options.autotuneThreads;
      if (failed(autotuneContractions(*module, pipeline, tune, error))) {
        llvm::errs() << "error: " << error << "\n";
        return 1;
      }
      timer.done("autotune");
    }
  }

  if (pipeline.target.isGpu() && !options.analyzeOnly)
    reportGpuKernels(*module);

  // The backend's decisions (epilogues fused) are in the report now; no
  // object code is needed for that.
  if (options.analyzeOnly)
    return 0;

  if (!options.emitMlirPath.empty()) {
    std::error_code ec;
    llvm::raw_fd_ostream os(options.emitMlirPath, ec);
    if (!ec)
      module->print(os, dumpFlags());
  }

  progress.show("writing " + options.outputPath + " (object code, link)");
  if (failed(writeArtifact(*module, *spec, pipeline.target, options.optLevel,
                           options.outputPath, error))) {
    Progress::clear();
    llvm::errs() << "error: " << error << "\n";
    return 1;
  }
  timer.done("emit+link");
  if (!options.reportPath.empty()) {
    std::error_code ec;
    llvm::raw_fd_ostream os(options.reportPath, ec);
    if (ec) {
      llvm::errs() << "error: cannot write --report '" << options.reportPath
                   << "': " << ec.message() << "\n";
      return 1;
    }
    os << report::toJson();
  }
  if (options.verbose)
    llvm::errs() << llvm::formatv("  {0,-10} {1,9:f1} ms\n", "total",
                                  timer.total);
  return 0;
}

int mlir::kiln::importModel(const CompileOptions &options) {
  DialectRegistry registry;
  registerAllDialects(registry);
  MLIRContext context(registry);
  NodeDiagnosticHandler diagnostics(&context);
  auto imported = loadModel(context, options.inputPath, options.inputShapes,
                            options.dimRanges);
  if (!imported) {
    llvm::errs() << "error: " << llvm::toString(imported.takeError()) << "\n";
    return 1;
  }
  // With locations: the ONNX node names stay on the ops, so kiln IR
  // compiled later names the same nodes in its errors, logs and reports.
  OpPrintingFlags flags;
  flags.enableDebugInfo(/*enable=*/true, /*prettyForm=*/false);
  if (options.outputPath.empty() || options.outputPath == "-") {
    (*imported)->print(llvm::outs(), flags);
    return 0;
  }
  std::error_code ec;
  llvm::raw_fd_ostream os(options.outputPath, ec);
  if (ec) {
    llvm::errs() << "error: cannot write '" << options.outputPath
                 << "': " << ec.message() << "\n";
    return 1;
  }
  (*imported)->print(os, flags);
  return 0;
}
