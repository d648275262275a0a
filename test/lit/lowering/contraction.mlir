// RUN: kiln-opt %s -kiln-lower-to-linalg -split-input-file | FileCheck %s

// CHECK-LABEL: func.func @matmul_2d
// CHECK-SAME: (%[[A:.+]]: tensor<3x4xf32>, %[[B:.+]]: tensor<4x5xf32>)
// CHECK: %[[E:.+]] = tensor.empty() : tensor<3x5xf32>
// CHECK: %[[Z:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[F:.+]] = linalg.fill ins(%[[Z]] : f32) outs(%[[E]] : tensor<3x5xf32>)
// CHECK: %[[M:.+]] = linalg.matmul ins(%[[A]], %[[B]] : tensor<3x4xf32>, tensor<4x5xf32>) outs(%[[F]] : tensor<3x5xf32>)
// CHECK: return %[[M]]
func.func @matmul_2d(%a: tensor<3x4xf32>, %b: tensor<4x5xf32>) -> tensor<3x5xf32> {
  %0 = kiln.matmul %a, %b : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}

// -----

// A weight shared by all batches: one [B*M, K] x [K, N] matmul.
// CHECK-LABEL: func.func @matmul_shared_rhs
// CHECK-SAME: (%[[A:.+]]: tensor<2x3x4x5xf32>, %[[B:.+]]: tensor<1x5x6xf32>)
// CHECK-DAG: %[[CA:.+]] = tensor.collapse_shape %[[A]] {{\[}}[0, 1, 2], [3]] : tensor<2x3x4x5xf32> into tensor<24x5xf32>
// CHECK-DAG: %[[CB:.+]] = tensor.collapse_shape %[[B]] {{\[}}[0, 1], [2]] : tensor<1x5x6xf32> into tensor<5x6xf32>
// CHECK: %[[M:.+]] = linalg.matmul ins(%[[CA]], %[[CB]] : tensor<24x5xf32>, tensor<5x6xf32>) outs(%{{.+}} : tensor<24x6xf32>)
// CHECK: %[[R:.+]] = tensor.expand_shape %[[M]] {{\[}}[0, 1, 2], [3]] output_shape [2, 3, 4, 6] : tensor<24x6xf32> into tensor<2x3x4x6xf32>
// CHECK: return %[[R]]
func.func @matmul_shared_rhs(%a: tensor<2x3x4x5xf32>, %b: tensor<1x5x6xf32>) -> tensor<2x3x4x6xf32> {
  %0 = kiln.matmul %a, %b : (tensor<2x3x4x5xf32>, tensor<1x5x6xf32>) -> tensor<2x3x4x6xf32>
  return %0 : tensor<2x3x4x6xf32>
}

// -----

// Equal batch dims: collapsed into one and run as batch_matmul.
// CHECK-LABEL: func.func @matmul_batch
// CHECK-DAG: %[[CA:.+]] = tensor.collapse_shape %{{.+}} {{\[}}[0, 1], [2], [3]] : tensor<2x3x4x5xf32> into tensor<6x4x5xf32>
// CHECK-DAG: %[[CB:.+]] = tensor.collapse_shape %{{.+}} {{\[}}[0, 1], [2], [3]] : tensor<2x3x5x6xf32> into tensor<6x5x6xf32>
// CHECK: %[[M:.+]] = linalg.batch_matmul ins(%[[CA]], %[[CB]] : tensor<6x4x5xf32>, tensor<6x5x6xf32>) outs(%{{.+}} : tensor<6x4x6xf32>)
// CHECK: tensor.expand_shape %[[M]] {{\[}}[0, 1], [2], [3]] output_shape [2, 3, 4, 6]
func.func @matmul_batch(%a: tensor<2x3x4x5xf32>, %b: tensor<2x3x5x6xf32>) -> tensor<2x3x4x6xf32> {
  %0 = kiln.matmul %a, %b : (tensor<2x3x4x5xf32>, tensor<2x3x5x6xf32>) -> tensor<2x3x4x6xf32>
  return %0 : tensor<2x3x4x6xf32>
}

// CHECK-LABEL: func.func @matmul_batch_rank3
// CHECK-NOT: tensor.collapse_shape
// CHECK: linalg.batch_matmul ins(%{{.+}}, %{{.+}} : tensor<4x2x3xi32>, tensor<4x3x5xi32>) outs(%{{.+}} : tensor<4x2x5xi32>)
// CHECK-NOT: tensor.expand_shape
func.func @matmul_batch_rank3(%a: tensor<4x2x3xi32>, %b: tensor<4x3x5xi32>) -> tensor<4x2x5xi32> {
  %0 = kiln.matmul %a, %b : (tensor<4x2x3xi32>, tensor<4x3x5xi32>) -> tensor<4x2x5xi32>
  return %0 : tensor<4x2x5xi32>
}

