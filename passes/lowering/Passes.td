#ifndef KILN_PASSES_LOWERING_TD
#define KILN_PASSES_LOWERING_TD

include "mlir/Pass/PassBase.td"

def LowerToLinalg : Pass<"kiln-lower-to-linalg", "ModuleOp"> {
  let summary = "Lower kiln ops to linalg/tensor/arith/math on tensors";
  let description = [{
    (to be written)
  }];
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect", "::mlir::tensor::TensorDialect",
    "::mlir::arith::ArithDialect", "::mlir::math::MathDialect",
    "::mlir::func::FuncDialect"
  ];
}

#endif // KILN_PASSES_LOWERING_TD
