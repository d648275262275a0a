// RUN: kiln-opt %s -kiln-lower-to-linalg -split-input-file | FileCheck %s

// CHECK-LABEL: func.func @dense
// CHECK-DAG: %[[A:.+]] = arith.constant dense<1.000000e+00> : tensor<4xf32>
// CHECK-DAG: %[[B:.+]] = arith.constant dense<{{\[}}[1, 2], [3, 4]]> : tensor<2x2xi64>
// CHECK-DAG: %[[C:.+]] = arith.constant dense<[true, false]> : tensor<2xi1>
// CHECK: return %[[A]], %[[B]], %[[C]]
// CHECK-NOT: kiln.constant
func.func @dense() -> (tensor<4xf32>, tensor<2x2xi64>, tensor<2xi1>) {
  %0 = kiln.constant dense<1.0> : tensor<4xf32>
  %1 = kiln.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi64>
  %2 = kiln.constant dense<[true, false]> : tensor<2xi1>
  return %0, %1, %2 : tensor<4xf32>, tensor<2x2xi64>, tensor<2xi1>
}

// Unsigned values keep their bits under a signless type (255 prints as -1).
// CHECK-LABEL: func.func @dense_unsigned
// CHECK-SAME: () -> tensor<3xi8>
// CHECK: %[[A:.+]] = arith.constant dense<[1, -128, -1]> : tensor<3xi8>
// CHECK: return %[[A]] : tensor<3xi8>
func.func @dense_unsigned() -> tensor<3xui8> {
  %0 = kiln.constant dense<[1, 128, 255]> : tensor<3xui8>
  return %0 : tensor<3xui8>
}

// -----

// Weights stay blobs: the same resource handle, never copied into a literal.
// CHECK-LABEL: func.func @resource
// CHECK-DAG: arith.constant dense_resource<weights> : tensor<2x2xf32>
// CHECK-DAG: arith.constant dense_resource<codes> : tensor<4xi8>
// CHECK: dialect_resources
// CHECK-NEXT: builtin
// CHECK-DAG: weights: "0x04000000
// CHECK-DAG: codes: "0x0100000001FF807F"
func.func @resource() -> (tensor<2x2xf32>, tensor<4xui8>) {
  %0 = kiln.constant dense_resource<weights> : tensor<2x2xf32>
  %1 = kiln.constant dense_resource<codes> : tensor<4xui8>
  return %0, %1 : tensor<2x2xf32>, tensor<4xui8>
}

{-#
  dialect_resources: {
    builtin: {
      weights: "0x040000000000803F0000004000004040000080C0",
      codes: "0x0100000001FF807F"
    }
  }
#-}