// -----

// Batch dims that broadcast against each other: a generic over
// (b0, b1, m, n, k); the lhs's unit batch dim is collapsed away.
// CHECK-DAG: #[[$LHS:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d4)>
// CHECK-DAG: #[[$RHS:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d1, d4, d3)>
// CHECK-DAG: #[[$OUT:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @matmul_broadcast
// CHECK-SAME: (%[[A:.+]]: tensor<2x1x4x5xf32>, %[[B:.+]]: tensor<3x5x6xf32>)
// CHECK: %[[CA:.+]] = tensor.collapse_shape %[[A]] {{\[}}[0], [1, 2], [3]] : tensor<2x1x4x5xf32> into tensor<2x4x5xf32>
// CHECK: %[[F:.+]] = linalg.fill
// CHECK: linalg.generic {indexing_maps = [#[[$LHS]], #[[$RHS]], #[[$OUT]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
// CHECK-SAME: ins(%[[CA]], %[[B]] : tensor<2x4x5xf32>, tensor<3x5x6xf32>) outs(%[[F]] : tensor<2x3x4x6xf32>)
// CHECK: ^bb0(%[[X:.+]]: f32, %[[Y:.+]]: f32, %[[ACC:.+]]: f32):
// CHECK: %[[P:.+]] = arith.mulf %[[X]], %[[Y]] : f32
// CHECK: %[[S:.+]] = arith.addf %[[ACC]], %[[P]] : f32
// CHECK: linalg.yield %[[S]] : f32
func.func @matmul_broadcast(%a: tensor<2x1x4x5xf32>, %b: tensor<3x5x6xf32>) -> tensor<2x3x4x6xf32> {
  %0 = kiln.matmul %a, %b : (tensor<2x1x4x5xf32>, tensor<3x5x6xf32>) -> tensor<2x3x4x6xf32>
  return %0 : tensor<2x3x4x6xf32>
}

// -----

// f16 accumulates in f32 and is rounded once at the end.
// CHECK-LABEL: func.func @matmul_f16
// CHECK: %[[F:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<8x4xf32>)
// CHECK: %[[M:.+]] = linalg.matmul ins(%{{.+}}, %{{.+}} : tensor<8x16xf16>, tensor<16x4xf16>) outs(%[[F]] : tensor<8x4xf32>)
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[M]] : tensor<8x4xf32>) outs(%{{.+}} : tensor<8x4xf16>)
// CHECK: arith.truncf %{{.+}} : f32 to f16
func.func @matmul_f16(%a: tensor<8x16xf16>, %b: tensor<16x4xf16>) -> tensor<8x4xf16> {
  %0 = kiln.matmul %a, %b : (tensor<8x16xf16>, tensor<16x4xf16>) -> tensor<8x4xf16>
  return %0 : tensor<8x4xf16>
}

// Unsigned integers: the same bits, the same named op.
// CHECK-LABEL: func.func @matmul_unsigned
// CHECK-SAME: (%{{.+}}: tensor<2x3xi8>, %{{.+}}: tensor<3x2xi8>) -> tensor<2x2xi8>
// CHECK: linalg.matmul ins(%{{.+}}, %{{.+}} : tensor<2x3xi8>, tensor<3x2xi8>) outs(%{{.+}} : tensor<2x2xi8>)
func.func @matmul_unsigned(%a: tensor<2x3xui8>, %b: tensor<3x2xui8>) -> tensor<2x2xui8> {
  %0 = kiln.matmul %a, %b : (tensor<2x3xui8>, tensor<3x2xui8>) -> tensor<2x2xui8>
  return %0 : tensor<2x2xui8>
}

// -----

