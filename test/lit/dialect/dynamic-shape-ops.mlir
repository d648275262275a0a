// RUN: kiln-opt %s | kiln-opt | FileCheck %s

// A run-time shape operand gives `?` result dims, one per shape element.
// CHECK-LABEL: func.func @dynamic_reshape
// CHECK: kiln.dynamic_reshape %{{.+}}, %{{.+}} : (tensor<2x3x4xf32>, tensor<4xi64>) -> tensor<?x?x?x?xf32>
// CHECK: kiln.dynamic_reshape %{{.+}}, %{{.+}} {allow_zero = true} : (tensor<0x3x4xf32>, tensor<3xi64>) -> tensor<?x?x?xf32>
func.func @dynamic_reshape(%x: tensor<2x3x4xf32>, %s: tensor<4xi64>, %z: tensor<0x3x4xf32>, %t: tensor<3xi64>) -> (tensor<?x?x?x?xf32>, tensor<?x?x?xf32>) {
  %y = kiln.dynamic_reshape %x, %s : (tensor<2x3x4xf32>, tensor<4xi64>) -> tensor<?x?x?x?xf32>
  %w = kiln.dynamic_reshape %z, %t {allow_zero = true} : (tensor<0x3x4xf32>, tensor<3xi64>) -> tensor<?x?x?xf32>
  return %y, %w : tensor<?x?x?x?xf32>, tensor<?x?x?xf32>
}

// CHECK-LABEL: func.func @dynamic_unsqueeze_squeeze
// CHECK: kiln.dynamic_unsqueeze %{{.+}}, %{{.+}} : (tensor<3x4xf32>, tensor<2xi64>) -> tensor<?x?x?x?xf32>
// CHECK: kiln.dynamic_squeeze %{{.+}}, %{{.+}} : (tensor<1x3x1x5xf32>, tensor<2xi64>) -> tensor<?x?xf32>
func.func @dynamic_unsqueeze_squeeze(%x: tensor<3x4xf32>, %a: tensor<2xi64>, %z: tensor<1x3x1x5xf32>) -> (tensor<?x?x?x?xf32>, tensor<?x?xf32>) {
  %u = kiln.dynamic_unsqueeze %x, %a : (tensor<3x4xf32>, tensor<2xi64>) -> tensor<?x?x?x?xf32>
  %s = kiln.dynamic_squeeze %z, %a : (tensor<1x3x1x5xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  return %u, %s : tensor<?x?x?x?xf32>, tensor<?x?xf32>
}

// A run-time check: a 0-d i1 condition and the message of the failed run.
// CHECK-LABEL: func.func @assert
// CHECK: kiln.assert %{{.+}}, "Tile: input 1 'y' must be [2, 2]" : tensor<i1>
func.func @assert(%ok: tensor<i1>) {
  kiln.assert %ok, "Tile: input 1 'y' must be [2, 2]" : tensor<i1>
  return
}
