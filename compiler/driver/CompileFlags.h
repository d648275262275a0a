//===- CompileFlags.h - `kiln compile` / `kiln import` options --*- C++ -*-===//
//
// The command-line options of the compiler's subcommands, declared once with
// LLVM's CommandLine library (so `kiln compile --help` is generated from
// them) and grouped as the help shows them: input, target, optimization,
// debugging. Each option is a member bound to the subcommands that take it;
// `options()` turns what was given into CompileOptions, with the checks
// llvm::cl cannot express (value sets whose error text names the choices).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_COMPILER_DRIVER_COMPILEFLAGS_H
#define KILN_COMPILER_DRIVER_COMPILEFLAGS_H

#include "compiler/driver/Compile.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Error.h"

namespace mlir::kiln {

/// The option groups of `kiln <command> --help`, in the order shown.
llvm::cl::OptionCategory &inputOptions();
llvm::cl::OptionCategory &targetOptions();
llvm::cl::OptionCategory &optimizationOptions();
llvm::cl::OptionCategory &debuggingOptions();

class CompileFlags {
public:
  /// Registers the options with `compile` (all of them) and `import` (the
  /// input options and --logs).
  CompileFlags(llvm::cl::SubCommand &compile, llvm::cl::SubCommand &import);

  /// CompileOptions from the parsed command line; an error names the flag.
  /// `--logs=help` sets `logsHelp` instead.
  llvm::Expected<CompileOptions> options(bool importOnly, bool &logsHelp);

private:
  // Input.
  llvm::cl::opt<std::string> input;
  llvm::cl::opt<std::string> output;
  llvm::cl::list<std::string> inputShapes, dims;
  // Target.
  llvm::cl::opt<std::string> target, cpu, gpuArch, gpuPrecision, precision;
  llvm::cl::opt<bool> gpuEmulate;
  // Optimization.
  llvm::cl::opt<char> optLevel;
  llvm::cl::opt<std::string> convLayout, winograd;
  llvm::cl::opt<bool> noWinograd;
  llvm::cl::opt<bool> autotune;
  llvm::cl::opt<std::string> autotuneCache;
  llvm::cl::opt<unsigned> autotuneThreads;
  llvm::cl::opt<std::string> maxMemory;
  // Debugging.
  llvm::cl::opt<std::string> logs, dumpIrAfter, dumpDir, emitMlir, report;
  llvm::cl::opt<bool> timePasses, verbose;
  llvm::cl::alias verboseLong;
};

} // namespace mlir::kiln

#endif // KILN_COMPILER_DRIVER_COMPILEFLAGS_H
