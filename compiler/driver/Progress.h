//===- Progress.h - `kiln compile`'s progress line on a terminal -*- C++
//-*-===//
//
// When stderr is a terminal (and -v is off), `kiln compile` keeps one line
// there saying which stage it is in and, during code generation, how many
// kernels it is generating and how many passes have run. The line is erased
// before anything else is printed to stderr (the diagnostics call clear())
// and when the compile ends. Not a terminal: nothing is printed, so logs
// stay clean.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_COMPILER_DRIVER_PROGRESS_H
#define KILN_COMPILER_DRIVER_PROGRESS_H

#include "mlir/Pass/PassInstrumentation.h"

#include "llvm/ADT/Twine.h"

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>

namespace mlir::kiln {

class Progress {
public:
  /// On when `wanted` and stderr is a terminal.
  explicit Progress(bool wanted);
  ~Progress() { clear(); }
  bool enabled() const { return on; }
  /// Replaces the line with "kiln: TEXT".
  void show(const llvm::Twine &text);
  /// Erases the line, if one is shown.
  static void clear();

private:
  bool on;
};

/// Counts the passes of a stage into the progress line ("code generation,
/// 59 kernels: 140 passes (convert-scf-to-cf)"), at most every 50 ms.
class ProgressInstrumentation : public PassInstrumentation {
public:
  ProgressInstrumentation(Progress &progress, std::string stage)
      : progress(progress), stage(std::move(stage)) {}
  void runBeforePass(Pass *pass, Operation *op) override;

private:
  Progress &progress;
  std::string stage;
  std::mutex mutex;
  int64_t passes = 0;
  std::chrono::steady_clock::time_point shown{};
};

} // namespace mlir::kiln

#endif // KILN_COMPILER_DRIVER_PROGRESS_H