// The common case: explicit zero padding, the bias broadcast into the
// accumulator, linalg.conv_2d_nchw_fchw.
// CHECK-LABEL: func.func @conv2d
// CHECK-SAME: (%[[X:.+]]: tensor<1x3x8x8xf32>, %[[W:.+]]: tensor<4x3x3x3xf32>, %[[B:.+]]: tensor<4xf32>)
// CHECK: %[[Z:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[P:.+]] = tensor.pad %[[X]] low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: tensor.yield %[[Z]] : f32
// CHECK: } : tensor<1x3x8x8xf32> to tensor<1x3x10x10xf32>
// CHECK: %[[E:.+]] = tensor.empty() : tensor<1x4x4x4xf32>
// CHECK: %[[INIT:.+]] = linalg.broadcast ins(%[[B]] : tensor<4xf32>) outs(%[[E]] : tensor<1x4x4x4xf32>) dimensions = [0, 2, 3]
// CHECK: %[[Y:.+]] = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
// CHECK-SAME: ins(%[[P]], %[[W]] : tensor<1x3x10x10xf32>, tensor<4x3x3x3xf32>) outs(%[[INIT]] : tensor<1x4x4x4xf32>)
// CHECK: return %[[Y]]
func.func @conv2d(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) -> tensor<1x4x4x4xf32> {
  %y = kiln.conv %x, %w, %b {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
  return %y : tensor<1x4x4x4xf32>
}

// -----

// No pads, no bias: no tensor.pad, a zero-filled accumulator.
// CHECK-LABEL: func.func @conv1d
// CHECK-NOT: tensor.pad
// CHECK: %[[F:.+]] = linalg.fill
// CHECK: linalg.conv_1d_ncw_fcw {dilations = dense<2> : tensor<1xi64>, strides = dense<2> : tensor<1xi64>}
// CHECK-SAME: ins(%{{.+}}, %{{.+}} : tensor<1x3x9xf32>, tensor<2x3x3xf32>) outs(%[[F]] : tensor<1x2x3xf32>)
func.func @conv1d(%x: tensor<1x3x9xf32>, %w: tensor<2x3x3xf32>) -> tensor<1x2x3xf32> {
  %y = kiln.conv %x, %w {dilations = array<i64: 2>, pads = array<i64: 0, 0>, strides = array<i64: 2>} : (tensor<1x3x9xf32>, tensor<2x3x3xf32>) -> tensor<1x2x3xf32>
  return %y : tensor<1x2x3xf32>
}

// -----

// Asymmetric pads, per-dim strides and dilations.
// CHECK-LABEL: func.func @conv3d
// CHECK: tensor.pad %{{.+}} low[0, 0, 0, 1, 1] high[0, 0, 1, 0, 0]
// CHECK: linalg.conv_3d_ncdhw_fcdhw {dilations = dense<[1, 1, 2]> : tensor<3xi64>, strides = dense<[1, 2, 1]> : tensor<3xi64>}
// CHECK-SAME: ins(%{{.+}}, %{{.+}} : tensor<1x2x5x6x5xf32>, tensor<3x2x2x3x2xf32>) outs(%{{.+}} : tensor<1x3x4x2x3xf32>)
func.func @conv3d(%x: tensor<1x2x4x5x4xf32>, %w: tensor<3x2x2x3x2xf32>) -> tensor<1x3x4x2x3xf32> {
  %y = kiln.conv %x, %w {dilations = array<i64: 1, 1, 2>, pads = array<i64: 0, 1, 1, 1, 0, 0>, strides = array<i64: 1, 2, 1>} : (tensor<1x2x4x5x4xf32>, tensor<3x2x2x3x2xf32>) -> tensor<1x3x4x2x3xf32>
  return %y : tensor<1x3x4x2x3xf32>
}

// -----

// One filter per channel: linalg.depthwise_conv_2d_nchw_chw.
// CHECK-LABEL: func.func @conv_depthwise
// CHECK-SAME: (%{{.+}}: tensor<1x4x6x6xf32>, %[[W:.+]]: tensor<4x1x3x3xf32>, %[[B:.+]]: tensor<4xf32>)
// CHECK: %[[P:.+]] = tensor.pad
// CHECK: %[[INIT:.+]] = linalg.broadcast ins(%[[B]] : tensor<4xf32>)
// CHECK: %[[CW:.+]] = tensor.collapse_shape %[[W]] {{\[}}[0], [1, 2], [3]] : tensor<4x1x3x3xf32> into tensor<4x3x3xf32>
// CHECK: linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
// CHECK-SAME: ins(%[[P]], %[[CW]] : tensor<1x4x8x8xf32>, tensor<4x3x3xf32>) outs(%[[INIT]] : tensor<1x4x6x6xf32>)
func.func @conv_depthwise(%x: tensor<1x4x6x6xf32>, %w: tensor<4x1x3x3xf32>, %b: tensor<4xf32>) -> tensor<1x4x6x6xf32> {
  %y = kiln.conv %x, %w, %b {dilations = array<i64: 1, 1>, group = 4 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x4x6x6xf32>, tensor<4x1x3x3xf32>, tensor<4xf32>) -> tensor<1x4x6x6xf32>
  return %y : tensor<1x4x6x6xf32>
}

// -----

// Groups: channels split into [G, C/G], filters into [G, F/G]; one generic
// over (n, g, f, oh, ow, c, kh, kw) with the strides and dilations in the
// input map.
// CHECK-DAG: #[[$IN:.+]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d5, d3 * 2 + d6, d4 + d7 * 2)>
// CHECK-DAG: #[[$W:.+]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d1, d2, d5, d6, d7)>
// CHECK-DAG: #[[$OUT:.+]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d4)>
// CHECK-LABEL: func.func @conv_grouped
// CHECK-SAME: (%{{.+}}: tensor<1x4x5x5xf32>, %[[W:.+]]: tensor<6x2x3x2xf32>)
// CHECK: %[[P:.+]] = tensor.pad %{{.+}} low[0, 0, 1, 0] high[0, 0, 1, 1]
// CHECK: %[[F:.+]] = linalg.fill
// CHECK-DAG: %[[XI:.+]] = tensor.expand_shape %[[P]] {{\[}}[0], [1, 2], [3], [4]] output_shape [1, 2, 2, 7, 6]
// CHECK-DAG: %[[WI:.+]] = tensor.expand_shape %[[W]] {{\[}}[0, 1], [2], [3], [4]] output_shape [2, 3, 2, 3, 2]
// CHECK-DAG: %[[OI:.+]] = tensor.expand_shape %[[F]] {{\[}}[0], [1, 2], [3], [4]] output_shape [1, 2, 3, 3, 4]
// CHECK: %[[G:.+]] = linalg.generic {indexing_maps = [#[[$IN]], #[[$W]], #[[$OUT]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
// CHECK-SAME: ins(%[[XI]], %[[WI]] : tensor<1x2x2x7x6xf32>, tensor<2x3x2x3x2xf32>) outs(%[[OI]] : tensor<1x2x3x3x4xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: %[[R:.+]] = tensor.collapse_shape %[[G]] {{\[}}[0], [1, 2], [3], [4]] : tensor<1x2x3x3x4xf32> into tensor<1x6x3x4xf32>
// CHECK: return %[[R]]
func.func @conv_grouped(%x: tensor<1x4x5x5xf32>, %w: tensor<6x2x3x2xf32>) -> tensor<1x6x3x4xf32> {
  %y = kiln.conv %x, %w {dilations = array<i64: 1, 2>, group = 2 : i64, pads = array<i64: 1, 0, 1, 1>, strides = array<i64: 2, 1>} : (tensor<1x4x5x5xf32>, tensor<6x2x3x2xf32>) -> tensor<1x6x3x4xf32>
  return %y : tensor<1x6x3x4xf32>
}

// Grouped 1-D with bias: the bias seeds the accumulator before the split.
// CHECK-LABEL: func.func @conv_grouped_1d_bias
// CHECK: %[[INIT:.+]] = linalg.broadcast ins(%{{.+}} : tensor<6xf32>) outs(%{{.+}} : tensor<1x6x6xf32>) dimensions = [0, 2]
// CHECK: tensor.expand_shape %[[INIT]] {{\[}}[0], [1, 2], [3]] output_shape [1, 3, 2, 6]
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]
func.func @conv_grouped_1d_bias(%x: tensor<1x3x8xf32>, %w: tensor<6x1x3xf32>, %b: tensor<6xf32>) -> tensor<1x6x6xf32> {
  %y = kiln.conv %x, %w, %b {dilations = array<i64: 1>, group = 3 : i64, pads = array<i64: 0, 0>, strides = array<i64: 1>} : (tensor<1x3x8xf32>, tensor<6x1x3xf32>, tensor<6xf32>) -> tensor<1x6x6xf32>
  return %y : tensor<1x6x6xf32>
}

