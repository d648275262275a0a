//===- ObjectCodegen.cpp - Optimize and emit machine code -----------------===//
#include "backends/common/ObjectCodegen.h"

#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Triple.h"

using namespace mlir;
using namespace mlir::kiln;

static llvm::CodeGenOptLevel codegenLevel(int optLevel) {
  switch (optLevel) {
  case 0:
    return llvm::CodeGenOptLevel::None;
  case 1:
    return llvm::CodeGenOptLevel::Less;
  case 2:
    return llvm::CodeGenOptLevel::Default;
  default:
    return llvm::CodeGenOptLevel::Aggressive;
  }
}

std::unique_ptr<llvm::TargetMachine>
mlir::kiln::createCpuTargetMachine(const CpuTarget &target, int optLevel,
                                   std::string &error) {
  initializeCpuLLVMTargets();
  llvm::Triple triple(target.triple);
  std::string lookupError;
  const llvm::Target *llvmTarget =
      llvm::TargetRegistry::lookupTarget(triple, lookupError);
  if (!llvmTarget) {
    error = "no LLVM backend for '" + target.triple + "': " + lookupError;
    return nullptr;
  }
  llvm::TargetOptions options;
  std::unique_ptr<llvm::TargetMachine> machine(llvmTarget->createTargetMachine(
      triple, target.cpu, target.features, options, llvm::Reloc::PIC_,
      std::nullopt, codegenLevel(optLevel)));
  if (!machine)
    error = "cannot create an LLVM target machine for " + target.triple;
  return machine;
}

void mlir::kiln::optimizeModule(llvm::Module &module,
                                llvm::TargetMachine &machine, int optLevel) {
  module.setTargetTriple(machine.getTargetTriple());
  module.setDataLayout(machine.createDataLayout());

  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions tuning;
  tuning.LoopVectorization = optLevel >= 2;
  tuning.SLPVectorization = optLevel >= 2;
  llvm::PassBuilder builder(&machine, tuning);
  builder.registerModuleAnalyses(mam);
  builder.registerCGSCCAnalyses(cgam);
  builder.registerFunctionAnalyses(fam);
  builder.registerLoopAnalyses(lam);
  builder.crossRegisterProxies(lam, fam, cgam, mam);

  llvm::OptimizationLevel level = optLevel <= 0   ? llvm::OptimizationLevel::O0
                                  : optLevel == 1 ? llvm::OptimizationLevel::O1
                                  : optLevel == 2 ? llvm::OptimizationLevel::O2
                                                  : llvm::OptimizationLevel::O3;
  llvm::ModulePassManager passes =
      level == llvm::OptimizationLevel::O0
          ? builder.buildO0DefaultPipeline(level)
          : builder.buildPerModuleDefaultPipeline(level);
  passes.run(module, mam);
}

LogicalResult mlir::kiln::emitObjectFile(llvm::Module &module,
                                         llvm::TargetMachine &machine,
                                         StringRef path, std::string &error) {
  std::error_code ec;
  llvm::raw_fd_ostream out(path, ec, llvm::sys::fs::OF_None);
  if (ec) {
    error = ("cannot write '" + path + "': " + ec.message()).str();
    return failure();
  }
  llvm::legacy::PassManager codegen;
  if (machine.addPassesToEmitFile(codegen, out, nullptr,
                                  llvm::CodeGenFileType::ObjectFile)) {
    error = "the LLVM target cannot emit object files";
    return failure();
  }
  codegen.run(module);
  out.close();
  if (out.has_error()) {
    error = ("error writing '" + path + "': " + out.error().message()).str();
    out.clear_error();
    return failure();
  }
  return success();
}
