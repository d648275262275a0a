// RUN: kiln-opt %s -canonicalize -split-input-file | FileCheck %s

// Integer mod folds with the divisor's sign, fmod with the dividend's.
// CHECK-LABEL: func.func @fold_mod
// CHECK-DAG: kiln.constant dense<[2, -2, -1, 1]> : tensor<4xi32>
// CHECK-DAG: kiln.constant dense<[-1, 1, -1, 1]> : tensor<4xi32>
// CHECK-NOT: kiln.mod
func.func @fold_mod() -> (tensor<4xi32>, tensor<4xi32>) {
  %a = kiln.constant dense<[-7, 7, -7, 7]> : tensor<4xi32>
  %b = kiln.constant dense<[3, -3, -3, 3]> : tensor<4xi32>
  %0 = kiln.mod %a, %b : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %1 = kiln.mod %a, %b {fmod = true} : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %0, %1 : tensor<4xi32>, tensor<4xi32>
}

// -----

// Logic, shifts past the width and <= fold on constants.
// CHECK-LABEL: func.func @fold_logic
// CHECK-DAG: kiln.constant dense<[false, true]> : tensor<2xi1>
// CHECK-DAG: kiln.constant dense<[128, 0]> : tensor<2xui8>
// CHECK-DAG: kiln.constant dense<[true, false]> : tensor<2xi1>
func.func @fold_logic() -> (tensor<2xi1>, tensor<2xui8>, tensor<2xi1>) {
  %t = kiln.constant dense<[true, true]> : tensor<2xi1>
  %p = kiln.constant dense<[true, false]> : tensor<2xi1>
  %0 = kiln.xor %t, %p : (tensor<2xi1>, tensor<2xi1>) -> tensor<2xi1>
  %x = kiln.constant dense<[1, 1]> : tensor<2xui8>
  %n = kiln.constant dense<[7, 8]> : tensor<2xui8>
  %1 = kiln.shift_left %x, %n : (tensor<2xui8>, tensor<2xui8>) -> tensor<2xui8>
  %f = kiln.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %g = kiln.constant dense<[1.0, 1.5]> : tensor<2xf32>
  %2 = kiln.less_equal %f, %g : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>
  return %0, %1, %2 : tensor<2xi1>, tensor<2xui8>, tensor<2xi1>
}

// -----

// A transpose of a small integer constant folds (torch's exporter builds
// Pad's pads through one); a float constant stays for the weight passes.
// CHECK-LABEL: func.func @transpose_pads
// CHECK: %[[P:.+]] = kiln.constant dense<{{\[}}[0, 0, 2, 1], [0, 1, 1, 2]]> : tensor<2x4xi64>
// CHECK: %[[W:.+]] = kiln.transpose
// CHECK: return %[[P]], %[[W]]
func.func @transpose_pads() -> (tensor<2x4xi64>, tensor<2x4xf32>) {
  %0 = kiln.constant dense<[[0, 0], [0, 1], [2, 1], [1, 2]]> : tensor<4x2xi64>
  %1 = kiln.transpose %0 {perm = array<i64: 1, 0>} : (tensor<4x2xi64>) -> tensor<2x4xi64>
  %2 = kiln.constant dense<1.0> : tensor<4x2xf32>
  %3 = kiln.transpose %2 {perm = array<i64: 1, 0>} : (tensor<4x2xf32>) -> tensor<2x4xf32>
  return %1, %3 : tensor<2x4xi64>, tensor<2x4xf32>
}
