//===- kiln-opt.cpp - mlir-opt with Kiln's dialects and passes ------------===//
//
// KILN_LOGS works as for `kiln`, so lit tests can check a pass's decisions.
//
//===----------------------------------------------------------------------===//
#include "compiler/driver/InitAll.h"
#include "compiler/logging/Logging.h"

#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  bool help = false;
  if (llvm::Error err = mlir::kiln::logs::configureFromEnvAndFlag("", help)) {
    llvm::errs() << "kiln-opt: KILN_LOGS: " << llvm::toString(std::move(err))
                 << "\n";
    return 1;
  }
  mlir::DialectRegistry registry;
  mlir::kiln::registerAllDialects(registry);
  mlir::kiln::registerAllPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "Kiln optimizer driver\n", registry));
}
