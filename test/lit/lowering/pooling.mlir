// RUN: kiln-opt %s -kiln-lower-to-linalg -split-input-file | FileCheck %s

// Max pooling pads with -inf (padding never wins) and starts from -inf.
// CHECK-LABEL: func.func @max_pool_pads
// CHECK-SAME: (%[[X:.+]]: tensor<1x2x6x6xf32>)
// CHECK: %[[NEGINF:.+]] = arith.constant 0xFF800000 : f32
// CHECK: %[[P:.+]] = tensor.pad %[[X]] low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: tensor.yield %[[NEGINF]] : f32
// CHECK: } : tensor<1x2x6x6xf32> to tensor<1x2x8x8xf32>
// CHECK: %[[INIT:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<1x2x3x3xf32>)
// CHECK: %[[WIN:.+]] = tensor.empty() : tensor<3x3xf32>
// CHECK: %[[R:.+]] = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
// CHECK-SAME: ins(%[[P]], %[[WIN]] : tensor<1x2x8x8xf32>, tensor<3x3xf32>) outs(%[[INIT]] : tensor<1x2x3x3xf32>)
// CHECK: return %[[R]]
func.func @max_pool_pads(%x: tensor<1x2x6x6xf32>) -> tensor<1x2x3x3xf32> {
  %y = kiln.max_pool %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<1x2x6x6xf32>) -> tensor<1x2x3x3xf32>
  return %y : tensor<1x2x3x3xf32>
}

// -----

// ceil_mode: the last window runs one past the input, so the trailing side
// gets one more padded row/column than the (zero) declared pads.
// CHECK-LABEL: func.func @max_pool_ceil
// CHECK: tensor.pad %{{.+}} low[0, 0, 0, 0] high[0, 0, 1, 1]
// CHECK: } : tensor<1x2x5x5xf32> to tensor<1x2x6x6xf32>
// CHECK: linalg.pooling_nchw_max
// CHECK-SAME: ins(%{{.+}}, %{{.+}} : tensor<1x2x6x6xf32>, tensor<2x2xf32>) outs(%{{.+}} : tensor<1x2x3x3xf32>)
func.func @max_pool_ceil(%x: tensor<1x2x5x5xf32>) -> tensor<1x2x3x3xf32> {
  %y = kiln.max_pool %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = true} : (tensor<1x2x5x5xf32>) -> tensor<1x2x3x3xf32>
  return %y : tensor<1x2x3x3xf32>
}

// -----

// Unsigned: the type's minimum is 0, and the named op (signed max) does not
// apply: a generic window reduction with maxui.
// CHECK-DAG: #[[$IN:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2 * 2 + d4, d3 * 2 + d5)>
// CHECK-DAG: #[[$WIN:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d4, d5)>
// CHECK-DAG: #[[$OUT:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @max_pool_unsigned
// CHECK-SAME: (%[[X:.+]]: tensor<1x1x4x4xi8>) -> tensor<1x1x2x2xi8>
// CHECK: %[[ZERO:.+]] = arith.constant 0 : i8
// CHECK: %[[P:.+]] = tensor.pad %[[X]] low[0, 0, 0, 0] high[0, 0, 1, 1]
// CHECK: tensor.yield %[[ZERO]] : i8
// CHECK: %[[INIT:.+]] = linalg.fill
// CHECK: %[[W:.+]] = tensor.empty() : tensor<2x2xi8>
// CHECK: linalg.generic {indexing_maps = [#[[$IN]], #[[$WIN]], #[[$OUT]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]}
// CHECK-SAME: ins(%[[P]], %[[W]] : tensor<1x1x5x5xi8>, tensor<2x2xi8>) outs(%[[INIT]] : tensor<1x1x2x2xi8>)
// CHECK: ^bb0(%[[E:.+]]: i8, %{{.+}}: i8, %[[ACC:.+]]: i8):
// CHECK: arith.maxui %[[E]], %[[ACC]] : i8
func.func @max_pool_unsigned(%x: tensor<1x1x4x4xui8>) -> tensor<1x1x2x2xui8> {
  %y = kiln.max_pool %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<1x1x4x4xui8>) -> tensor<1x1x2x2xui8>
  return %y : tensor<1x1x2x2xui8>
}

// -----

// 3-D and signed integers: generic, seeded with the type's minimum.
// CHECK-DAG: #[[$IN:.+]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2 * 2 + d5, d3 + d6 * 2, d4 * 2 + d7)>
// CHECK-LABEL: func.func @max_pool_3d
// CHECK-NOT: tensor.pad
// CHECK: %[[MIN:.+]] = arith.constant -2147483648 : i32
// CHECK: linalg.fill ins(%[[MIN]] : i32)
// CHECK: linalg.generic {indexing_maps = [#[[$IN]], #{{.+}}, #{{.+}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
// CHECK: arith.maxsi
func.func @max_pool_3d(%x: tensor<1x1x4x6x4xi32>) -> tensor<1x1x2x4x2xi32> {
  %y = kiln.max_pool %x {kernel_shape = array<i64: 2, 2, 2>, strides = array<i64: 2, 1, 2>, pads = array<i64: 0, 0, 0, 0, 0, 0>, dilations = array<i64: 1, 2, 1>} : (tensor<1x1x4x6x4xi32>) -> tensor<1x1x2x4x2xi32>
  return %y : tensor<1x1x2x4x2xi32>
}

// -----

