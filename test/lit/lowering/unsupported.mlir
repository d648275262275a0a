// RUN: kiln-opt %s -kiln-lower-to-linalg -split-input-file -verify-diagnostics

// Ops whose semantics need floats fail cleanly on integers: the pass reports
// the op and fails, it never emits wrong code.
func.func @sqrt_int(%x: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{failed to legalize operation 'kiln.sqrt'}}
  %0 = kiln.sqrt %x : (tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

func.func @avg_pool_int(%x: tensor<1x1x4x4xi8>) -> tensor<1x1x2x2xi8> {
  // expected-error @+1 {{failed to legalize operation 'kiln.avg_pool'}}
  %0 = kiln.avg_pool %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x1x4x4xi8>) -> tensor<1x1x2x2xi8>
  return %0 : tensor<1x1x2x2xi8>
}

// -----

func.func @softmax_int(%x: tensor<2x3xi32>) -> tensor<2x3xi32> {
  // expected-error @+1 {{failed to legalize operation 'kiln.softmax'}}
  %0 = kiln.softmax %x {axis = 1 : i64} : (tensor<2x3xi32>) -> tensor<2x3xi32>
  return %0 : tensor<2x3xi32>
}
