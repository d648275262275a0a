//===- kiln-opt.cpp - mlir-opt with Kiln's dialects and passes ------------===//
#include "compiler/driver/InitAll.h"

#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::kiln::registerAllDialects(registry);
  mlir::kiln::registerAllPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "Kiln optimizer driver\n", registry));
}
