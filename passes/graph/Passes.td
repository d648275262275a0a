#ifndef KILN_PASSES_GRAPH_TD
#define KILN_PASSES_GRAPH_TD

include "mlir/Pass/PassBase.td"

def FoldWeights : Pass<"kiln-fold-weights", "ModuleOp"> {
  let summary = "Fold transposes and reshapes of weight constants at compile time";
  let description = [{
    Exporters transpose weights in the graph (Gemm's `transB`, MatMul with a
    transposed parameter). Doing that on every run costs a pass over the
    weights; this pass permutes the raw bytes once at compile time, whether
    the constant is a dense attribute or a dense_resource blob.

    Before:
    ```mlir
    %w = kiln.constant dense_resource<fc.weight> : tensor<1000x512xf32>
    %t = kiln.transpose %w {perm = array<i64: 1, 0>} : (tensor<1000x512xf32>) -> tensor<512x1000xf32>
    ```
    After:
    ```mlir
    %t = kiln.constant dense_resource<fc.weight_t> : tensor<512x1000xf32>
    ```
  }];
  let dependentDialects = ["::mlir::kiln::KilnDialect"];
}

def FoldBatchNorm : Pass<"kiln-fold-batch-norm", "ModuleOp"> {
  let summary = "Fold inference batch normalization into the preceding convolution";
  let description = [{
    `batch_norm(conv(x, W, b))` with constant W, b and statistics becomes
    `conv(x, W', b')` where, per output channel c,
    `s = scale[c] / sqrt(var[c] + eps)`, `W'[c] = W[c] * s` and
    `b'[c] = (b[c] - mean[c]) * s + bias[c]`. Only f32 weights and a conv
    whose only user is the batch norm are folded. Each fold is logged under
    KILN_LOGS=fusion with both ONNX node names.

    Before:
    ```mlir
    %c = kiln.conv %x, %w {...} : (...) -> tensor<1x64x56x56xf32>
    %y = kiln.batch_norm %c, %s, %b, %m, %v {epsilon = 1.0e-05 : f64} : (...) -> tensor<1x64x56x56xf32>
    ```
    After:
    ```mlir
    %y = kiln.conv %x, %w_folded, %b_folded {...} : (...) -> tensor<1x64x56x56xf32>
    ```
  }];
  let dependentDialects = ["::mlir::kiln::KilnDialect"];
}

def MergeContractions : Pass<"kiln-merge-contractions", "ModuleOp"> {
  let summary = "Merge contractions reading the same input into one wider one";
  let description = [{
    Matmuls with the same lhs and constant 2-D weights (Q/K/V projections,
    Gemm after kiln-fold-weights) and 1x1 convolutions (group 1, same
    strides/pads/dilations) with the same input and constant weights and
    biases become one contraction on the concatenated weights (biases
    concatenated too, zeros for a member without one), followed by one
    kiln.slice per original result. The input is then read once and the
    contraction is wider, which is what a tiled microkernel wants.

    Cost model: a group is merged when it has at least two members, every
    weight (and bias) is constant, and no member's output is wider than
    `max-width` columns (matmul) or filters (conv): past that width one
    contraction already fills the machine and merging would only add
    slices. Members are grouped per input value in program order; the merged
    op takes the place of the first and its location fuses all members'
    locations. Each merge, and each candidate left out, is logged under
    KILN_LOGS=fusion with ONNX node names; `contractions_merged` in the
    report counts the original contractions merged (3 for one Q/K/V).

    Before:
    ```mlir
    %q = kiln.matmul %x, %wq : (tensor<128x256xf32>, tensor<256x256xf32>) -> tensor<128x256xf32>
    %k = kiln.matmul %x, %wk : (tensor<128x256xf32>, tensor<256x256xf32>) -> tensor<128x256xf32>
    ```
    After:
    ```mlir
    %w = kiln.constant dense_resource<merged_weight> : tensor<256x512xf32>
    %m = kiln.matmul %x, %w : (tensor<128x256xf32>, tensor<256x512xf32>) -> tensor<128x512xf32>
    %q = kiln.slice %m {starts = array<i64: 0, 0>, ends = array<i64: 128, 256>, steps = array<i64: 1, 1>} : (tensor<128x512xf32>) -> tensor<128x256xf32>
    %k = kiln.slice %m {starts = array<i64: 0, 256>, ends = array<i64: 128, 512>, steps = array<i64: 1, 1>} : (tensor<128x512xf32>) -> tensor<128x256xf32>
    ```
  }];
  let options = [
    Option<"maxWidth", "max-width", "int64_t", /*default=*/"2048",
           "Widest member output (columns or filters) that is merged">
  ];
  let dependentDialects = ["::mlir::kiln::KilnDialect"];
}

#endif // KILN_PASSES_GRAPH_TD
