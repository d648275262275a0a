//===- Logging.h - Per-subsystem logs and artifacts (KILN_LOGS) -*- C++ -*-===//
//
// Modeled on TORCH_LOGS. A comma list, from the KILN_LOGS environment
// variable and/or `--logs`:
//   name      component `name` at info level
//   +name     component `name` at debug level
//   -name     component `name` errors only
//   all/+all  every component
//   artifact  an artifact by name (graph, fused_graph, ...), printed whole
//   help      list the names and exit
// Components default to warnings. Messages go to stderr prefixed with
// "[kiln:<component>]". Passes log their decisions through KILN_LOG.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_COMPILER_LOGGING_LOGGING_H
#define KILN_COMPILER_LOGGING_LOGGING_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace mlir::kiln::logs {

enum class Level { Debug = 0, Info = 1, Warning = 2, Error = 3 };

struct NameInfo {
  const char *name;
  const char *description;
};
/// Subsystems that log (import, graph, lowering, fusion, layout, codegen, ...).
const std::vector<NameInfo> &components();
/// Named outputs printed whole when enabled (graph, fused_graph, ...).
const std::vector<NameInfo> &artifacts();

/// Applies a KILN_LOGS-style spec on top of the current settings. Returns an
/// error naming an unknown entry. Sets `helpRequested` for "help".
llvm::Error configure(llvm::StringRef spec, bool &helpRequested);
/// Resets to defaults, then applies $KILN_LOGS and `flag` (flag wins).
llvm::Error configureFromEnvAndFlag(llvm::StringRef flag,
                                    bool &helpRequested);
std::string helpText();

bool enabled(llvm::StringRef component, Level level);
bool artifactEnabled(llvm::StringRef artifact);

/// A stream for one message; prints the prefix. Use through KILN_LOG.
llvm::raw_ostream &stream(llvm::StringRef component, Level level);
/// Prints an artifact with a header line.
llvm::raw_ostream &artifactStream(llvm::StringRef artifact);

} // namespace mlir::kiln::logs

/// KILN_LOG("fusion", Info) << "fused attention at node " << name << "\n";
#define KILN_LOG(component, level)                                            \
  if (!::mlir::kiln::logs::enabled(component,                                 \
                                   ::mlir::kiln::logs::Level::level))         \
    ;                                                                          \
  else                                                                         \
    ::mlir::kiln::logs::stream(component, ::mlir::kiln::logs::Level::level)

#endif // KILN_COMPILER_LOGGING_LOGGING_H
