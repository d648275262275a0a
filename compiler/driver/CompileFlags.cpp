//===- CompileFlags.cpp - `kiln compile` / `kiln import` options ----------===//
#include "compiler/driver/CompileFlags.h"
#include "compiler/driver/CompileMemory.h"

#include "compiler/logging/Logging.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

using namespace llvm;
using namespace mlir::kiln;

cl::OptionCategory &mlir::kiln::inputOptions() {
  static cl::OptionCategory category("Input options");
  return category;
}
cl::OptionCategory &mlir::kiln::targetOptions() {
  static cl::OptionCategory category("Target options");
  return category;
}
cl::OptionCategory &mlir::kiln::optimizationOptions() {
  static cl::OptionCategory category("Optimization options");
  return category;
}
cl::OptionCategory &mlir::kiln::debuggingOptions() {
  static cl::OptionCategory category("Debugging options");
  return category;
}

namespace {
Error usage(const Twine &message) {
  return createStringError(inconvertibleErrorCode(), message);
}

/// NAME=D0,D1,... into `shapes`.
bool parseShape(StringRef text,
                std::map<std::string, std::vector<int64_t>> &shapes) {
  auto [name, dims] = text.split('=');
  if (name.empty() || dims.empty())
    return false;
  std::vector<int64_t> shape;
  SmallVector<StringRef> parts;
  dims.split(parts, ',');
  for (StringRef p : parts) {
    int64_t d;
    if (p.trim().getAsInteger(10, d) || d < 0)
      return false;
    shape.push_back(d);
  }
  shapes[name.str()] = shape;
  return true;
}

/// NAME=MIN..MAX (or NAME=N, both bounds N) into `ranges`.
bool parseDimRange(StringRef text,
                   std::map<std::string, std::pair<int64_t, int64_t>> &ranges) {
  auto [name, range] = text.split('=');
  if (name.empty() || range.empty())
    return false;
  auto [lo, hi] = range.split("..");
  if (hi.empty() && !range.contains(".."))
    hi = lo;
  int64_t min, max;
  if (lo.trim().getAsInteger(10, min) || hi.trim().getAsInteger(10, max) ||
      min < 0 || max < min)
    return false;
  ranges[name.str()] = {min, max};
  return true;
}
} // namespace

