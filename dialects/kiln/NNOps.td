//===- NNOps.td - normalization, contractions, pooling -*- tablegen -*-===//
#ifndef KILN_NN_OPS_TD
#define KILN_NN_OPS_TD

include "dialects/kiln/KilnOpBase.td"

//===----------------------------------------------------------------------===//
// Normalization and softmax
//===----------------------------------------------------------------------===//

def Kiln_SoftmaxOp : Kiln_Op<"softmax"> {
  let summary = "softmax along one axis (non-negative, normalized)";
  let description = [{
    ```mlir
    %p = kiln.softmax %s {axis = 3 : i64} : (tensor<1x12x64x64xf32>) -> tensor<1x12x64x64xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, I64Attr:$axis);
  let results = (outs AnyRankedTensor:$result);
  let hasVerifier = 1;
}

def Kiln_LogSoftmaxOp : Kiln_Op<"log_softmax"> {
  let summary = "log of softmax along one axis";
  let description = [{
    ```mlir
    %p = kiln.log_softmax %s {axis = 1 : i64} : (tensor<2x10xf32>) -> tensor<2x10xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, I64Attr:$axis);
  let results = (outs AnyRankedTensor:$result);
  let hasVerifier = 1;
}

def Kiln_BatchNormOp : Kiln_Op<"batch_norm"> {
  let summary = "inference batch normalization over axis 1";
  let description = [{
    `(x - mean) / sqrt(var + epsilon) * scale + bias`, per channel (axis 1).
    ```mlir
    %y = kiln.batch_norm %x, %scale, %bias, %mean, %var {epsilon = 1.0e-05 : f64}
        : (tensor<1x64x56x56xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<1x64x56x56xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, AnyRankedTensor:$scale,
                   AnyRankedTensor:$bias, AnyRankedTensor:$mean,
                   AnyRankedTensor:$variance,
                   DefaultValuedAttr<F64Attr, "1e-5">:$epsilon);
  let results = (outs AnyRankedTensor:$result);
}

def Kiln_LayerNormOp : Kiln_Op<"layer_norm"> {
  let summary = "layer normalization over the dims from `axis` on";
  let description = [{
    Mean and variance over dims [axis, rank); then `* scale (+ bias)`, both
    broadcast to the normalized dims.
    ```mlir
    %y = kiln.layer_norm %x, %g, %b {axis = 2 : i64, epsilon = 1.0e-05 : f64}
        : (tensor<1x128x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<1x128x768xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, AnyRankedTensor:$scale,
                   Optional<AnyRankedTensor>:$bias, I64Attr:$axis,
                   DefaultValuedAttr<F64Attr, "1e-5">:$epsilon);
  let results = (outs AnyRankedTensor:$result);
}

//===----------------------------------------------------------------------===//
// Contractions
//===----------------------------------------------------------------------===//

def Kiln_MatMulOp : Kiln_Op<"matmul"> {
  let summary = "batched matrix product with broadcast batch dims";
  let description = [{
    Both operands have rank >= 2 (the importer reshapes ONNX's 1-D cases).
    Batch dims (all but the last two) broadcast numpy-style.
    ```mlir
    %c = kiln.matmul %a, %b : (tensor<2x12x64x32xf32>, tensor<32x64xf32>) -> tensor<2x12x64x64xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$lhs, AnyRankedTensor:$rhs);
  let results = (outs AnyRankedTensor:$result);
}

def Kiln_QuantizedMatMulOp : Kiln_Op<"quantized_matmul"> {
  let summary = "8-bit integer matrix product, exact, as f32";
  let description = [{
    `sum_k (lhs[..., m, k] - lhs_zero_point) * rhs[k, n]` computed exactly
    in integers and returned as f32: the integer core of a dequantized
    matmul, `DQ(x_q) @ DQ(w_q)`, with the scales applied by whatever
    consumes it (kiln-fuse-quantized-matmul writes a `kiln.mul` by
    `x_scale * w_scale[n]`). `lhs` is uint8 or int8 (leading dims are rows),
    `rhs` a 2-D int8 (the weights, symmetric: zero point 0).
    ```mlir
    %y = kiln.quantized_matmul %xq, %wq {lhs_zero_point = 128 : i64}
        : (tensor<1x128x768xui8>, tensor<768x3072xi8>) -> tensor<1x128x3072xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$lhs, AnyRankedTensor:$rhs,
                       I64Attr:$lhs_zero_point);
  let results = (outs AnyRankedTensor:$result);
}

def Kiln_ConvOp : Kiln_Op<"conv"> {
  let summary = "N-d grouped convolution, NC[D]HW input, FC[D]HW weights";
  let description = [{
    Pads are explicit (`auto_pad` is resolved by the importer): the first
    half are the leading pads per spatial dim, the second half trailing.
    ```mlir
    %y = kiln.conv %x, %w, %b {dilations = array<i64: 1, 1>, group = 1 : i64,
                               pads = array<i64: 3, 3, 3, 3>, strides = array<i64: 2, 2>}
        : (tensor<1x3x224x224xf32>, tensor<64x3x7x7xf32>, tensor<64xf32>) -> tensor<1x64x112x112xf32>
    ```
    With `channels_last` (2-D only, set by kiln-conv-layout) the input and
    result are NHWC and the weight is HWCF: `[KH, KW, C/group, F]`, the
    filter layout of `linalg.conv_2d_nhwc_hwcf`. The pass writes the weight
    as a `kiln.transpose` of the FCHW one, which kiln-fold-weights folds at
    compile time.
    ```mlir
    %y = kiln.conv %x, %w {channels_last, dilations = array<i64: 1, 1>, group = 1 : i64,
                           pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>}
        : (tensor<1x56x56x64xf32>, tensor<3x3x64x64xf32>) -> tensor<1x56x56x64xf32>
    ```
    With `input_zero_point` (2-D, group 1, no bias; written by
    kiln-fuse-quantized-conv) the convolution is the integer core of a
    dequantized one, `conv(DQ(x_q), DQ(w_q))`: the input is uint8 or int8,
    the weight int8 (symmetric, zero point 0), and the f32 result is
    `sum (x - input_zero_point) * w`, each product exact; padding reads as
    the zero point (a dequantized zero). The scales are applied by the
    result's consumer.
    ```mlir
    %y = kiln.conv %xq, %wq {dilations = array<i64: 1, 1>, input_zero_point = 128 : i64,
                             pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>}
        : (tensor<1x64x56x56xui8>, tensor<64x64x3x3xi8>) -> tensor<1x64x56x56xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, AnyRankedTensor:$weight,
                   Optional<AnyRankedTensor>:$bias, DenseI64ArrayAttr:$strides,
                   DenseI64ArrayAttr:$pads, DenseI64ArrayAttr:$dilations,
                   DefaultValuedAttr<I64Attr, "1">:$group,
                   UnitAttr:$channels_last,
                   OptionalAttr<I64Attr>:$input_zero_point);
  let results = (outs AnyRankedTensor:$result);
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

def Kiln_MaxPoolOp : Kiln_Op<"max_pool"> {
  let summary = "N-d max pooling over the spatial dims of NC[D]HW";
  let description = [{
    Padding never wins (it counts as -inf). With `ceil_mode` the output size
    rounds up; windows that start in the trailing pad are dropped as in ONNX.
    With `channels_last` (2-D only) input and result are NHWC.
    ```mlir
    %y = kiln.max_pool %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>,
                           pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>}
        : (tensor<1x64x112x112xf32>) -> tensor<1x64x56x56xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, DenseI64ArrayAttr:$kernel_shape,
                   DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                   DenseI64ArrayAttr:$dilations,
                   DefaultValuedAttr<BoolAttr, "false">:$ceil_mode,
                   UnitAttr:$channels_last);
  let results = (outs AnyRankedTensor:$result);
}

def Kiln_AvgPoolOp : Kiln_Op<"avg_pool"> {
  let summary = "N-d average pooling over the spatial dims of NC[D]HW";
  let description = [{
    The divisor counts padded positions only with `count_include_pad`
    (positions past the input added by `ceil_mode` are never counted).
    With `channels_last` (2-D only) input and result are NHWC.
    ```mlir
    %y = kiln.avg_pool %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>,
                           pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>}
        : (tensor<1x8x4x4xf32>) -> tensor<1x8x2x2xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, DenseI64ArrayAttr:$kernel_shape,
                   DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                   DenseI64ArrayAttr:$dilations,
                   DefaultValuedAttr<BoolAttr, "false">:$ceil_mode,
                   DefaultValuedAttr<BoolAttr, "false">:$count_include_pad,
                   UnitAttr:$channels_last);
  let results = (outs AnyRankedTensor:$result);
}

#endif // KILN_NN_OPS_TD
