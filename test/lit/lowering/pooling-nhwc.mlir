// RUN: kiln-opt %s -kiln-lower-to-linalg -split-input-file | FileCheck %s

// channels_last pools: pads on H and W, linalg.pooling_nhwc_{max,sum}.
// CHECK-LABEL: func.func @max_nhwc
// CHECK: %[[P:.+]] = tensor.pad %{{.+}} low[0, 1, 1, 0] high[0, 1, 1, 0]
// CHECK: } : tensor<1x6x6x2xf32> to tensor<1x8x8x2xf32>
// CHECK: linalg.pooling_nhwc_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%[[P]], %{{.+}} : tensor<1x8x8x2xf32>, tensor<3x3xf32>) outs(%{{.+}} : tensor<1x3x3x2xf32>)
// CHECK-NOT: pooling_nchw
func.func @max_nhwc(%x: tensor<1x6x6x2xf32>) -> tensor<1x3x3x2xf32> {
  %y = kiln.max_pool %x {channels_last, kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<1x6x6x2xf32>) -> tensor<1x3x3x2xf32>
  return %y : tensor<1x3x3x2xf32>
}

// -----

// Border windows count fewer taps: the [OH, OW, 1] divisors (4 at corners,
// 6 on edges, 9 inside) broadcast over N and C.
// CHECK-DAG: #[[ID:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[HW:.+]] = affine_map<(d0, d1, d2, d3) -> (d1, d2)>
// CHECK-LABEL: func.func @avg_nhwc
// CHECK: %[[S:.+]] = linalg.pooling_nhwc_sum {{.*}} ins(%{{.+}}, %{{.+}} : tensor<1x7x7x2xf32>, tensor<3x3xf32>) outs(%{{.+}} : tensor<1x3x3x2xf32>)
// CHECK: arith.constant dense<{{\[\[\[}}4.000000e+00], [6.000000e+00], [4.000000e+00]], {{\[\[}}6.000000e+00], [9.000000e+00], [6.000000e+00]], {{\[\[}}4.000000e+00], [6.000000e+00], [4.000000e+00]]]> : tensor<3x3x1xf32>
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[HW]], #[[ID]]]
// CHECK: arith.divf
func.func @avg_nhwc(%x: tensor<1x5x5x2xf32>) -> tensor<1x3x3x2xf32> {
  %y = kiln.avg_pool %x {channels_last, kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<1x5x5x2xf32>) -> tensor<1x3x3x2xf32>
  return %y : tensor<1x3x3x2xf32>
}

// -----

// Unsigned max pools use a generic (the named ops compare signed) with C last.
// CHECK-DAG: #[[IN:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d2 * 2 + d4, d3 * 2 + d5, d1)>
// CHECK-DAG: #[[OUT:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d2, d3, d1)>
// CHECK-LABEL: func.func @max_u8
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #{{.+}}, #[[OUT]]]
// CHECK: arith.maxui
func.func @max_u8(%x: tensor<1x4x4x2xui8>) -> tensor<1x2x2x2xui8> {
  %y = kiln.max_pool %x {channels_last, kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x4x4x2xui8>) -> tensor<1x2x2x2xui8>
  return %y : tensor<1x2x2x2xui8>
}