CompileFlags::CompileFlags(cl::SubCommand &compile, cl::SubCommand &import)
    : input(cl::Positional, cl::desc("<model.onnx | model.pt2 | model.mlir>"),
            cl::sub(compile), cl::sub(import), cl::cat(inputOptions())),
      output("o",
             cl::desc("The artifact to write (default: the model's name with "
                      ".so, here; import: standard output)"),
             cl::value_desc("path"), cl::sub(compile), cl::sub(import),
             cl::cat(inputOptions())),
      inputShapes("input-shape",
                  cl::desc("A static shape for an input with symbolic dims "
                           "(repeat per input)"),
                  cl::value_desc("name=d0,d1,..."), cl::sub(compile),
                  cl::sub(import), cl::cat(inputOptions())),
      dims("dim",
           cl::desc("The extents a symbolic dim may take, checked when the "
                    "model runs (default 0..2147483647; repeat per symbol)"),
           cl::value_desc("name=min..max"), cl::sub(compile), cl::sub(import),
           cl::cat(inputOptions())),
      target("target",
             cl::desc("x86_64 (default: this machine), aarch64, cuda, hip, "
                      "or an LLVM triple"),
             cl::value_desc("target"), cl::sub(compile),
             cl::cat(targetOptions())),
      cpu("cpu",
          cl::desc("The CPU to tune for (default: this machine's; for GPU "
                   "targets the host code's, generic)"),
          cl::value_desc("name"), cl::sub(compile), cl::cat(targetOptions())),
      gpuArch("gpu-arch",
              cl::desc("GPU architectures, comma-separated (default "
                       "sm_80,sm_90a for cuda, gfx90a,gfx942 for hip)"),
              cl::value_desc("list"), cl::sub(compile),
              cl::cat(targetOptions())),
      gpuPrecision("gpu-precision",
                   cl::desc("Math of the matmuls and convolutions of fp32 "
                            "models on the GPU: fp32 (default), tf32, bf16, "
                            "fp16"),
                   cl::value_desc("p"), cl::sub(compile),
                   cl::cat(targetOptions())),
      precision("precision",
                cl::desc("Math of the matmuls on a CPU: fp32 (default) or "
                         "bf16 (weights stored in bf16; on AVX512-BF16 CPUs "
                         "the products in bf16 with fp32 sums)"),
                cl::value_desc("p"), cl::sub(compile),
                cl::cat(targetOptions())),
      gpuEmulate("gpu-emulate",
                 cl::desc("Compile the GPU kernels for this CPU; the "
                          "runtime's emulator runs them (no GPU needed)"),
                 cl::sub(compile), cl::cat(targetOptions())),
      optLevel("O", cl::desc("Optimization level 0-3 (default -O2)"),
               cl::Prefix, cl::init('2'), cl::value_desc("level"),
               cl::sub(compile), cl::cat(optimizationOptions())),
      convLayout("conv-layout",
                 cl::desc("Layout of 2-D convolution chains at -O2: auto "
                          "(default: the cost model decides), nchw, nhwc"),
                 cl::value_desc("layout"), cl::sub(compile),
                 cl::cat(optimizationOptions())),
      winograd("winograd",
               cl::desc("3x3 stride-1 NHWC convolutions by Winograd at -O1 "
                        "and up: auto (default: a cost model picks F(4x4,3x3), "
                        "F(2x2,3x3) or the direct kernel per convolution), "
                        "off, 2 or 4 (that tile for every one)"),
               cl::value_desc("mode"), cl::sub(compile),
               cl::cat(optimizationOptions())),
      noWinograd("no-winograd",
                 cl::desc("The direct kernel for every convolution (the same "
                          "as --winograd=off)"),
                 cl::sub(compile), cl::cat(optimizationOptions())),
      autotune("autotune",
               cl::desc("Time candidate tile sizes of the hot contractions "
                        "on this machine (-O1 and up), cached per CPU and "
                        "shape"),
               cl::sub(compile), cl::cat(optimizationOptions())),
      autotuneCache("autotune-cache",
                    cl::desc("The autotuning cache (default "
                             "~/.cache/kiln/autotune.json)"),
                    cl::value_desc("file"), cl::sub(compile),
                    cl::cat(optimizationOptions())),
      autotuneThreads("autotune-threads",
                      cl::desc("Threads to time with (default: all cores)"),
                      cl::value_desc("n"), cl::init(0), cl::sub(compile),
                      cl::cat(optimizationOptions())),
      maxMemory("max-memory",
                cl::desc("Memory the compile may use: 8G, 512M, ... or none "
                         "(default: what the machine has available now); "
                         "past it the compile stops with an error"),
                cl::value_desc("size"), cl::sub(compile),
                cl::cat(optimizationOptions())),
      logs("logs",
           cl::desc("Components to log and artifacts to print, as "
                    "KILN_LOGS (try --logs=help)"),
           cl::value_desc("list"), cl::sub(compile), cl::sub(import),
           cl::cat(debuggingOptions())),
      dumpIrAfter("dump-ir-after",
                  cl::desc("Write the IR after each pass (all) or after one "
                           "pass"),
                  cl::value_desc("all|pass"), cl::sub(compile),
                  cl::cat(debuggingOptions())),
      dumpDir("dump-dir", cl::desc("Where the dumps go (default kiln-dump)"),
              cl::value_desc("dir"), cl::init("kiln-dump"), cl::sub(compile),
              cl::cat(debuggingOptions())),
      emitMlir("emit-mlir",
               cl::desc("Write the final LLVM-dialect module to this file"),
               cl::value_desc("path"), cl::sub(compile),
               cl::cat(debuggingOptions())),
      report("report",
             cl::desc("Write counts of what was fused and merged, and the "
                      "kernels with their ONNX nodes, as JSON"),
             cl::value_desc("path"), cl::sub(compile),
             cl::cat(debuggingOptions())),
      timePasses("time-passes", cl::desc("Print the time of each pass"),
                 cl::sub(compile), cl::cat(debuggingOptions())),
      verbose("v", cl::desc("Print the time of each stage (also --verbose)"),
              cl::sub(compile), cl::cat(debuggingOptions())),
      verboseLong("verbose", cl::desc("Alias for -v"), cl::aliasopt(verbose),
                  cl::cat(debuggingOptions())) {}

