//===- Report.cpp - Counts of what the compiler did (--report) ------------===//

#include "compiler/logging/Report.h"

#include <optional>

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir::kiln;

namespace {
struct State {
  std::map<std::string, int64_t> counters;
  std::vector<std::pair<std::string, std::vector<std::string>>> kernels;
  std::optional<llvm::json::Value> gpu;
};
State &state() {
  static State s;
  return s;
}
} // namespace

void report::count(llvm::StringRef counter, int64_t n) {
  state().counters[counter.str()] += n;
}

void report::kernel(llvm::StringRef name, std::vector<std::string> nodes) {
  state().kernels.emplace_back(name.str(), std::move(nodes));
}

void report::foldKernel(const std::vector<std::string> &anchor,
                        const std::vector<std::string> &folded) {
  auto &kernels = state().kernels;
  auto covers = [](const std::vector<std::string> &nodes,
                   const std::vector<std::string> &any) {
    return llvm::any_of(any, [&](const std::string &n) {
      return llvm::is_contained(nodes, n);
    });
  };
  // The last kernel covering `anchor`: a contraction's kernel comes after
  // those of its own inputs (a shared bias broadcast, a pad).
  size_t into = kernels.size();
  for (size_t i = 0; i < kernels.size(); ++i)
    if (covers(kernels[i].second, anchor))
      into = i;
  if (into == kernels.size())
    return;
  std::vector<size_t> merged;
  for (size_t i = 0; i < kernels.size(); ++i) {
    if (i == into || !covers(kernels[i].second, folded))
      continue;
    for (const std::string &n : kernels[i].second)
      if (!llvm::is_contained(kernels[into].second, n))
        kernels[into].second.push_back(n);
    merged.push_back(i);
  }
  for (size_t i : llvm::reverse(merged))
    kernels.erase(kernels.begin() + i);
}

void report::reset() {
  state().counters.clear();
  state().kernels.clear();
  state().gpu.reset();
}

void report::gpu(llvm::json::Value section) {
  state().gpu = std::move(section);
}

const std::map<std::string, int64_t> &report::counters() {
  return state().counters;
}

const std::vector<std::pair<std::string, std::vector<std::string>>> &
report::kernels() {
  return state().kernels;
}

std::string report::toJson() {
  llvm::json::Object counts;
  for (const char *always :
       {"attention_fused", "contractions_merged", "concat_in_place",
        "layout_conversions", "epilogues_fused", "batch_norms_folded",
        "norms_fused", "int8_kernels"})
    counts[always] = 0;
  for (const auto &[name, n] : state().counters)
    counts[name] = n;
  llvm::json::Array kernels;
  for (const auto &[name, nodes] : state().kernels) {
    llvm::json::Array list;
    for (const auto &n : nodes)
      list.push_back(n);
    kernels.push_back(
        llvm::json::Object{{"kernel", name}, {"onnx_nodes", std::move(list)}});
  }
  counts["kernels"] = std::move(kernels);
  if (state().gpu)
    counts["gpu"] = *state().gpu;
  std::string s;
  llvm::raw_string_ostream os(s);
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(counts))) << "\n";
  return s;
}
