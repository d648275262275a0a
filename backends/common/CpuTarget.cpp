//===- CpuTarget.cpp - Target triple, CPU and features from flags ---------===//
#include "backends/common/CpuTarget.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

#include <memory>
#include <mutex>

using namespace mlir;
using namespace mlir::kiln;

void mlir::kiln::initializeCpuLLVMTargets() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeX86TargetInfo();
    LLVMInitializeX86Target();
    LLVMInitializeX86TargetMC();
    LLVMInitializeX86AsmPrinter();
    LLVMInitializeAArch64TargetInfo();
    LLVMInitializeAArch64Target();
    LLVMInitializeAArch64TargetMC();
    LLVMInitializeAArch64AsmPrinter();
  });
}

static constexpr const char *kAcceptedTargets =
    "x86_64, x86_64-linux-gnu, aarch64, aarch64-linux-gnu";

/// The canonical triple for an accepted --target spelling, or "".
static std::string normalizeTarget(StringRef target) {
  llvm::Triple triple(llvm::Triple::normalize(target));
  if (triple.getArch() != llvm::Triple::x86_64 &&
      triple.getArch() != llvm::Triple::aarch64)
    return "";
  // Only Linux ELF is supported; an unspecified OS means Linux.
  bool osOk = triple.getOS() == llvm::Triple::Linux ||
              triple.getOS() == llvm::Triple::UnknownOS;
  bool envOk = triple.getEnvironment() == llvm::Triple::GNU ||
               triple.getEnvironment() == llvm::Triple::UnknownEnvironment;
  if (!osOk || !envOk)
    return "";
  return (triple.getArchName() + "-unknown-linux-gnu").str();
}

static std::string hostFeatures() {
  SmallVector<std::string> enabled;
  for (const auto &feature : llvm::sys::getHostCPUFeatures())
    if (feature.second)
      enabled.push_back("+" + feature.first().str());
  llvm::sort(enabled); // StringMap order is not stable across runs.
  return llvm::join(enabled, ",");
}

CpuTarget CpuTarget::host() {
  CpuTarget target;
  target.triple = normalizeTarget(llvm::sys::getProcessTriple());
  if (target.triple.empty())
    target.triple = llvm::Triple::normalize(llvm::sys::getProcessTriple());
  target.cpu = llvm::sys::getHostCPUName().str();
  target.features = hostFeatures();
  return target;
}

FailureOr<CpuTarget> CpuTarget::fromFlags(StringRef target, StringRef cpu,
                                          std::string &error) {
  CpuTarget host = CpuTarget::host();
  CpuTarget result;
  result.triple = target.empty() ? host.triple : normalizeTarget(target);
  if (result.triple.empty()) {
    error = ("unknown --target '" + target + "'; accepted: " + kAcceptedTargets)
                .str();
    return failure();
  }
  bool isHostArch = llvm::Triple(result.triple).getArch() ==
                    llvm::Triple(host.triple).getArch();
  if (cpu.empty())
    cpu = isHostArch ? "native" : "generic";
  if (cpu == "native") {
    if (!isHostArch) {
      error = ("--cpu=native needs the host's architecture, but --target is '" +
               target + "'; name a CPU (e.g. generic)")
                  .str();
      return failure();
    }
    result.cpu = host.cpu;
    result.features = host.features;
    return result;
  }

  initializeCpuLLVMTargets();
  std::string lookupError;
  const llvm::Target *llvmTarget = llvm::TargetRegistry::lookupTarget(
      llvm::Triple(result.triple), lookupError);
  if (!llvmTarget) {
    error = "LLVM has no backend for " + result.triple + ": " + lookupError;
    return failure();
  }
  std::unique_ptr<llvm::MCSubtargetInfo> subtarget(
      llvmTarget->createMCSubtargetInfo(llvm::Triple(result.triple), "", ""));
  if (cpu != "generic" && !subtarget->isCPUStringValid(cpu)) {
    error = ("unknown --cpu '" + cpu + "' for " + result.triple +
             "; accepted: native, generic, or an LLVM CPU name (see `llc "
             "-mtriple=" +
             result.triple + " -mcpu=help`), e.g. " +
             (llvm::Triple(result.triple).isAArch64()
                  ? "neoverse-n1, neoverse-v2, cortex-a76"
                  : "x86-64-v3, skylake-avx512, znver4, znver5"))
                .str();
    return failure();
  }
  result.cpu = cpu.str();
  return result;
}

bool CpuTarget::hasFeature(StringRef name) const {
  initializeCpuLLVMTargets();
  llvm::Triple llvmTriple(triple);
  std::string lookupError;
  const llvm::Target *llvmTarget =
      llvm::TargetRegistry::lookupTarget(llvmTriple, lookupError);
  if (!llvmTarget)
    return false;
  std::unique_ptr<llvm::MCSubtargetInfo> subtarget(
      llvmTarget->createMCSubtargetInfo(llvmTriple, cpu, features));
  return subtarget && subtarget->checkFeatures(("+" + name).str());
}
