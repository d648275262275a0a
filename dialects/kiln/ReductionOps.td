//===- ReductionOps.td - reductions -*- tablegen -*-===//
#ifndef KILN_REDUCTION_OPS_TD
#define KILN_REDUCTION_OPS_TD

include "dialects/kiln/KilnOpBase.td"

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

class Kiln_ReduceOp<string mnemonic, string what> : Kiln_Op<mnemonic> {
  let summary = "reduce by " # what # " over `axes` (sorted, non-negative)";
  let description = [{
    ```mlir
    %m = kiln.}] # mnemonic # [{ %x {axes = array<i64: 2, 3>, keepdims = true}
        : (tensor<1x512x7x7xf32>) -> tensor<1x512x1x1xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, DenseI64ArrayAttr:$axes,
                   DefaultValuedAttr<BoolAttr, "true">:$keepdims);
  let results = (outs AnyRankedTensor:$result);
}

def Kiln_ReduceSumOp : Kiln_ReduceOp<"reduce_sum", "sum">;
def Kiln_ReduceMeanOp : Kiln_ReduceOp<"reduce_mean", "mean">;
def Kiln_ReduceMaxOp : Kiln_ReduceOp<"reduce_max", "maximum">;
def Kiln_ReduceMinOp : Kiln_ReduceOp<"reduce_min", "minimum">;
def Kiln_ReduceProdOp : Kiln_ReduceOp<"reduce_prod", "product">;

#endif // KILN_REDUCTION_OPS_TD
