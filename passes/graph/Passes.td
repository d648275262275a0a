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

#endif // KILN_PASSES_GRAPH_TD
