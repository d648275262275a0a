#ifndef KILN_PASSES_FUSION_TD
#define KILN_PASSES_FUSION_TD

include "mlir/Pass/PassBase.td"

def FuseAttention : Pass<"kiln-fuse-attention", "ModuleOp"> {
  let summary = "Match decomposed attention and replace it with kiln.attention";
  let description = [{
    Exporters spell attention as `MatMul(Softmax(mask(scale(MatMul(q, k^T)))), v)`.
    This pass recognizes, ending at the MatMul with the values:

    - the scale: Div or Mul of the scores by a constant, or q and/or k^T
      multiplied by constants before the product (the
      `scaled_dot_product_attention` export), or none; constants may be
      small expressions of constants (`1/sqrt(sqrt(D))`);
    - the mask: none, `Add` of a float tensor that broadcasts into the
      scores, or `Where(cond, scores, fill)` / `Where(cond, fill, scores)`
      with `fill` -inf or <= -1e9 (boolean masks become `where(cond, 0, fill)`
      in front of kiln.attention); a constant mask that is a lower triangle
      (0/true on and below the diagonal) becomes `causal = true` and is
      dropped;
    - Softmax on the last axis only, and intermediates with no other user;
    - 3-D (bmm) and N-d operands with equal batch dims;
    - torch's SDPA decomposition (`ep.run_decompositions()`): its 3-D bmms
      over the flattened batch and heads, `reshape(bmm(reshape(a),
      reshape(b)))`, become 4-D matmuls first; its guard of the
      probabilities against rows masked everywhere, `where(not(any(s !=
      -inf)), 0, softmax(s))`, is dropped where no row can be (no mask, or
      the causal one), else kept as kiln.attention's `zero_masked_rows`
      (0 on such rows, where the plain softmax gives NaN).

    Layout: kiln.attention takes BHSD operands; transposes that made q and v
    BHSD stay outside (linear-size copies), and the k^T transpose is composed
    with the one before it, so BSHD `transpose(1, 2)` inputs and the
    `[0, 2, 3, 1]` k^T both end as one `[0, 2, 1, 3]` transpose.

    Every candidate (a MatMul reading a Softmax) is logged under
    `KILN_LOGS=fusion` with its ONNX node names: fused, or not and why
    (softmax over another axis, a non-constant scale, a mask that widens the
    scores, ...).

    Before:
    ```mlir
    %kt = kiln.transpose %k {perm = array<i64: 0, 2, 3, 1>} : (tensor<1x16x4x16xf32>) -> tensor<1x4x16x16xf32>
    %s = kiln.matmul %q, %kt : (tensor<1x4x16x16xf32>, tensor<1x4x16x16xf32>) -> tensor<1x4x16x16xf32>
    %c = kiln.constant dense<4.0> : tensor<f32>
    %d = kiln.div %s, %c : (tensor<1x4x16x16xf32>, tensor<f32>) -> tensor<1x4x16x16xf32>
    %a = kiln.add %d, %tril_neg_inf : (tensor<1x4x16x16xf32>, tensor<16x16xf32>) -> tensor<1x4x16x16xf32>
    %p = kiln.softmax %a {axis = 3 : i64} : (tensor<1x4x16x16xf32>) -> tensor<1x4x16x16xf32>
    %o = kiln.matmul %p, %v : (tensor<1x4x16x16xf32>, tensor<1x4x16x16xf32>) -> tensor<1x4x16x16xf32>
    ```
    After:
    ```mlir
    %kb = kiln.transpose %k {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x16x4x16xf32>) -> tensor<1x4x16x16xf32>
    %o = kiln.attention %q, %kb, %v {causal = true, scale = 2.500000e-01 : f64}
        : (tensor<1x4x16x16xf32>, tensor<1x4x16x16xf32>, tensor<1x4x16x16xf32>) -> tensor<1x4x16x16xf32>
    ```
  }];
  let dependentDialects = ["::mlir::kiln::KilnDialect"];
}

