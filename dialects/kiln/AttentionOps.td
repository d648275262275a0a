//===- AttentionOps.td - fused attention -*- tablegen -*-===//
#ifndef KILN_ATTENTION_OPS_TD
#define KILN_ATTENTION_OPS_TD

include "dialects/kiln/KilnOpBase.td"

def Kiln_AttentionOp : Kiln_Op<"attention"> {
  let summary = "scaled dot-product attention: softmax(q k^T * scale + mask) v";
  let description = [{
    `q` is `[B..., Sq, D]`, `k` is `[B..., Sk, D]` and `v` is `[B..., Sk, Dv]`
    (the same batch dims, no broadcasting); the result is `[B..., Sq, Dv]`.
    Operands are in "BHSD" order: `kiln-fuse-attention` leaves the
    transposes of other layouts outside the op, where they are plain copies
    linear in the sequence length.

    The optional `mask` is additive and has the element type of `q`: it is
    added to the scaled scores and must broadcast (numpy rules) to
    `[B..., Sq, Sk]` without changing that shape. A boolean keep-mask is
    written as `kiln.where %keep, 0, -inf` in front of the op, so one
    lowering serves both. `-inf` entries mask a key out.

    `causal` masks key `j` out of query row `i` when `j > i` (aligned at the
    top left, as `torch.nn.functional.scaled_dot_product_attention`); it is
    applied on top of `mask` and needs no tensor, so the lowering can skip
    key blocks that are masked out entirely.

    The softmax runs over the keys; its statistics are kept in f32 for
    f16/bf16 operands. A query row whose keys are all masked out gives NaN
    (0/0, as the softmax it replaces), or 0 with `zero_masked_rows` (torch's
    SDPA decomposition guards its softmax so; the CPU lowering and the GPU
    flash kernels both give 0).

    ```mlir
    %o = kiln.attention %q, %k, %v {causal = true, scale = 1.250000e-01 : f64}
        : (tensor<1x12x128x64xf32>, tensor<1x12x128x64xf32>, tensor<1x12x128x64xf32>) -> tensor<1x12x128x64xf32>
    %m = kiln.attention %q, %k, %v, %mask {causal = false, scale = 1.250000e-01 : f64}
        : (tensor<2x4x16x8xf32>, tensor<2x4x32x8xf32>, tensor<2x4x32x8xf32>, tensor<2x1x1x32xf32>) -> tensor<2x4x16x8xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$query, AnyRankedTensor:$key,
                   AnyRankedTensor:$value, Optional<AnyRankedTensor>:$mask,
                   F64Attr:$scale,
                   DefaultValuedAttr<BoolAttr, "false">:$causal,
                   UnitAttr:$zero_masked_rows);
  let results = (outs AnyRankedTensor:$result);
}

#endif // KILN_ATTENTION_OPS_TD
