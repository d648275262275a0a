//===- Report.h - Counts of what the compiler did (--report) ----*- C++ -*-===//
//
// Passes count their decisions here (attention_fused, batch_norms_folded,
// ...); `kiln compile --report=FILE` writes them as JSON with the list of
// kernels, so tools can check what a compile did without parsing logs.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_COMPILER_LOGGING_REPORT_H
#define KILN_COMPILER_LOGGING_REPORT_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/JSON.h"

#include <map>
#include <string>
#include <vector>

namespace mlir::kiln::report {

/// Adds `n` to a named counter.
void count(llvm::StringRef counter, int64_t n = 1);
/// Records a kernel and the ONNX nodes it covers.
void kernel(llvm::StringRef name, std::vector<std::string> nodes);
void reset();
/// A later stage computed the nodes `folded` inside the kernel covering
/// `anchor` (an epilogue fused into a contraction): every other kernel
/// covering one of `folded` is merged into the last kernel covering one of
/// `anchor`. No-op when no kernel covers `anchor`.
void foldKernel(const std::vector<std::string> &anchor,
                const std::vector<std::string> &folded);

const std::map<std::string, int64_t> &counters();
const std::vector<std::pair<std::string, std::vector<std::string>>> &kernels();

/// The GPU kernels of a GPU target (their table, archs and the assembler's
/// report), written under "gpu".
void gpu(llvm::json::Value section);

/// The report as JSON; the counters every report has are present even at 0.
std::string toJson();

} // namespace mlir::kiln::report

#endif // KILN_COMPILER_LOGGING_REPORT_H