Expected<CompileOptions> CompileFlags::options(bool importOnly,
                                               bool &logsHelp) {
  CompileOptions options;
  const char *command = importOnly ? "import" : "compile";
  options.inputPath = input;
  options.outputPath = output;
  for (const std::string &shape : inputShapes)
    if (!parseShape(shape, options.inputShapes))
      return usage("--input-shape takes NAME=D0,D1,... (got '" + shape + "')");
  for (const std::string &dim : dims)
    if (!parseDimRange(dim, options.dimRanges))
      return usage("--dim takes NAME=MIN..MAX with 0 <= MIN <= MAX (got '" +
                   dim + "')");
  options.target = target;
  options.cpu = cpu;
  options.gpuArchs = gpuArch;
  options.gpuPrecision = gpuPrecision;
  options.gpuEmulate = gpuEmulate;
  options.precision = precision;
  if (!precision.empty() && precision != "fp32" && precision != "bf16")
    return usage("--precision takes fp32 or bf16 (got '" + precision + "')");
  if (optLevel < '0' || optLevel > '3')
    return usage("-O takes a level from 0 to 3 (got -O" + Twine(optLevel) +
                 ")");
  options.optLevel = optLevel - '0';
  options.convLayout = convLayout;
  if (!convLayout.empty() && convLayout != "auto" && convLayout != "nchw" &&
      convLayout != "nhwc")
    return usage("--conv-layout takes auto, nchw or nhwc (got '" + convLayout +
                 "')");
  if (!winograd.empty() && winograd != "auto" && winograd != "off" &&
      winograd != "2" && winograd != "4")
    return usage("--winograd takes auto, off, 2 or 4 (got '" + winograd + "')");
  if (noWinograd && !winograd.empty() && winograd != "off")
    return usage("--no-winograd contradicts --winograd=" + winograd);
  options.winograd = noWinograd ? "off" : std::string(winograd);
  options.autotune = autotune;
  options.autotuneCache = autotuneCache;
  if (autotuneThreads > 1024)
    return usage("--autotune-threads takes a number of threads up to 1024 "
                 "(got " +
                 Twine(autotuneThreads.getValue()) + ")");
  options.autotuneThreads = autotuneThreads;
  if (maxMemory.getNumOccurrences()) {
    options.maxMemory = parseMemorySize(maxMemory);
    if (!options.maxMemory)
      return usage("--max-memory takes a size such as 8G, 512M or 300K, or "
                   "none (got '" +
                   maxMemory + "')");
  }
  options.dumpIrAfter = dumpIrAfter;
  options.dumpDir = dumpDir;
  options.emitMlirPath = emitMlir;
  options.reportPath = report;
  options.timePasses = timePasses;
  options.verbose = verbose;

  logsHelp = false;
  if (auto err = logs::configureFromEnvAndFlag(logs, logsHelp))
    return std::move(err);
  if (logsHelp)
    return options;
  if (options.inputPath.empty())
    return usage(Twine(command) + " needs a model file");
  if (options.outputPath.empty() && !importOnly)
    options.outputPath = sys::path::stem(options.inputPath).str() + ".so";
  if (!options.outputPath.empty() &&
      sys::fs::equivalent(options.inputPath, options.outputPath))
    return usage("the output '" + options.outputPath +
                 "' is the input model; refusing to overwrite it");
  return options;
}
