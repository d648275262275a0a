// RUN: kiln-opt %s | kiln-opt | FileCheck %s

// channels_last convs (NHWC input, HWCF weight) and pools (NHWC) round-trip
// and infer NHWC results.

// CHECK-LABEL: func.func @conv_nhwc
func.func @conv_nhwc(%x: tensor<1x8x8x3xf32>, %w: tensor<3x3x3x4xf32>, %b: tensor<4xf32>) -> tensor<1x4x4x4xf32> {
  // CHECK: kiln.conv %{{.*}}, %{{.*}}, %{{.*}} {channels_last, dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x8x8x3xf32>, tensor<3x3x3x4xf32>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
  %0 = kiln.conv %x, %w, %b {channels_last, dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x8x8x3xf32>, tensor<3x3x3x4xf32>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
  return %0 : tensor<1x4x4x4xf32>
}

// Depthwise: one input channel per group, [KH, KW, 1, F].
// CHECK-LABEL: func.func @depthwise_nhwc
func.func @depthwise_nhwc(%x: tensor<1x6x6x8xf32>, %w: tensor<3x3x1x16xf32>) -> tensor<1x4x4x16xf32> {
  // CHECK: kiln.conv %{{.*}}, %{{.*}} {channels_last, dilations = array<i64: 1, 1>, group = 8 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x6x6x8xf32>, tensor<3x3x1x16xf32>) -> tensor<1x4x4x16xf32>
  %0 = kiln.conv %x, %w {channels_last, dilations = array<i64: 1, 1>, group = 8 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x6x6x8xf32>, tensor<3x3x1x16xf32>) -> tensor<1x4x4x16xf32>
  return %0 : tensor<1x4x4x16xf32>
}

// CHECK-LABEL: func.func @pools_nhwc
func.func @pools_nhwc(%x: tensor<1x112x112x64xf32>) -> (tensor<1x56x56x64xf32>, tensor<1x56x56x64xf32>) {
  // CHECK: kiln.max_pool %{{.*}} {channels_last, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x112x112x64xf32>) -> tensor<1x56x56x64xf32>
  %0 = kiln.max_pool %x {channels_last, kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<1x112x112x64xf32>) -> tensor<1x56x56x64xf32>
  // CHECK: kiln.avg_pool %{{.*}} {channels_last, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x112x112x64xf32>) -> tensor<1x56x56x64xf32>
  %1 = kiln.avg_pool %x {channels_last, kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x112x112x64xf32>) -> tensor<1x56x56x64xf32>
  return %0, %1 : tensor<1x56x56x64xf32>, tensor<1x56x56x64xf32>
}
