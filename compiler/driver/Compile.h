//===- Compile.h - `kiln compile`: model file -> artifact -------*- C++ -*-===//
#ifndef KILN_COMPILER_DRIVER_COMPILE_H
#define KILN_COMPILER_DRIVER_COMPILE_H

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mlir::kiln {

struct CompileOptions {
  std::string inputPath;
  std::string outputPath;
  std::string target; // "" = host
  std::string cpu;    // "" = host CPU (or the target's generic CPU)
  /// GPU targets (--target=cuda): --gpu-arch list, --gpu-precision and
  /// --gpu-emulate (kernels compiled for this CPU, run by the emulator).
  std::string gpuArchs;
  std::string gpuPrecision;
  bool gpuEmulate = false;
  /// CPU targets: --precision, "fp32" (default) or "bf16" (matmul weights
  /// stored in bf16; where the CPU has AVX512-BF16 the products are bf16
  /// with fp32 sums, elsewhere the weights are widened to f32 as loaded).
  std::string precision;
  int optLevel = 2;
  std::map<std::string, std::vector<int64_t>> inputShapes;
  /// --dim NAME=MIN..MAX: the range of a symbolic dim.
  std::map<std::string, std::pair<int64_t, int64_t>> dimRanges;
  std::string dumpIrAfter; // "", "all" or a pass argument
  std::string dumpDir = "kiln-dump";
  std::string emitMlirPath; // write the final LLVM-dialect module here
  std::string reportPath;   // --report: JSON counts of what was done
  bool verbose = false;     // -v: time of each stage
  bool timePasses = false;  // MLIR's per-pass timing report
  /// --autotune: time tile sizes of the hot contractions on this machine.
  bool autotune = false;
  std::string autotuneCache; // "" = defaultAutotuneCachePath()
  unsigned autotuneThreads = 0;
  /// --conv-layout: auto|nchw|nhwc ("" = KILN_CONV_LAYOUT, else auto).
  std::string convLayout;
  /// --winograd: auto|off|2|4 ("" = KILN_WINOGRAD, else auto);
  /// --no-winograd is off.
  std::string winograd;
  /// --max-memory in bytes (0: no limit); unset: what the machine has now.
  std::optional<uint64_t> maxMemory;
  /// Run the pass pipelines but write no object code or artifact: what
  /// `kiln inspect` runs to report fusions (epilogues included) and kernels.
  bool analyzeOnly = false;
};

/// Runs the whole pipeline. Prints errors (one line each) and returns the
/// process exit code.
int compileModel(const CompileOptions &options);

/// `kiln import`: writes the imported kiln IR (weights included, so the file
/// is valid input for kiln-opt) to options.outputPath or stdout.
int importModel(const CompileOptions &options);

} // namespace mlir::kiln

#endif // KILN_COMPILER_DRIVER_COMPILE_H
