// RUN: kiln-opt %s -kiln-fold-dequantized-weights -split-input-file | FileCheck %s

// A per-channel DequantizeLinear of constant int8 conv weights (axis 0:
// the scale as [F, 1, 1, 1]) and of the int32 bias becomes two f32
// constants, (q - zp) * scale computed from the bytes: channel 0 is
// (2 - 0) * 0.5 = 1, channel 1 is (2 - 1) * 0.25 = 0.25; the bias 4 * 0.125
// = 0.5 and -8 * 0.125 = -1.
// CHECK-LABEL: func.func @conv_weights
// CHECK-DAG: %[[W:.+]] = kiln.constant dense_resource<[[WNAME:dequantized[_0-9]*]]> : tensor<2x1x1x2xf32>
// CHECK-DAG: %[[B:.+]] = kiln.constant dense_resource<[[BNAME:dequantized[_0-9]*]]> : tensor<2xf32>
// CHECK-NOT: kiln.cast
// CHECK: kiln.conv %arg0, %[[W]], %[[B]]
// CHECK: {-#
// CHECK-DAG: [[WNAME]]: "0x400000000000803F0000803F0000803E0000803E"
// CHECK-DAG: [[BNAME]]: "0x400000000000003F000080BF"
func.func @conv_weights(%x: tensor<1x1x4x4xf32>) -> tensor<1x2x4x3xf32> {
  %q = kiln.constant dense<2> : tensor<2x1x1x2xi8>
  %f = kiln.cast %q {to = f32} : (tensor<2x1x1x2xi8>) -> tensor<2x1x1x2xf32>
  %zp = kiln.constant dense<[[[[0.0]]], [[[1.0]]]]> : tensor<2x1x1x1xf32>
  %c = kiln.sub %f, %zp : (tensor<2x1x1x2xf32>, tensor<2x1x1x1xf32>) -> tensor<2x1x1x2xf32>
  %s = kiln.constant dense<[[[[0.5]]], [[[0.25]]]]> : tensor<2x1x1x1xf32>
  %w = kiln.mul %c, %s : (tensor<2x1x1x2xf32>, tensor<2x1x1x1xf32>) -> tensor<2x1x1x2xf32>
  %bq = kiln.constant dense<[4, -8]> : tensor<2xi32>
  %bf = kiln.cast %bq {to = f32} : (tensor<2xi32>) -> tensor<2xf32>
  %bs = kiln.constant dense<0.125> : tensor<f32>
  %b = kiln.mul %bf, %bs : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
  %y = kiln.conv %x, %w, %b {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x1x4x4xf32>, tensor<2x1x1x2xf32>, tensor<2xf32>) -> tensor<1x2x4x3xf32>
  return %y : tensor<1x2x4x3xf32>
}

// -----

// Activations (not constants) keep their dequantization.
// CHECK-LABEL: func.func @activations
// CHECK: kiln.cast
// CHECK: kiln.mul
func.func @activations(%q: tensor<4xui8>) -> tensor<4xf32> {
  %f = kiln.cast %q {to = f32} : (tensor<4xui8>) -> tensor<4xf32>
  %s = kiln.constant dense<0.5> : tensor<f32>
  %y = kiln.mul %f, %s : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}
