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

// -----

// Symbolic dims: `?` broadcasts with a static extent to that extent, with 1
// or another `?` to `?`; the dynamic forms keep the static entries they know.
// CHECK-LABEL: func.func @symbolic
// CHECK: kiln.add %{{.+}}, %{{.+}} : (tensor<?x?x64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
// CHECK: kiln.mul %{{.+}}, %{{.+}} : (tensor<?x1xf32>, tensor<1x?xf32>) -> tensor<?x?xf32>
// CHECK: kiln.sub %{{.+}}, %{{.+}} : (tensor<?x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
// CHECK: kiln.dynamic_reshape %{{.+}}, %{{.+}} {allow_zero = true, static_shape = array<i64: -1, -1, 4, 16>} : (tensor<?x?x64xf32>, tensor<4xi64>) -> tensor<?x?x4x16xf32>
// CHECK: kiln.dynamic_expand %{{.+}}, %{{.+}} {static_shape = array<i64: -1, -1>} : (tensor<i1>, tensor<2xi64>) -> tensor<?x?xi1>
// CHECK: kiln.dynamic_range %{{.+}}, %{{.+}}, %{{.+}} : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
func.func @symbolic(%x: tensor<?x?x64xf32>, %b: tensor<64xf32>, %c: tensor<?x1xf32>,
                    %d: tensor<1x?xf32>, %e: tensor<?x8xf32>, %f: tensor<4x1xf32>,
                    %s4: tensor<4xi64>, %s2: tensor<2xi64>, %t: tensor<i1>,
                    %i: tensor<i64>) {
  %0 = kiln.add %x, %b : (tensor<?x?x64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
  %1 = kiln.mul %c, %d : (tensor<?x1xf32>, tensor<1x?xf32>) -> tensor<?x?xf32>
  %2 = kiln.sub %e, %f : (tensor<?x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %3 = kiln.dynamic_reshape %x, %s4 {allow_zero = true, static_shape = array<i64: -1, -1, 4, 16>} : (tensor<?x?x64xf32>, tensor<4xi64>) -> tensor<?x?x4x16xf32>
  %4 = kiln.dynamic_expand %t, %s2 {static_shape = array<i64: -1, -1>} : (tensor<i1>, tensor<2xi64>) -> tensor<?x?xi1>
  %5 = kiln.dynamic_range %i, %i, %i : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  return
}
