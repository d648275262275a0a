//===- ElementwiseOps.td - constants and elementwise ops -*- tablegen -*-===//
#ifndef KILN_ELEMENTWISE_OPS_TD
#define KILN_ELEMENTWISE_OPS_TD

include "dialects/kiln/KilnOpBase.td"

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

def Kiln_ModOp : Kiln_BinaryOp<"mod", "remainder"> {
  let description = [{
    The result takes the divisor's sign (Python `%`) unless `fmod` is set,
    then the dividend's (C `fmod`). ONNX requires `fmod` for floats; both
    rules are defined for every type. Numpy-style broadcasting.

    ```mlir
    %r = kiln.mod %a, %b {fmod = true} : (tensor<6xf32>, tensor<6xf32>) -> tensor<6xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$lhs, AnyRankedTensor:$rhs,
                   DefaultValuedAttr<BoolAttr, "false">:$fmod);
}

// Logical on i1, bitwise on wider integers.
def Kiln_AndOp : Kiln_BinaryOp<"and", "logical/bitwise and", [Commutative]>;
def Kiln_OrOp : Kiln_BinaryOp<"or", "logical/bitwise or", [Commutative]>;
def Kiln_XorOp : Kiln_BinaryOp<"xor", "logical/bitwise xor", [Commutative]>;
// Shifts of unsigned integers; shifting by the bit width or more gives 0.
def Kiln_ShiftLeftOp : Kiln_BinaryOp<"shift_left", "left shift (integers)">;
def Kiln_ShiftRightOp
    : Kiln_BinaryOp<"shift_right", "logical right shift (integers)">;

def Kiln_EqualOp : Kiln_CompareOp<"equal", "==">;
def Kiln_LessOp : Kiln_CompareOp<"less", "<">;
def Kiln_GreaterOp : Kiln_CompareOp<"greater", ">">;
def Kiln_LessEqualOp : Kiln_CompareOp<"less_equal", "<=">;
def Kiln_GreaterEqualOp : Kiln_CompareOp<"greater_equal", ">=">;

def Kiln_SqrtOp : Kiln_UnaryOp<"sqrt", "square root">;
def Kiln_ExpOp : Kiln_UnaryOp<"exp", "exponential">;
def Kiln_LogOp : Kiln_UnaryOp<"log", "natural logarithm">;
def Kiln_NegOp : Kiln_UnaryOp<"neg", "negation"> { let hasFolder = 1; }
def Kiln_AbsOp : Kiln_UnaryOp<"abs", "absolute value">;
def Kiln_ReciprocalOp : Kiln_UnaryOp<"reciprocal", "1/x">;
def Kiln_ReluOp : Kiln_UnaryOp<"relu", "max(x, 0)">;
def Kiln_SigmoidOp : Kiln_UnaryOp<"sigmoid", "1/(1+exp(-x))">;
def Kiln_TanhOp : Kiln_UnaryOp<"tanh", "hyperbolic tangent">;
def Kiln_ErfOp : Kiln_UnaryOp<"erf", "error function">;
def Kiln_NotOp : Kiln_UnaryOp<"not", "logical/bitwise not (integers)">;

// Float-only math; f16/bf16 are computed in f32.
def Kiln_SinOp : Kiln_UnaryOp<"sin", "sine">;
def Kiln_CosOp : Kiln_UnaryOp<"cos", "cosine">;
def Kiln_TanOp : Kiln_UnaryOp<"tan", "tangent">;
def Kiln_AsinOp : Kiln_UnaryOp<"asin", "arcsine">;
def Kiln_AcosOp : Kiln_UnaryOp<"acos", "arccosine">;
def Kiln_AtanOp : Kiln_UnaryOp<"atan", "arctangent">;
def Kiln_SinhOp : Kiln_UnaryOp<"sinh", "hyperbolic sine">;
def Kiln_CoshOp : Kiln_UnaryOp<"cosh", "hyperbolic cosine">;
def Kiln_AsinhOp : Kiln_UnaryOp<"asinh", "inverse hyperbolic sine">;
def Kiln_AcoshOp : Kiln_UnaryOp<"acosh", "inverse hyperbolic cosine">;
def Kiln_AtanhOp : Kiln_UnaryOp<"atanh", "inverse hyperbolic tangent">;
def Kiln_CeilOp : Kiln_UnaryOp<"ceil", "round toward +inf">;
def Kiln_FloorOp : Kiln_UnaryOp<"floor", "round toward -inf">;
def Kiln_RoundOp : Kiln_UnaryOp<"round", "round half to even">;

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

#endif // KILN_ELEMENTWISE_OPS_TD
