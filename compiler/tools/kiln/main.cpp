//===- main.cpp - The `kiln` command line ---------------------------------===//
//
//   kiln compile model.onnx -o model.so [--target=x86_64] [-O0..-O3] ...
//   kiln run model.so --input NAME=x.npy [--output-dir out/]
//   kiln bench model.so [--threads N] [--repeat N] [--warmup N]
//   kiln inspect model.onnx|model.so
//
//===----------------------------------------------------------------------===//

#include "compiler/driver/Compile.h"
#include "compiler/driver/Inspect.h"
#include "compiler/import/onnx/OnnxImporter.h"
#include "compiler/logging/Logging.h"
#include "runtime/tools/runner.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace {
constexpr const char *kUsage =
    "usage: kiln <command> [options]\n"
    "\n"
    "commands:\n"
    "  compile MODEL.onnx -o OUT.so   compile a model into a native artifact\n"
    "  run MODEL.so [options]         run an artifact (see kiln run --help)\n"
    "  bench MODEL.so [options]       time an artifact (see kiln bench "
    "--help)\n"
    "  inspect MODEL.onnx|MODEL.so    summarize a model or an artifact\n"
    "  import MODEL.onnx [-o F.mlir]  print the imported kiln IR\n"
    "  ops                            list the ONNX ops the importer handles\n"
    "\n"
    "compile options:\n"
    "  -o PATH                  output artifact (default: MODEL.so here)\n"
    "  --target=TARGET          x86_64 (default: this machine), aarch64, cuda\n"
    "  --cpu=NAME               CPU to tune for (default: this machine's; for\n"
    "                           --target=cuda the host code's, generic)\n"
    "  --gpu-arch=LIST          GPU architectures (default sm_80,sm_90a)\n"
    "  --gpu-precision=P        fp32 (default), tf32, bf16 or fp16 math for\n"
    "                           the matmuls of fp32 models on the GPU\n"
    "  --gpu-emulate            compile the GPU kernels for this CPU; the\n"
    "                           runtime's emulator runs them (no GPU needed)\n"
    "  -O0 | -O1 | -O2 | -O3    optimization level (default -O2)\n"
    "  --input-shape=NAME=D0,D1,...  static shape for a symbolic input\n"
    "  --dump-ir-after=all|PASS write the IR after each pass (or one pass)\n"
    "  --dump-dir=DIR           where dumps go (default kiln-dump)\n"
    "  --logs=LIST              like KILN_LOGS (try --logs=help)\n"
    "  --emit-mlir=PATH         write the final LLVM-dialect module\n"
    "  --report=PATH            write counts of fusions etc. as JSON\n"
    "  --conv-layout=auto|nchw|nhwc  layout of 2-D convolution chains at -O2\n"
    "                           (default auto: the cost model decides)\n"
    "  --autotune               time candidate tile sizes of the hot\n"
    "                           contractions on this machine (-O1 and up;\n"
    "                           meant for -O3), cached per CPU and shape\n"
    "  --autotune-cache=FILE    the cache (default\n"
    "                           ~/.cache/kiln/autotune.json)\n"
    "  --autotune-threads=N     threads to time with (default: all cores)\n"
    "  --time-passes            per-pass timing\n"
    "  -v                       print the time of each stage\n";

int usageError(const std::string &message) {
  llvm::errs() << "error: " << message << "\n(run 'kiln --help' for usage)\n";
  return 2;
}

/// Accepts --flag=value and --flag value.
bool takeValue(llvm::StringRef arg, llvm::StringRef flag, int &i, int argc,
               char **argv, std::string &out, bool &missing) {
  missing = false;
  if (arg == flag) {
    if (i + 1 >= argc) {
      missing = true;
      return true;
    }
    out = argv[++i];
    return true;
  }
  if (arg.starts_with(flag) && arg.drop_front(flag.size()).starts_with("=")) {
    out = arg.drop_front(flag.size() + 1).str();
    return true;
  }
  return false;
}

bool parseShape(llvm::StringRef text, mlir::kiln::CompileOptions &options) {
  auto [name, dims] = text.split('=');
  if (name.empty() || dims.empty())
    return false;
  std::vector<int64_t> shape;
  llvm::SmallVector<llvm::StringRef> parts;
  dims.split(parts, ',');
  for (llvm::StringRef p : parts) {
    int64_t d;
    if (p.trim().getAsInteger(10, d) || d < 0)
      return false;
    shape.push_back(d);
  }
  options.inputShapes[name.str()] = shape;
  return true;
}

