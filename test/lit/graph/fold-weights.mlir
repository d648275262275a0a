// RUN: kiln-opt %s -kiln-fold-weights -split-input-file | FileCheck %s

// A transposed constant becomes a constant with permuted values.
// CHECK-LABEL: func.func @transpose_constant
// CHECK-NOT: kiln.transpose
// CHECK: %[[C:.+]] = kiln.constant dense_resource<transposed> : tensor<3x2xf32>
// CHECK: return %[[C]]
// CHECK: transposed: "0x400000000000803F00008040000000400000A040000040400000C040"
func.func @transpose_constant() -> tensor<3x2xf32> {
  %c = kiln.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %t = kiln.transpose %c {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %t : tensor<3x2xf32>
}

// -----

// A transpose of a run-time value is left alone.
// CHECK-LABEL: func.func @transpose_argument
// CHECK: kiln.transpose
func.func @transpose_argument(%a: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %t = kiln.transpose %a {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %t : tensor<3x2xf32>
}