// Average without padding: every window has 4 taps, one constant divisor.
// CHECK-LABEL: func.func @avg_pool_uniform
// CHECK-NOT: tensor.pad
// CHECK: %[[SUM:.+]] = linalg.pooling_nchw_sum {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[SUM]] : tensor<1x8x2x2xf32>)
// CHECK: %[[FOUR:.+]] = arith.constant 4.000000e+00 : f32
// CHECK: arith.divf %{{.+}}, %[[FOUR]] : f32
func.func @avg_pool_uniform(%x: tensor<1x8x4x4xf32>) -> tensor<1x8x2x2xf32> {
  %y = kiln.avg_pool %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x8x4x4xf32>) -> tensor<1x8x2x2xf32>
  return %y : tensor<1x8x2x2xf32>
}

// -----

// count_include_pad: padded taps count, so the divisor is still constant.
// CHECK-LABEL: func.func @avg_pool_include_pad
// CHECK: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: tensor.pad %{{.+}} low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: tensor.yield %[[ZERO]] : f32
// CHECK: linalg.pooling_nchw_sum
// CHECK: %[[NINE:.+]] = arith.constant 9.000000e+00 : f32
// CHECK: arith.divf %{{.+}}, %[[NINE]] : f32
func.func @avg_pool_include_pad(%x: tensor<1x1x5x5xf32>) -> tensor<1x1x3x3xf32> {
  %y = kiln.avg_pool %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, count_include_pad = true} : (tensor<1x1x5x5xf32>) -> tensor<1x1x3x3xf32>
  return %y : tensor<1x1x3x3xf32>
}

// -----

// Padding excluded: border windows have fewer taps; the divisors are a
// [out_h, out_w] constant broadcast over N and C.
// CHECK-DAG: #[[$ID:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[$HW:.+]] = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
// CHECK-LABEL: func.func @avg_pool_exclude_pad
// CHECK: %[[SUM:.+]] = linalg.pooling_nchw_sum
// CHECK: %[[DIV:.+]] = arith.constant dense<{{\[}}[4.000000e+00, 6.000000e+00, 4.000000e+00], [6.000000e+00, 9.000000e+00, 6.000000e+00], [4.000000e+00, 6.000000e+00, 4.000000e+00]]> : tensor<3x3xf32>
// CHECK: linalg.generic {indexing_maps = [#[[$ID]], #[[$HW]], #[[$ID]]]
// CHECK-SAME: ins(%[[SUM]], %[[DIV]] : tensor<1x1x3x3xf32>, tensor<3x3xf32>)
// CHECK: arith.divf
func.func @avg_pool_exclude_pad(%x: tensor<1x1x5x5xf32>) -> tensor<1x1x3x3xf32> {
  %y = kiln.avg_pool %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<1x1x5x5xf32>) -> tensor<1x1x3x3xf32>
  return %y : tensor<1x1x3x3xf32>
}

// -----

// ceil_mode with count_include_pad: the declared pads count, the extra
// position ceil_mode reads past them does not (last row/column: 2 taps).
// CHECK-LABEL: func.func @avg_pool_ceil_include_pad
// CHECK: tensor.pad %{{.+}} low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: linalg.pooling_nchw_sum
// CHECK: arith.constant dense<{{\[}}[9.000000e+00, 9.000000e+00, 6.000000e+00], [9.000000e+00, 9.000000e+00, 6.000000e+00], [6.000000e+00, 6.000000e+00, 4.000000e+00]]> : tensor<3x3xf32>
func.func @avg_pool_ceil_include_pad(%x: tensor<1x1x5x5xf32>) -> tensor<1x1x3x3xf32> {
  %y = kiln.avg_pool %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = true, count_include_pad = true} : (tensor<1x1x5x5xf32>) -> tensor<1x1x3x3xf32>
  return %y : tensor<1x1x3x3xf32>
}

// -----

// 1-D f16: sums in f32, one rounding after the division.
// CHECK-LABEL: func.func @avg_pool_1d_f16
// CHECK: %[[INIT:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<1x2x3xf32>)
// CHECK: %[[SUM:.+]] = linalg.pooling_ncw_sum {dilations = dense<1> : tensor<1xi64>, strides = dense<2> : tensor<1xi64>}
// CHECK-SAME: ins(%{{.+}}, %{{.+}} : tensor<1x2x7xf16>, tensor<3xf16>) outs(%[[INIT]] : tensor<1x2x3xf32>)
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[SUM]] : tensor<1x2x3xf32>) outs(%{{.+}} : tensor<1x2x3xf16>)
// CHECK: %[[Q:.+]] = arith.divf %{{.+}}, %{{.+}} : f32
// CHECK: arith.truncf %[[Q]] : f32 to f16
func.func @avg_pool_1d_f16(%x: tensor<1x2x7xf16>) -> tensor<1x2x3xf16> {
  %y = kiln.avg_pool %x {kernel_shape = array<i64: 3>, strides = array<i64: 2>, pads = array<i64: 0, 0>, dilations = array<i64: 1>} : (tensor<1x2x7xf16>) -> tensor<1x2x3xf16>
  return %y : tensor<1x2x3xf16>
}

// -----

// 3-D average: generic window sum, then the constant divisor.
// CHECK-LABEL: func.func @avg_pool_3d
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]
// CHECK: arith.addf
// CHECK: linalg.generic
// CHECK: %[[EIGHT:.+]] = arith.constant 8.000000e+00 : f32
// CHECK: arith.divf %{{.+}}, %[[EIGHT]] : f32
func.func @avg_pool_3d(%x: tensor<1x1x4x4x4xf32>) -> tensor<1x1x2x2x2xf32> {
  %y = kiln.avg_pool %x {kernel_shape = array<i64: 2, 2, 2>, strides = array<i64: 2, 2, 2>, pads = array<i64: 0, 0, 0, 0, 0, 0>, dilations = array<i64: 1, 1, 1>} : (tensor<1x1x4x4x4xf32>) -> tensor<1x1x2x2x2xf32>
  return %y : tensor<1x1x2x2x2xf32>
}
