//===- Progress.cpp - `kiln compile`'s progress line on a terminal --------===//
#include "compiler/driver/Progress.h"

#include "mlir/Pass/Pass.h"

#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::kiln;

static std::atomic<bool> lineShown{false};

Progress::Progress(bool wanted)
    : on(wanted && llvm::sys::Process::StandardErrIsDisplayed()) {}

void Progress::show(const llvm::Twine &text) {
  if (!on)
    return;
  // "\r\033[K": back to the start of the line and erase it.
  llvm::errs() << "\r\033[Kkiln: " << text;
  llvm::errs().flush();
  lineShown = true;
}

void Progress::clear() {
  if (lineShown.exchange(false)) {
    llvm::errs() << "\r\033[K";
    llvm::errs().flush();
  }
}

void ProgressInstrumentation::runBeforePass(Pass *pass, Operation *) {
  std::lock_guard<std::mutex> lock(mutex);
  ++passes;
  auto now = std::chrono::steady_clock::now();
  if (now - shown < std::chrono::milliseconds(50))
    return;
  shown = now;
  progress.show(stage + ": " + llvm::Twine(passes) + " passes (" +
                pass->getArgument() + ")");
}
