// RUN: kiln-opt %s -kiln-fold-batch-norm -kiln-conv-layout=layout=nhwc -kiln-sink-transposes -kiln-fold-weights | FileCheck %s

// A batch norm that cannot fold into a conv (a ReLU sits between them)
// becomes a per-channel multiply-add in kiln-fold-batch-norm, and the layout
// conversions sink through it like through any elementwise op with
// constants: the chain conv -> relu -> batch norm -> conv runs NHWC with one
// conversion at the input and one at the output; the per-channel constants
// are [1, 1, 1, C] after the transposes are folded.
// CHECK-LABEL: func.func @bn_between_convs
// CHECK-NOT: kiln.batch_norm
// CHECK-COUNT-1: kiln.transpose %arg0
// CHECK: kiln.conv {{.+}}{channels_last
// CHECK: kiln.relu
// CHECK: kiln.mul %{{.+}}, %{{.+}} : (tensor<1x8x8x4xf32>, tensor<1x1x1x4xf32>)
// CHECK: kiln.add %{{.+}}, %{{.+}} : (tensor<1x8x8x4xf32>, tensor<1x1x1x4xf32>)
// CHECK: %[[C2:.+]] = kiln.conv {{.+}}{channels_last
// CHECK: %[[OUT:.+]] = kiln.transpose %[[C2]]
// CHECK-NOT: kiln.transpose
// CHECK: return %[[OUT]]
func.func @bn_between_convs(%x: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %w = kiln.constant dense<0.5> : tensor<4x4x3x3xf32>
  %c = kiln.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x8x8xf32>
  %r = kiln.relu %c : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %s = kiln.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %b = kiln.batch_norm %r, %s, %s, %s, %s : (tensor<1x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  %c2 = kiln.conv %b, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x8x8xf32>
  return %c2 : tensor<1x4x8x8xf32>
}
