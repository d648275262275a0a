//===- Logging.cpp - Per-subsystem logs and artifacts (KILN_LOGS) ---------===//

#include "compiler/logging/Logging.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Process.h"

#include <cstdlib>

using namespace mlir::kiln;
using namespace mlir::kiln::logs;

namespace {
struct State {
  llvm::StringMap<Level> levels;
  llvm::StringSet<> artifacts;
};

State &state() {
  static State s;
  return s;
}

const char *levelName(Level level) {
  switch (level) {
  case Level::Debug:
    return "debug";
  case Level::Info:
    return "info";
  case Level::Warning:
    return "warning";
  case Level::Error:
    return "error";
  }
  return "";
}

bool isComponent(llvm::StringRef name) {
  for (const auto &c : components())
    if (name == c.name)
      return true;
  return false;
}

bool isArtifact(llvm::StringRef name) {
  for (const auto &a : artifacts())
    if (name == a.name)
      return true;
  return false;
}
} // namespace

const std::vector<NameInfo> &logs::components() {
  static const std::vector<NameInfo> list = {
      {"import", "ONNX import: opset, inputs, constants"},
      {"graph", "graph-level passes (folding, canonicalization)"},
      {"fusion", "fusion decisions with the ONNX nodes involved"},
      {"layout", "layout choices and conversions"},
      {"lowering", "kiln -> linalg lowering"},
      {"codegen", "CPU code generation: tiling, vectorization, LLVM"},
      {"gpu", "GPU kernels: formation, launch shapes, ptxas resources"},
      {"autotune", "--autotune: candidates timed and tile sizes chosen"},
      {"arena", "buffer planning: arena size and reuse"},
      {"link", "object emission and linking"},
  };
  return list;
}

const std::vector<NameInfo> &logs::artifacts() {
  static const std::vector<NameInfo> list = {
      {"graph", "kiln IR right after import"},
      {"fused_graph", "kiln IR after graph optimizations"},
      {"linalg", "linalg IR after lowering"},
      {"output_code", "the LLVM IR of the artifact"},
      {"schedule", "buffer plan: each buffer's offset, size and lifetime"},
      {"perf_hints", "places where the compiler missed a faster path"},
  };
  return list;
}

std::string logs::helpText() {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "KILN_LOGS / --logs: comma-separated list\n"
        "  name   info logs of a component    +name  debug logs\n"
        "  -name  errors only                 all    every component\n"
        "  an artifact name prints that artifact\n\nComponents:\n";
  for (const auto &c : components())
    os << "  " << llvm::left_justify(c.name, 12) << c.description << "\n";
  os << "\nArtifacts:\n";
  for (const auto &a : artifacts())
    os << "  " << llvm::left_justify(a.name, 12) << a.description << "\n";
  os << "\nExample: KILN_LOGS=+fusion,layout,output_code kiln compile m.onnx\n";
  return s;
}

llvm::Error logs::configure(llvm::StringRef spec, bool &helpRequested) {
  llvm::SmallVector<llvm::StringRef> entries;
  spec.split(entries, ',', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef entry : entries) {
    entry = entry.trim();
    if (entry == "help") {
      helpRequested = true;
      continue;
    }
    Level level = Level::Info;
    if (entry.consume_front("+"))
      level = Level::Debug;
    else if (entry.consume_front("-"))
      level = Level::Error;
    if (entry == "all") {
      for (const auto &c : components())
        state().levels[c.name] = level;
      continue;
    }
    // A name that is both (graph) enables the artifact and the component.
    bool known = false;
    if (isArtifact(entry)) {
      state().artifacts.insert(entry);
      known = true;
    }
    if (isComponent(entry)) {
      state().levels[entry] = level;
      known = true;
    }
    if (!known)
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          "unknown log name '%s' in KILN_LOGS/--logs (try KILN_LOGS=help)",
          entry.str().c_str());
  }
  return llvm::Error::success();
}

llvm::Error logs::configureFromEnvAndFlag(llvm::StringRef flag,
                                          bool &helpRequested) {
  state().levels.clear();
  state().artifacts.clear();
  if (const char *env = std::getenv("KILN_LOGS"))
    if (auto err = configure(env, helpRequested))
      return err;
  return configure(flag, helpRequested);
}

bool logs::enabled(llvm::StringRef component, Level level) {
  auto it = state().levels.find(component);
  Level threshold = it == state().levels.end() ? Level::Warning : it->second;
  return level >= threshold;
}

bool logs::artifactEnabled(llvm::StringRef artifact) {
  return state().artifacts.contains(artifact);
}

llvm::raw_ostream &logs::stream(llvm::StringRef component, Level level) {
  auto &os = llvm::errs();
  os << "[kiln:" << component;
  if (level != Level::Info)
    os << ":" << levelName(level);
  os << "] ";
  return os;
}

llvm::raw_ostream &logs::artifactStream(llvm::StringRef artifact) {
  auto &os = llvm::errs();
  os << "[kiln:artifact] ===== " << artifact << " =====\n";
  return os;
}
