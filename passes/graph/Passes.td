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

def FoldDequantizedWeights : Pass<"kiln-fold-dequantized-weights", "ModuleOp"> {
  let summary = "Dequantize constant int8 weights (ONNX QDQ) at compile time";
  let description = [{
    `(cast(q) - zero_point) * scale` with q an integer constant and constant
    zero point and scale (per tensor or per axis, broadcast as the ops do) is
    the f32 weight a DequantizeLinear of a QDQ model produces; computed once
    from the raw bytes instead of on every run, it also lets the weight
    transposes of Gemm and kiln-conv-layout fold. Runs after
    kiln-fuse-quantized-matmul, which consumes the bytes where it can.

    Before:
    ```mlir
    %q = kiln.constant dense_resource<w_quantized> : tensor<64x3x7x7xi8>
    %f = kiln.cast %q {to = f32} : (tensor<64x3x7x7xi8>) -> tensor<64x3x7x7xf32>
    %s = kiln.constant dense_resource<w_scale> : tensor<64x1x1x1xf32>
    %w = kiln.mul %f, %s : (tensor<64x3x7x7xf32>, tensor<64x1x1x1xf32>) -> tensor<64x3x7x7xf32>
    ```
    After:
    ```mlir
    %w = kiln.constant dense_resource<dequantized> : tensor<64x3x7x7xf32>
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
    KILN_LOGS=fusion with both ONNX node names. A batch norm with constant
    f32 parameters and no conv to fold into becomes `x * a + b` with
    per-channel constants `a = s`, `b = bias - mean * s` of shape
    `[C, 1, ..., 1]`: elementwise ops that fuse with their neighbours
    (epilogues) and that kiln-sink-transposes moves layout conversions
    through.

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

def ConvLayout : Pass<"kiln-conv-layout", "ModuleOp"> {
  let summary = "Choose NHWC for chains of 2-D convolutions; convert at their boundaries";
  let description = [{
    Analysis: the function's ops are grouped into chains, connected
    components of 2-D convolutions and the ops a layout conversion can move
    through (elementwise ops whose operands are rank 4 or constants, concat,
    slice, keepdims reductions, 2-D pools). Choice, with `layout=auto`: a
    chain with at least one static f32 convolution goes NHWC when its
    convolution FLOPs (2 * N * OH * OW * F * C/group * KH * KW each) are at
    least `flops-per-byte` times the bytes its boundary conversions move
    (each value entering or leaving the chain is read and written once by a
    transpose: 2 * its bytes). The default 320 is a CPU moving about 32
    FLOPs' worth of time per transposed byte, against an expected gain of 10%
    of the convolution time from channels-last kernels: tiny chains (one
    small conv) and chains of non-f32 convolutions stay NCHW. A chain with
    an int8 convolution (`kiln.conv` with `input_zero_point`) always goes
    NHWC: the CPU's VNNI kernel for it is NHWC only. So does a chain with an
    f32 convolution over a run-time height or width: the channels-last
    kernels take images of any size, while in NCHW such a convolution is an
    im2col matmul between two transposes (a depthwise one a scalar loop
    nest); in the cost figures a run-time extent counts as 1.
    `layout=nhwc` converts every 2-D convolution and pool, `layout=nchw`
    none. Only static channels are converted; an int8 convolution over a
    run-time height or width is not (its kernel takes static images).
    Every decision is logged under KILN_LOGS=layout with the ONNX node
    names.

    Conversions: each chosen conv and pool gets `channels_last`, a
    `kiln.transpose` to NHWC before and one back to NCHW after (both marked
    `kiln.layout_conversion`), and a conv's FCHW weight a transpose to HWCF
    (folded at compile time by kiln-fold-weights). kiln-sink-transposes then
    removes the conversions that cancel.

    Before:
    ```mlir
    %y = kiln.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>}
        : (tensor<1x64x56x56xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x56x56xf32>
    ```
    After:
    ```mlir
    %t = kiln.transpose %x {kiln.layout_conversion, perm = array<i64: 0, 2, 3, 1>} : (tensor<1x64x56x56xf32>) -> tensor<1x56x56x64xf32>
    %wt = kiln.transpose %w {perm = array<i64: 2, 3, 1, 0>} : (tensor<64x64x3x3xf32>) -> tensor<3x3x64x64xf32>
    %c = kiln.conv %t, %wt {channels_last, dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>}
        : (tensor<1x56x56x64xf32>, tensor<3x3x64x64xf32>) -> tensor<1x56x56x64xf32>
    %y = kiln.transpose %c {kiln.layout_conversion, perm = array<i64: 0, 3, 1, 2>} : (tensor<1x56x56x64xf32>) -> tensor<1x64x56x56xf32>
    ```
  }];
  let options = [
    Option<"layout", "layout", "std::string", /*default=*/"\"auto\"",
           "auto (cost model), nchw (no change) or nhwc (every 2-D conv and pool)">,
    Option<"flopsPerByte", "flops-per-byte", "int64_t", /*default=*/"320",
           "auto: conv FLOPs a chain needs per byte its conversions move">
  ];
  let dependentDialects = ["::mlir::kiln::KilnDialect"];
}

def SinkTransposes : Pass<"kiln-sink-transposes", "ModuleOp"> {
  let summary = "Move layout conversions toward the outputs and cancel them";
  let description = [{
    Works on the transposes kiln-conv-layout marked `kiln.layout_conversion`
    (other transposes are left alone). A marked transpose moves below the op
    that reads it when every op reading it can take it: unary elementwise
    ops and casts; binary elementwise ops whose other operands are marked
    transposes with the same permutation or constants (a constant is
    reshaped to full rank and transposed the inverse way, which
    kiln-fold-weights folds at compile time) or, for conversions back to
    NCHW, values that already have a conversion to NHWC (a residual block's
    input, read by its first conv and by its add: the add reads that
    conversion); concat (axis remapped; the same reuse); slice
    (bounds permuted); keepdims reductions (axes remapped); NCHW 2-D pools
    reading an NHWC -> NCHW conversion (they become `channels_last`). Two
    transposes in a row compose, and vanish when the composition is the
    identity. `layout_conversions` in the report counts the marked
    transposes left; each cancellation is logged under KILN_LOGS=+layout.

    Before:
    ```mlir
    %a = kiln.transpose %c {kiln.layout_conversion, perm = array<i64: 0, 3, 1, 2>} : (tensor<1x8x8x16xf32>) -> tensor<1x16x8x8xf32>
    %r = kiln.relu %a : (tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32>
    %b = kiln.transpose %r {kiln.layout_conversion, perm = array<i64: 0, 2, 3, 1>} : (tensor<1x16x8x8xf32>) -> tensor<1x8x8x16xf32>
    ```
    After:
    ```mlir
    %b = kiln.relu %c : (tensor<1x8x8x16xf32>) -> tensor<1x8x8x16xf32>
    ```
  }];
  let dependentDialects = ["::mlir::kiln::KilnDialect"];
}

#endif // KILN_PASSES_GRAPH_TD