int compileCommand(int argc, char **argv, bool importOnly) {
  mlir::kiln::CompileOptions options;
  std::string logs, value;
  for (int i = 2; i < argc; ++i) {
    llvm::StringRef arg = argv[i];
    bool missing = false;
    auto take = [&](llvm::StringRef flag, std::string &out) {
      return takeValue(arg, flag, i, argc, argv, out, missing);
    };
    if (take("-o", options.outputPath) || take("--target", options.target) ||
        take("--cpu", options.cpu) || take("--gpu-arch", options.gpuArchs) ||
        take("--gpu-precision", options.gpuPrecision) ||
        take("--dump-ir-after", options.dumpIrAfter) ||
        take("--dump-dir", options.dumpDir) || take("--logs", logs) ||
        take("--emit-mlir", options.emitMlirPath) ||
        take("--report", options.reportPath) ||
        take("--autotune-cache", options.autotuneCache)) {
      if (missing)
        return usageError(arg.str() + " needs a value");
    } else if (take("--conv-layout", options.convLayout)) {
      if (missing ||
          (options.convLayout != "auto" && options.convLayout != "nchw" &&
           options.convLayout != "nhwc"))
        return usageError("--conv-layout takes auto, nchw or nhwc (got '" +
                          options.convLayout + "')");
    } else if (take("--input-shape", value)) {
      if (missing || !parseShape(value, options))
        return usageError("--input-shape takes NAME=D0,D1,... (got '" + value +
                          "')");
    } else if (arg.size() == 3 && arg.starts_with("-O") && arg[2] >= '0' &&
               arg[2] <= '3') {
      options.optLevel = arg[2] - '0';
    } else if (take("--autotune-threads", value)) {
      unsigned n;
      if (missing || llvm::StringRef(value).getAsInteger(10, n) || n > 1024)
        return usageError(
            "--autotune-threads takes a number of threads (got '" + value +
            "')");
      options.autotuneThreads = n;
    } else if (arg == "--gpu-emulate") {
      options.gpuEmulate = true;
    } else if (arg == "--autotune") {
      options.autotune = true;
    } else if (arg == "-v" || arg == "--verbose") {
      options.verbose = true;
    } else if (arg == "--time-passes") {
      options.timePasses = true;
    } else if (arg.starts_with("-")) {
      return usageError("unknown option '" + arg.str() + "' for compile");
    } else if (options.inputPath.empty()) {
      options.inputPath = arg.str();
    } else {
      return usageError("compile takes one model, got '" + options.inputPath +
                        "' and '" + arg.str() + "'");
    }
  }
  bool help = false;
  if (auto err = mlir::kiln::logs::configureFromEnvAndFlag(logs, help)) {
    llvm::errs() << "error: " << llvm::toString(std::move(err)) << "\n";
    return 2;
  }
  if (help) {
    llvm::outs() << mlir::kiln::logs::helpText();
    return 0;
  }
  if (options.inputPath.empty())
    return usageError("compile needs a model file");
  if (options.outputPath.empty() && !importOnly)
    options.outputPath = llvm::sys::path::stem(options.inputPath).str() + ".so";
  if (!options.outputPath.empty() &&
      llvm::sys::fs::equivalent(options.inputPath, options.outputPath))
    return usageError("the output '" + options.outputPath +
                      "' is the input model; refusing to overwrite it");
  if (importOnly)
    return mlir::kiln::importModel(options);
  return mlir::kiln::compileModel(options);
}
} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  if (argc < 2)
    return usageError("missing command");
  llvm::StringRef command = argv[1];
  if (command == "--help" || command == "-h" || command == "help") {
    llvm::outs() << kUsage;
    return 0;
  }
  if (command == "--version") {
    llvm::outs() << "kiln " << KILN_VERSION << "\n";
    return 0;
  }
  if (command == "compile")
    return compileCommand(argc, argv, /*importOnly=*/false);
  if (command == "import")
    return compileCommand(argc, argv, /*importOnly=*/true);
  if (command == "run" || command == "bench") {
    // The runner names itself with argv[0] in its usage text.
    std::string name = "kiln " + command.str();
    argv[1] = name.data();
    return command == "run" ? kilnRunMain(argc - 1, argv + 1)
                            : kilnBenchMain(argc - 1, argv + 1);
  }
  if (command == "ops") {
    for (const std::string &op : mlir::kiln::onnx_import::supportedOnnxOps())
      llvm::outs() << op << "\n";
    return 0;
  }
  if (command == "inspect") {
    if (argc != 3)
      return usageError("inspect takes one file");
    return mlir::kiln::inspectFile(argv[2]);
  }
  return usageError("unknown command '" + command.str() + "'");
}
