#ifndef KILN_OPS_TD
#define KILN_OPS_TD

include "dialects/kiln/KilnDialect.td"
include "mlir/IR/OpBase.td"
include "mlir/IR/CommonAttrConstraints.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// Base classes
//===----------------------------------------------------------------------===//

class Kiln_Op<string mnemonic, list<Trait> traits = []>
    : Op<Kiln_Dialect, mnemonic, !listconcat(traits, [Pure, InferTypeOpAdaptor])> {
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

// Elementwise with numpy-style (ONNX multidirectional) broadcasting.
class Kiln_BinaryOp<string mnemonic, string what, list<Trait> traits = []>
    : Kiln_Op<mnemonic, traits> {
  let summary = "elementwise " # what # " with broadcasting";
  let description = [{
    Numpy-style broadcasting: shapes are aligned on the right, and each pair
    of dimensions must be equal or one of them 1.

    ```mlir
    %r = kiln.}] # mnemonic # [{ %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$lhs, AnyRankedTensor:$rhs);
  let results = (outs AnyRankedTensor:$result);
  let hasFolder = 1;
}

// Comparison: like a binary op, with an i1 result.
class Kiln_CompareOp<string mnemonic, string what> : Kiln_Op<mnemonic> {
  let summary = "elementwise " # what # " comparison with broadcasting, i1 result";
  let description = [{
    ```mlir
    %r = kiln.}] # mnemonic # [{ %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$lhs, AnyRankedTensor:$rhs);
  let results = (outs AnyRankedTensor:$result);
  let hasFolder = 1;
}

class Kiln_UnaryOp<string mnemonic, string what, list<Trait> traits = []>
    : Kiln_Op<mnemonic, traits> {
  let summary = "elementwise " # what;
  let description = [{
    ```mlir
    %r = kiln.}] # mnemonic # [{ %x : (tensor<8xf32>) -> tensor<8xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input);
  let results = (outs AnyRankedTensor:$result);
}

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

def Kiln_ConstantOp : Op<Kiln_Dialect, "constant",
    [ConstantLike, Pure, InferTypeOpAdaptor]> {
  let summary = "a constant tensor (weights are dense_resource blobs)";
  let description = [{
    ```mlir
    %w = kiln.constant dense<1.0> : tensor<4xf32>
    %b = kiln.constant dense_resource<conv1.weight> : tensor<64x3x7x7xf32>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "attr-dict $value";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

def Kiln_AddOp : Kiln_BinaryOp<"add", "addition", [Commutative]>;
def Kiln_SubOp : Kiln_BinaryOp<"sub", "subtraction">;
def Kiln_MulOp : Kiln_BinaryOp<"mul", "multiplication", [Commutative]>;
def Kiln_DivOp : Kiln_BinaryOp<"div", "division (integer: truncating)">;
def Kiln_PowOp : Kiln_BinaryOp<"pow", "power">;
def Kiln_MaxOp : Kiln_BinaryOp<"max", "maximum", [Commutative]>;
def Kiln_MinOp : Kiln_BinaryOp<"min", "minimum", [Commutative]>;

def Kiln_EqualOp : Kiln_CompareOp<"equal", "==">;
def Kiln_LessOp : Kiln_CompareOp<"less", "<">;
def Kiln_GreaterOp : Kiln_CompareOp<"greater", ">">;

def Kiln_SqrtOp : Kiln_UnaryOp<"sqrt", "square root">;
def Kiln_ExpOp : Kiln_UnaryOp<"exp", "exponential">;
def Kiln_LogOp : Kiln_UnaryOp<"log", "natural logarithm">;
def Kiln_NegOp : Kiln_UnaryOp<"neg", "negation">;
def Kiln_AbsOp : Kiln_UnaryOp<"abs", "absolute value">;
def Kiln_ReciprocalOp : Kiln_UnaryOp<"reciprocal", "1/x">;
def Kiln_ReluOp : Kiln_UnaryOp<"relu", "max(x, 0)">;
def Kiln_SigmoidOp : Kiln_UnaryOp<"sigmoid", "1/(1+exp(-x))">;
def Kiln_TanhOp : Kiln_UnaryOp<"tanh", "hyperbolic tangent">;
def Kiln_ErfOp : Kiln_UnaryOp<"erf", "error function">;

def Kiln_LeakyReluOp : Kiln_UnaryOp<"leaky_relu", "x < 0 ? alpha*x : x"> {
  let arguments = (ins AnyRankedTensor:$input,
                   DefaultValuedAttr<F64Attr, "0.01">:$alpha);
}

def Kiln_GeluOp : Kiln_UnaryOp<"gelu", "GELU: x*Φ(x), exact (erf) or tanh form"> {
  let arguments = (ins AnyRankedTensor:$input,
                   DefaultValuedAttr<BoolAttr, "false">:$tanh_approximation);
}

def Kiln_ClipOp : Kiln_UnaryOp<"clip", "clamp to [min, max] (either optional)"> {
  let arguments = (ins AnyRankedTensor:$input,
                   OptionalAttr<F64Attr>:$min, OptionalAttr<F64Attr>:$max);
}

def Kiln_CastOp : Kiln_Op<"cast"> {
  let summary = "elementwise conversion to another element type";
  let description = [{
    Float to integer truncates toward zero; anything to i1 is `x != 0`.
    ```mlir
    %r = kiln.cast %x {to = i64} : (tensor<4xf32>) -> tensor<4xi64>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, TypeAttr:$to);
  let results = (outs AnyRankedTensor:$result);
  let hasFolder = 1;
}

def Kiln_WhereOp : Kiln_Op<"where"> {
  let summary = "elementwise select with broadcasting: cond ? x : y";
  let description = [{
    ```mlir
    %r = kiln.where %c, %x, %y : (tensor<4x4xi1>, tensor<f32>, tensor<4x4xf32>) -> tensor<4x4xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$condition, AnyRankedTensor:$x,
                   AnyRankedTensor:$y);
  let results = (outs AnyRankedTensor:$result);
  let hasFolder = 1;
}

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
  }];
  let arguments = (ins AnyRankedTensor:$input, AnyRankedTensor:$weight,
                   Optional<AnyRankedTensor>:$bias, DenseI64ArrayAttr:$strides,
                   DenseI64ArrayAttr:$pads, DenseI64ArrayAttr:$dilations,
                   DefaultValuedAttr<I64Attr, "1">:$group);
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
    ```mlir
    %y = kiln.max_pool %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>,
                           pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>}
        : (tensor<1x64x112x112xf32>) -> tensor<1x64x56x56xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, DenseI64ArrayAttr:$kernel_shape,
                   DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                   DenseI64ArrayAttr:$dilations,
                   DefaultValuedAttr<BoolAttr, "false">:$ceil_mode);
  let results = (outs AnyRankedTensor:$result);
}

def Kiln_AvgPoolOp : Kiln_Op<"avg_pool"> {
  let summary = "N-d average pooling over the spatial dims of NC[D]HW";
  let description = [{
    The divisor counts padded positions only with `count_include_pad`
    (positions past the input added by `ceil_mode` are never counted).
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
                   DefaultValuedAttr<BoolAttr, "false">:$count_include_pad);
  let results = (outs AnyRankedTensor:$result);
}

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

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

def Kiln_ReshapeOp : Kiln_Op<"reshape"> {
  let summary = "reinterpret a row-major tensor with another static shape";
  let description = [{
    `shape` is fully resolved (no 0 or -1). Flatten, Squeeze and Unsqueeze
    import as reshapes.
    ```mlir
    %y = kiln.reshape %x {shape = array<i64: 1, 512>} : (tensor<1x512x1x1xf32>) -> tensor<1x512xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, DenseI64ArrayAttr:$shape);
  let results = (outs AnyRankedTensor:$result);
  let hasFolder = 1;
}

def Kiln_TransposeOp : Kiln_Op<"transpose"> {
  let summary = "permute dims: result dim i is input dim perm[i]";
  let description = [{
    ```mlir
    %y = kiln.transpose %x {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x128x12x64xf32>) -> tensor<1x12x128x64xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, DenseI64ArrayAttr:$perm);
  let results = (outs AnyRankedTensor:$result);
  let hasFolder = 1;
}

def Kiln_ConcatOp : Kiln_Op<"concat"> {
  let summary = "concatenate along `axis` (non-negative)";
  let description = [{
    ```mlir
    %y = kiln.concat %a, %b {axis = 1 : i64} : (tensor<1x64x28x28xf32>, tensor<1x32x28x28xf32>) -> tensor<1x96x28x28xf32>
    ```
  }];
  let arguments = (ins Variadic<AnyRankedTensor>:$inputs, I64Attr:$axis);
  let results = (outs AnyRankedTensor:$result);
  let hasFolder = 1;
}

def Kiln_SliceOp : Kiln_Op<"slice"> {
  let summary = "strided slice with one normalized (start, end, step) per dim";
  let description = [{
    Bounds are resolved and clamped by the importer: for a positive step
    `0 <= start <= end <= dim`; for a negative step `-1 <= end <= start < dim`.
    The result has `max(0, ceil((end - start) / step))` elements per dim.
    ```mlir
    %y = kiln.slice %x {starts = array<i64: 0, 1>, ends = array<i64: 2, 3>, steps = array<i64: 1, 1>}
        : (tensor<2x4xf32>) -> tensor<2x2xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, DenseI64ArrayAttr:$starts,
                   DenseI64ArrayAttr:$ends, DenseI64ArrayAttr:$steps);
  let results = (outs AnyRankedTensor:$result);
  let hasFolder = 1;
}

def Kiln_GatherOp : Kiln_Op<"gather"> {
  let summary = "ONNX Gather: index `axis` of data with an integer tensor";
  let description = [{
    Result shape is `data[:axis] + indices + data[axis+1:]`. Negative indices
    count from the end; out-of-range indices are clamped.
    ```mlir
    %e = kiln.gather %table, %ids {axis = 0 : i64} : (tensor<1000x64xf32>, tensor<1x16xi64>) -> tensor<1x16x64xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$data, AnyRankedTensor:$indices,
                   I64Attr:$axis);
  let results = (outs AnyRankedTensor:$result);
  let hasFolder = 1;
}

def Kiln_ExpandOp : Kiln_Op<"expand"> {
  let summary = "broadcast to a static shape (numpy rules)";
  let description = [{
    `shape` is the result shape, already broadcast with the input's.
    ```mlir
    %y = kiln.expand %x {shape = array<i64: 4, 3>} : (tensor<1x3xf32>) -> tensor<4x3xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, DenseI64ArrayAttr:$shape);
  let results = (outs AnyRankedTensor:$result);
  let hasFolder = 1;
}

#endif // KILN_OPS_TD
