#ifndef KILN_PASSES_FUSION_TD
#define KILN_PASSES_FUSION_TD

include "mlir/Pass/PassBase.td"

def FuseAttention : Pass<"kiln-fuse-attention", "ModuleOp"> {
  let summary = "Match decomposed attention and replace it with kiln.attention";
  let description = [{
    (to be written)
  }];
  let dependentDialects = ["::mlir::kiln::KilnDialect"];
}

#endif // KILN_PASSES_FUSION_TD