def FuseQuantizedMatmul : Pass<"kiln-fuse-quantized-matmul", "ModuleOp"> {
  let summary = "Rewrite dequantized matmuls (ONNX QDQ) as int8 products";
  let description = [{
    Matches `kiln.matmul` of two dequantizations as the importer composes
    DequantizeLinear, `(cast(q) - zero_point) * scale`: the lhs from uint8
    activations with one scale and zero point, the rhs from a constant int8
    [K, N] matrix with zero point 0 and a scale per column (or one). It
    becomes the exact integer product of the bytes, `kiln.quantized_matmul`,
    times one [N] constant `x_scale * w_scale`. Run only for targets with
    int8 dot-product instructions (x86 AVX512-VNNI). Each candidate is
    logged under `KILN_LOGS=fusion` (fused, or not and why); fused ones are
    counted as `int8_kernels`.

    Before:
    ```mlir
    %xf = kiln.cast %xq {to = f32} : (tensor<4x64xui8>) -> tensor<4x64xf32>
    %xc = kiln.sub %xf, %x_zp : (tensor<4x64xf32>, tensor<f32>) -> tensor<4x64xf32>
    %x = kiln.mul %xc, %x_scale : (tensor<4x64xf32>, tensor<f32>) -> tensor<4x64xf32>
    %wf = kiln.cast %wq {to = f32} : (tensor<64x32xi8>) -> tensor<64x32xf32>
    %w = kiln.mul %wf, %w_scale : (tensor<64x32xf32>, tensor<1x32xf32>) -> tensor<64x32xf32>
    %y = kiln.matmul %x, %w : (tensor<4x64xf32>, tensor<64x32xf32>) -> tensor<4x32xf32>
    ```
    After:
    ```mlir
    %p = kiln.quantized_matmul %xq, %wq {lhs_zero_point = 128 : i64}
        : (tensor<4x64xui8>, tensor<64x32xi8>) -> tensor<4x32xf32>
    %s = kiln.constant dense<[...]> : tensor<32xf32>
    %y = kiln.mul %p, %s : (tensor<4x32xf32>, tensor<32xf32>) -> tensor<4x32xf32>
    ```
  }];
  let dependentDialects = ["::mlir::kiln::KilnDialect"];
}

def FuseQuantizedConv : Pass<"kiln-fuse-quantized-conv", "ModuleOp"> {
  let summary = "Rewrite dequantized convolutions (ONNX QDQ) as int8 ones";
  let description = [{
    Matches a 2-D NCHW `kiln.conv` of group 1 between two dequantizations
    as the importer composes DequantizeLinear, `(cast(q) - zero_point) *
    scale`: the input from uint8 activations with one scale and zero point,
    the weight from a constant int8 [F, C, KH, KW] tensor with zero point 0
    and a scale per filter (or one), C a multiple of 4. It becomes the
    exact integer convolution of the bytes (`kiln.conv` with
    `input_zero_point`), times one [F, 1, 1] constant `x_scale * w_scale`,
    plus the bias. Run only for targets with int8 dot-product instructions
    (x86 AVX512-VNNI). Each candidate is logged under `KILN_LOGS=fusion`
    (fused, or not and why); fused ones are counted as `int8_kernels`.

    Before:
    ```mlir
    %xf = kiln.cast %xq {to = f32} : (tensor<1x8x6x6xui8>) -> tensor<1x8x6x6xf32>
    %xc = kiln.sub %xf, %x_zp : (tensor<1x8x6x6xf32>, tensor<f32>) -> tensor<1x8x6x6xf32>
    %x = kiln.mul %xc, %x_scale : (tensor<1x8x6x6xf32>, tensor<f32>) -> tensor<1x8x6x6xf32>
    %wf = kiln.cast %wq {to = f32} : (tensor<4x8x3x3xi8>) -> tensor<4x8x3x3xf32>
    %w = kiln.mul %wf, %w_scale : (tensor<4x8x3x3xf32>, tensor<4x1x1x1xf32>) -> tensor<4x8x3x3xf32>
    %y = kiln.conv %x, %w, %b {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>,
                               strides = array<i64: 1, 1>}
        : (tensor<1x8x6x6xf32>, tensor<4x8x3x3xf32>, tensor<4xf32>) -> tensor<1x4x6x6xf32>
    ```
    After:
    ```mlir
    %p = kiln.conv %xq, %wq {dilations = array<i64: 1, 1>, input_zero_point = 128 : i64,
                             pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>}
        : (tensor<1x8x6x6xui8>, tensor<4x8x3x3xi8>) -> tensor<1x4x6x6xf32>
    %s = kiln.constant dense<[...]> : tensor<4x1x1xf32>
    %m = kiln.mul %p, %s : (tensor<1x4x6x6xf32>, tensor<4x1x1xf32>) -> tensor<1x4x6x6xf32>
    %c = kiln.reshape %b {shape = array<i64: 4, 1, 1>} : (tensor<4xf32>) -> tensor<4x1x1xf32>
    %y = kiln.add %m, %c : (tensor<1x4x6x6xf32>, tensor<4x1x1xf32>) -> tensor<1x4x6x6xf32>
    ```
  }];
  let dependentDialects = ["::mlir::kiln::KilnDialect"];
}

