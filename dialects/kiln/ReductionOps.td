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

class Kiln_ArgReduceOp<string mnemonic, string what> : Kiln_Op<mnemonic> {
  let summary = "index (i64) of the " # what # " along `axis`";
  let description = [{
    Ties give the first index, or the last with `select_last_index`.
    ```mlir
    %i = kiln.}] # mnemonic # [{ %x {axis = 1 : i64, keepdims = false}
        : (tensor<2x3x4xf32>) -> tensor<2x4xi64>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, I64Attr:$axis,
                   DefaultValuedAttr<BoolAttr, "true">:$keepdims,
                   DefaultValuedAttr<BoolAttr, "false">:$select_last_index);
  let results = (outs AnyRankedTensor:$result);
}

def Kiln_ArgMaxOp : Kiln_ArgReduceOp<"arg_max", "maximum">;
def Kiln_ArgMinOp : Kiln_ArgReduceOp<"arg_min", "minimum">;

def Kiln_CumSumOp : Kiln_Op<"cumsum"> {
  let summary = "running sum along `axis`";
  let description = [{
    `exclusive` leaves each element out of its own sum; `reverse` sums from
    the end of the axis.
    ```mlir
    %s = kiln.cumsum %x {axis = 0 : i64, exclusive = true}
        : (tensor<5xf64>) -> tensor<5xf64>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, I64Attr:$axis,
                   DefaultValuedAttr<BoolAttr, "false">:$exclusive,
                   DefaultValuedAttr<BoolAttr, "false">:$reverse);
  let results = (outs AnyRankedTensor:$result);
}

#endif // KILN_REDUCTION_OPS_TD