// -----

// f16 convolution: f32 bias and accumulator, one rounding at the end.
// CHECK-LABEL: func.func @conv_f16
// CHECK: %[[WB:.+]] = linalg.generic
// CHECK-SAME: ins(%{{.+}} : tensor<2xf16>) outs(%{{.+}} : tensor<2xf32>)
// CHECK: arith.extf %{{.+}} : f16 to f32
// CHECK: %[[INIT:.+]] = linalg.broadcast ins(%[[WB]] : tensor<2xf32>)
// CHECK: %[[Y:.+]] = linalg.conv_2d_nchw_fchw
// CHECK-SAME: ins(%{{.+}}, %{{.+}} : tensor<1x2x4x4xf16>, tensor<2x2x1x1xf16>) outs(%[[INIT]] : tensor<1x2x4x4xf32>)
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[Y]] : tensor<1x2x4x4xf32>) outs(%{{.+}} : tensor<1x2x4x4xf16>)
// CHECK: arith.truncf %{{.+}} : f32 to f16
func.func @conv_f16(%x: tensor<1x2x4x4xf16>, %w: tensor<2x2x1x1xf16>, %b: tensor<2xf16>) -> tensor<1x2x4x4xf16> {
  %y = kiln.conv %x, %w, %b {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x2x4x4xf16>, tensor<2x2x1x1xf16>, tensor<2xf16>) -> tensor<1x2x4x4xf16>
  return %y : tensor<1x2x4x4xf16>
}
