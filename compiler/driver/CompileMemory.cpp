//===- CompileMemory.cpp - The memory limit of `kiln compile` -------------===//
#include "compiler/driver/CompileMemory.h"

#include "memory_limit.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/Signals.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <sys/resource.h>
#include <unistd.h>

using namespace mlir;
using namespace mlir::kiln;

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define KILN_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) ||     \
    __has_feature(memory_sanitizer)
#define KILN_SANITIZED 1
#endif
#endif

std::optional<uint64_t> mlir::kiln::parseMemorySize(StringRef text) {
  if (text == "none")
    return 0;
  double number = 0;
  StringRef digits = text.take_while(
      [](char c) { return (c >= '0' && c <= '9') || c == '.'; });
  StringRef unit = text.drop_front(digits.size());
  if (digits.empty() || digits.getAsDouble(number) || !std::isfinite(number))
    return std::nullopt;
  double scale = unit.empty() || unit == "B"    ? 1
                 : unit == "K" || unit == "KiB" ? 1024.0
                 : unit == "M" || unit == "MiB" ? 1024.0 * 1024
                 : unit == "G" || unit == "GiB" ? 1024.0 * 1024 * 1024
                 : unit == "T" || unit == "TiB" ? 1024.0 * 1024 * 1024 * 1024
                                                : 0;
  double bytes = number * scale;
  if (scale == 0 || bytes < 1 || bytes > 1.8e19)
    return std::nullopt;
  return uint64_t(bytes);
}

CompileMemoryLimit
mlir::kiln::compileMemoryLimit(std::optional<uint64_t> flag) {
  if (flag)
    return {*flag, "--max-memory"};
  ::kiln::rt::MemoryAvailable available = ::kiln::rt::availableMemory();
  if (available.bytes == UINT64_MAX)
    return {};
  return {available.bytes, available.source};
}

uint64_t mlir::kiln::weightBytes(ModuleOp module) {
  llvm::DenseSet<Attribute> seen;
  uint64_t total = 0;
  module->walk([&](Operation *op) {
    op->getAttrDictionary().walk([&](ElementsAttr value) {
      if (!seen.insert(value).second)
        return;
      if (auto resource = dyn_cast<DenseResourceElementsAttr>(value)) {
        if (AsmResourceBlob *blob = resource.getRawHandle().getBlob())
          total += blob->getData().size();
      } else if (auto dense = dyn_cast<DenseElementsAttr>(value)) {
        total += dense.getRawData().size();
      }
    });
  });
  return total;
}

std::string mlir::kiln::formatMemory(uint64_t bytes) {
  return ::kiln::rt::formatBytes(bytes);
}

LogicalResult mlir::kiln::checkWeightsFit(uint64_t weights,
                                          const CompileMemoryLimit &limit,
                                          std::string &error) {
  if (!limit.bytes)
    return success();
  uint64_t needs = weights + weights / 4;
  if (needs <= limit.bytes)
    return success();
  error =
      "the model has " + formatMemory(weights) +
      " of weights; compiling it needs about " + formatMemory(needs) +
      ", but the limit is " + formatMemory(limit.bytes) + " (" + limit.source +
      (limit.source == "--max-memory" ? ")" : "; --max-memory sets another)");
  return failure();
}

namespace {
/// The message the out-of-memory handler prints, built before it is needed
/// (the handler must not allocate).
char outOfMemoryMessage[512];

[[noreturn]] void outOfMemory(void *, const char *, bool) {
  ssize_t ignored = ::write(STDERR_FILENO, outOfMemoryMessage,
                            std::strlen(outOfMemoryMessage));
  (void)ignored;
  // Removes the temporary files of the artifact writer.
  llvm::sys::RunInterruptHandlers();
  ::_exit(1);
}

/// LLVM's fatal errors under the cap: a thread or a mapping refused for lack
/// of room is running out of memory too; anything else is said as LLVM
/// says it, on one line, without a crash report.
[[noreturn]] void fatalError(void *, const char *reason, bool) {
  llvm::StringRef text(reason);
  if (text.contains("pthread_create") || text.contains("out of memory") ||
      text.contains("Cannot allocate") || text.contains("mmap"))
    outOfMemory(nullptr, reason, false);
  static const char prefix[] = "error: LLVM: ";
  ssize_t ignored = ::write(STDERR_FILENO, prefix, sizeof prefix - 1);
  ignored = ::write(STDERR_FILENO, reason, std::strlen(reason));
  ignored = ::write(STDERR_FILENO, "\n", 1);
  (void)ignored;
  llvm::sys::RunInterruptHandlers();
  ::_exit(1);
}
} // namespace

void mlir::kiln::enforceMemoryLimit(const CompileMemoryLimit &limit) {
#ifndef KILN_SANITIZED
  if (!limit.bytes)
    return;
  std::snprintf(outOfMemoryMessage, sizeof outOfMemoryMessage,
                "error: kiln compile ran out of memory: its limit is %s "
                "(%s)%s\n",
                formatMemory(limit.bytes).c_str(), limit.source.c_str(),
                limit.source == "--max-memory" ? ""
                                               : "; --max-memory sets another");
  struct rlimit data;
  if (::getrlimit(RLIMIT_DATA, &data) != 0)
    return;
  rlim_t cap = limit.bytes;
  if (data.rlim_max != RLIM_INFINITY && data.rlim_max < cap)
    cap = data.rlim_max;
  data.rlim_cur = cap;
  if (::setrlimit(RLIMIT_DATA, &data) != 0)
    return;
  // Once per process (LLVM allows one of each); the message above is the
  // latest limit's.
  static bool installed = false;
  if (!installed) {
    llvm::install_bad_alloc_error_handler(outOfMemory);
    llvm::install_fatal_error_handler(fatalError);
    llvm::install_out_of_memory_new_handler();
    installed = true;
  }
#else
  (void)limit;
#endif
}
