//===- main.cpp - The `kiln` command line ---------------------------------===//
//
//   kiln compile model.onnx|model.mlir -o model.so [--target=...] [-O0..-O3]
//   kiln run model.so --input NAME=x.npy [--output-dir out/]
//   kiln bench model.so [--threads N] [--repeat N] [--warmup N]
//   kiln inspect model.onnx|model.mlir|model.so
//   kiln import model.onnx [-o model.mlir]
//   kiln ops
//
// compile, import, inspect and ops parse with LLVM's CommandLine library
// (subcommands; `kiln <command> --help` is generated from the option
// declarations in compiler/driver/CompileFlags.cpp); run and bench are the
// runtime's runner (runtime/tools, no LLVM), whose help comes from its own
// option table.
//
//===----------------------------------------------------------------------===//

#include "compiler/driver/Compile.h"
#include "compiler/driver/CompileFlags.h"
#include "compiler/driver/GraphPicture.h"
#include "compiler/driver/Inspect.h"
#include "compiler/driver/ModelInput.h"
#include "compiler/import/onnx/OnnxImporter.h"
#include "compiler/import/pt2/Pt2Importer.h"
#include "compiler/logging/Logging.h"
#include "runtime/tools/runner.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

using namespace llvm;
using namespace mlir::kiln;

namespace {
int usageError(const Twine &message) {
  errs() << "error: " << message << "\n(run 'kiln --help' for usage)\n";
  return 2;
}

void printVersion(raw_ostream &os) {
  os << "kiln " << KILN_VERSION << "\n"
     << "  LLVM and MLIR " << LLVM_VERSION_STRING << "\n"
     << "  targets: x86_64-linux-gnu, aarch64-linux-gnu (CPU); cuda (sm_50 "
        "and newer, tensor cores from sm_80); hip (gfx90a, gfx940, gfx941, "
        "gfx942, gfx950); --gpu-emulate (GPU kernels on this CPU)\n";
}

/// `kiln run model.onnx|model.mlir`: the model compiled (defaults: this
/// machine, -O2) into a temporary folder, removed when the run is done.
class TemporaryArtifact {
public:
  ~TemporaryArtifact() {
    if (dir.empty())
      return;
    sys::fs::remove(artifact);
    sys::fs::remove(dir);
  }

  std::optional<std::string> prepare(const std::string &model) {
    Expected<ModelFormat> format = detectModelFormat(model);
    if (!format) {
      // Unreadable: the runner says so in its words.
      consumeError(format.takeError());
      return model;
    }
    if (*format == ModelFormat::Artifact)
      return model;
    SmallString<128> path;
    if (std::error_code ec = sys::fs::createUniqueDirectory("kiln-run", path)) {
      errs() << "error: cannot create a temporary folder: " << ec.message()
             << "\n";
      return std::nullopt;
    }
    dir = path.str().str();
    sys::path::append(path, sys::path::stem(model) + ".so");
    artifact = path.str().str();
    CompileOptions options;
    options.inputPath = model;
    options.outputPath = artifact;
    if (compileModel(options) != 0)
      return std::nullopt;
    return artifact;
  }

private:
  std::string dir, artifact;
};

struct Commands {
  cl::SubCommand compile{"compile", "Compile a model (ONNX, or kiln IR as "
                                    "printed by kiln import) into a native "
                                    "artifact"};
  cl::SubCommand run{"run", "Run an artifact (kiln run --help)"};
  cl::SubCommand bench{"bench", "Time an artifact (kiln bench --help)"};
  cl::SubCommand inspect{"inspect", "Summarize a model or an artifact"};
  cl::SubCommand import{"import", "Print a model's imported kiln IR, "
                                  "weights included (input for kiln compile "
                                  "and kiln-opt)"};
  cl::SubCommand ops{"ops", "List the ONNX ops and the ATen ops (torch.export "
                            ".pt2) the importers handle"};

  bool known(StringRef name) const {
    for (const cl::SubCommand *sub :
         {&compile, &run, &bench, &inspect, &import, &ops})
      if (sub->getName() == name)
        return true;
    return false;
  }
};
} // namespace

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  StringRef command = argc > 1 ? StringRef(argv[1]) : StringRef();
  // The runner parses its own options (it is also kiln-run, without LLVM);
  // a model file given to it is compiled first, with the defaults.
  if (command == "run" || command == "bench") {
    // The runner names itself with argv[0] in its usage text.
    std::string name = "kiln " + command.str();
    argv[1] = name.data();
    TemporaryArtifact temporary;
    KilnModelPreparer prepare = [&](const std::string &model) {
      return temporary.prepare(model);
    };
    return command == "run" ? kilnRunMain(argc - 1, argv + 1, prepare)
                            : kilnBenchMain(argc - 1, argv + 1, prepare);
  }

  Commands commands;
  if (argc < 2)
    return usageError("missing command");
  if (!command.starts_with("-") && !command.starts_with("@") &&
      !commands.known(command))
    return usageError("unknown command '" + command + "'");

  CompileFlags flags(commands.compile, commands.import);
  cl::opt<std::string> inspectPath(
      cl::Positional,
      cl::desc("<model.onnx | model.pt2 | model.mlir | model.so>"),
      cl::sub(commands.inspect), cl::cat(inputOptions()));

  cl::opt<std::string> graph(
      "graph",
      cl::desc("Draw the model's kernels after fusion (ONNX nodes, fused "
               "attention, merged contractions, layout conversions, shapes "
               "on the edges) to a .svg, .png or .pdf (Graphviz) or a .dot "
               "file"),
      cl::value_desc("file"), cl::sub(commands.inspect),
      cl::cat(debuggingOptions()));
  const cl::OptionCategory *categories[] = {&inputOptions(), &targetOptions(),
                                            &optimizationOptions(),
                                            &debuggingOptions()};
  for (cl::SubCommand *sub : cl::getRegisteredSubcommands())
    cl::HideUnrelatedOptions(categories, *sub);
  cl::SetVersionPrinter(printVersion);
  if (!cl::ParseCommandLineOptions(
          argc, argv,
          "Kiln: compiles ONNX models ahead of time into native artifacts "
          "for x86-64, aarch64, CUDA and HIP\n",
          &errs(), /*VFS=*/nullptr, /*EnvVar=*/nullptr,
          /*LongOptionsUseDoubleDash=*/true))
    return 2;

  if (commands.compile || commands.import) {
    bool importOnly = bool(commands.import);
    bool logsHelp = false;
    Expected<CompileOptions> options = flags.options(importOnly, logsHelp);
    if (!options) {
      std::string message = toString(options.takeError());
      if (StringRef(message).contains("KILN_LOGS")) {
        errs() << "error: " << message << "\n";
        return 2;
      }
      return usageError(message);
    }
    if (logsHelp) {
      outs() << logs::helpText();
      return 0;
    }
    return importOnly ? importModel(*options) : compileModel(*options);
  }
  if (commands.inspect) {
    if (inspectPath.empty())
      return usageError("inspect takes one file");
    if (graph.empty())
      return inspectFile(inspectPath);
    Expected<ModelFormat> format = detectModelFormat(inspectPath);
    if (format && *format == ModelFormat::Artifact)
      return usageError("--graph draws models (ONNX or kiln IR), not "
                        "compiled artifacts");
    consumeError(format.takeError());
    return writeGraphPicture(inspectPath, graph);
  }
  if (commands.ops) {
    for (const std::string &op : onnx_import::supportedOnnxOps())
      outs() << op << "\n";
    for (const std::string &op : pt2::supportedAtenOps())
      outs() << op << "\n";
    return 0;
  }
  return usageError("missing command");
}