def FuseNormalization : Pass<"kiln-fuse-normalization", "ModuleOp"> {
  let summary = "Match decomposed layer norms and softmaxes";
  let description = [{
    Rewrites the chains exporters emit below opset 17 (and hand-written
    modules) into one op each, which the lowering turns into a row kernel:

    - layer norm: `d = x - mean(x)`, `d / sqrt(mean(d^2) + eps)` (the square
      as Pow by 2 or d * d, the division as Div or Mul by Reciprocal), over
      a run of trailing axes with keepdims, then optionally `* weight` and
      `+ bias` when those broadcast along the normalized dims only;
    - softmax: `exp(x - max(x)) / sum(...)` or `exp(x) / sum(exp(x))` over
      one axis with keepdims (the unshifted form becomes the stable one).

    Every intermediate must have no other user. Counted as `norms_fused`;
    each decision is logged under `KILN_LOGS=fusion` with the ONNX node names.

    Before:
    ```mlir
    %m = kiln.reduce_mean %x {axes = array<i64: 1>} : (tensor<4x40xf32>) -> tensor<4x1xf32>
    %d = kiln.sub %x, %m : (tensor<4x40xf32>, tensor<4x1xf32>) -> tensor<4x40xf32>
    %p = kiln.pow %d, %two : (tensor<4x40xf32>, tensor<f32>) -> tensor<4x40xf32>
    %v = kiln.reduce_mean %p {axes = array<i64: 1>} : (tensor<4x40xf32>) -> tensor<4x1xf32>
    %e = kiln.add %v, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
    %s = kiln.sqrt %e : (tensor<4x1xf32>) -> tensor<4x1xf32>
    %n = kiln.div %d, %s : (tensor<4x40xf32>, tensor<4x1xf32>) -> tensor<4x40xf32>
    %w = kiln.mul %n, %g : (tensor<4x40xf32>, tensor<40xf32>) -> tensor<4x40xf32>
    %y = kiln.add %w, %b : (tensor<4x40xf32>, tensor<40xf32>) -> tensor<4x40xf32>
    ```
    After:
    ```mlir
    %y = kiln.layer_norm %x, %g, %b {axis = 1 : i64, epsilon = 9.9999997473787516E-6 : f64}
        : (tensor<4x40xf32>, tensor<40xf32>, tensor<40xf32>) -> tensor<4x40xf32>
    ```
  }];
  let dependentDialects = ["::mlir::kiln::KilnDialect"];
}

#endif // KILN_PASSES_FUSION_TD
