// RUN: kiln-opt %s -split-input-file -verify-diagnostics

// Logical ops need integer (bool) operands.
func.func @f(%a: tensor<3xf32>) {
  // expected-error @+2 {{needs integer operands}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.and %a, %a : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return
}

// -----

// Trigonometry is float-only.
func.func @f(%a: tensor<3xi32>) {
  // expected-error @+2 {{needs a float operand}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.sin %a : (tensor<3xi32>) -> tensor<3xi32>
  return
}

// -----

func.func @f(%a: tensor<3x4xf32>) {
  // expected-error @+2 {{axis 2 out of range for rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.arg_max %a {axis = 2 : i64} : (tensor<3x4xf32>) -> tensor<3x1xi64>
  return
}

// -----

func.func @f(%a: tensor<3x4xf32>) {
  // expected-error @+2 {{axis -1 out of range for rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.cumsum %a {axis = -1 : i64} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  return
}
