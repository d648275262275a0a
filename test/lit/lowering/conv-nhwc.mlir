// RUN: kiln-opt %s -kiln-lower-to-linalg -split-input-file | FileCheck %s

// channels_last convolutions lower to the NHWC linalg ops the CPU backend's
// direct-convolution kernel reads: pads on H and W only, the bias broadcast
// over N, H, W into the accumulator.
// CHECK-LABEL: func.func @conv_nhwc
// CHECK-SAME: (%[[X:.+]]: tensor<1x8x8x3xf32>, %[[W:.+]]: tensor<3x3x3x4xf32>, %[[B:.+]]: tensor<4xf32>)
// CHECK: %[[P:.+]] = tensor.pad %[[X]] low[0, 1, 1, 0] high[0, 0, 1, 0]
// CHECK: } : tensor<1x8x8x3xf32> to tensor<1x9x10x3xf32>
// CHECK: %[[INIT:.+]] = linalg.broadcast ins(%[[B]] : tensor<4xf32>) outs(%{{.+}} : tensor<1x4x4x4xf32>) dimensions = [0, 1, 2]
// CHECK: %[[R:.+]] = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%[[P]], %[[W]] : tensor<1x9x10x3xf32>, tensor<3x3x3x4xf32>) outs(%[[INIT]] : tensor<1x4x4x4xf32>)
// CHECK: return %[[R]]
// CHECK-NOT: conv_2d_nchw
func.func @conv_nhwc(%x: tensor<1x8x8x3xf32>, %w: tensor<3x3x3x4xf32>, %b: tensor<4xf32>) -> tensor<1x4x4x4xf32> {
  %0 = kiln.conv %x, %w, %b {channels_last, dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 0, 1>, strides = array<i64: 2, 2>} : (tensor<1x8x8x3xf32>, tensor<3x3x3x4xf32>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
  return %0 : tensor<1x4x4x4xf32>
}

// -----

// Depthwise: the [KH, KW, 1, C] weight is [KH, KW, C].
// CHECK-LABEL: func.func @depthwise
// CHECK: %[[W:.+]] = tensor.collapse_shape %{{.+}} {{\[\[}}0], [1], [2, 3]] : tensor<3x3x1x8xf32> into tensor<3x3x8xf32>
// CHECK: linalg.depthwise_conv_2d_nhwc_hwc {{.*}} ins(%{{.+}}, %[[W]] : tensor<1x6x6x8xf32>, tensor<3x3x8xf32>) outs(%{{.+}} : tensor<1x4x4x8xf32>)
func.func @depthwise(%x: tensor<1x6x6x8xf32>, %w: tensor<3x3x1x8xf32>) -> tensor<1x4x4x8xf32> {
  %0 = kiln.conv %x, %w {channels_last, dilations = array<i64: 1, 1>, group = 8 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x6x6x8xf32>, tensor<3x3x1x8xf32>) -> tensor<1x4x4x8xf32>
  return %0 : tensor<1x4x4x8xf32>
}

// -----

// Depthwise with a channel multiplier of 2: filter f = c * 2 + j, so the
// weight is [KH, KW, C, 2] and the [N, OH, OW, C, 2] result is NHWC.
// CHECK-LABEL: func.func @multiplier
// CHECK: %[[W:.+]] = tensor.expand_shape %{{.+}} {{\[\[}}0], [1], [2, 3]] output_shape [3, 3, 8, 2] : tensor<3x3x16xf32> into tensor<3x3x8x2xf32>
// CHECK: %[[R:.+]] = linalg.depthwise_conv_2d_nhwc_hwcm {{.*}} ins(%{{.+}}, %[[W]] : tensor<1x6x6x8xf32>, tensor<3x3x8x2xf32>) outs(%{{.+}} : tensor<1x4x4x8x2xf32>)
// CHECK: tensor.collapse_shape %[[R]] {{\[\[}}0], [1], [2], [3, 4]] : tensor<1x4x4x8x2xf32> into tensor<1x4x4x16xf32>
func.func @multiplier(%x: tensor<1x6x6x8xf32>, %w: tensor<3x3x1x16xf32>) -> tensor<1x4x4x16xf32> {
  %0 = kiln.conv %x, %w {channels_last, dilations = array<i64: 1, 1>, group = 8 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x6x6x8xf32>, tensor<3x3x1x16xf32>) -> tensor<1x4x4x16xf32>
  return %0 : tensor<1x4x4x16xf32>
}

// -----

// Other groups: one generic over (n, oh, ow, g, f, kh, kw, c) on
// [N, H, W, G, C/G] and [KH, KW, C/G, G, F/G].
// CHECK-DAG: #[[IN:.+]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1 + d5, d2 + d6, d3, d7)>
// CHECK-DAG: #[[WT:.+]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d5, d6, d7, d3, d4)>
// CHECK-DAG: #[[OUT:.+]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d4)>
// CHECK-LABEL: func.func @grouped
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[WT]], #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%{{.+}}, %{{.+}} : tensor<1x6x6x2x4xf32>, tensor<3x3x4x2x3xf32>) outs(%{{.+}} : tensor<1x4x4x2x3xf32>)
// CHECK: tensor.collapse_shape %{{.+}} {{\[\[}}0], [1], [2], [3, 4]] : tensor<1x4x4x2x3xf32> into tensor<1x4x4x6xf32>
func.func @grouped(%x: tensor<1x6x6x8xf32>, %w: tensor<3x3x4x6xf32>) -> tensor<1x4x4x6xf32> {
  %0 = kiln.conv %x, %w {channels_last, dilations = array<i64: 1, 1>, group = 2 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x6x6x8xf32>, tensor<3x3x4x6xf32>) -> tensor<1x4x4x6xf32>
  return %0 : tensor<1x4x4x6xf32>
}
