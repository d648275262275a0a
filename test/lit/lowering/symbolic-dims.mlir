// RUN: kiln-opt %s -kiln-lower-to-linalg -canonicalize -split-input-file | FileCheck %s

// ConstantOfShape/Expand of symbolic dims: the requested extents are read
// from the shape, the input broadcast along the new `?` dim.
// CHECK-LABEL: func.func @dynamic_expand
// CHECK-SAME:    (%[[X:.+]]: tensor<1x64xf32>, %[[N:.+]]: i64)
// CHECK:       %[[NI:.+]] = arith.index_cast %[[N]] : i64 to index
// CHECK:       %[[E:.+]] = tensor.empty(%[[NI]]) : tensor<?x64xf32>
// CHECK:       %[[C:.+]] = tensor.collapse_shape %[[X]] {{\[\[}}0, 1]] : tensor<1x64xf32> into tensor<64xf32>
// CHECK:       linalg.generic
// CHECK-SAME:    ins(%[[C]] : tensor<64xf32>) outs(%[[E]] : tensor<?x64xf32>)
func.func @dynamic_expand(%x: tensor<1x64xf32>, %n: i64) -> tensor<?x64xf32> {
  %c64 = arith.constant 64 : i64
  %shape = tensor.from_elements %n, %c64 : tensor<2xi64>
  %y = kiln.dynamic_expand %x, %shape {static_shape = array<i64: -1, 64>} : (tensor<1x64xf32>, tensor<2xi64>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

// Range with run-time bounds: ceil((limit - start) / delta) elements (at
// least 0), a check that delta is not 0, start + i * delta.
// CHECK-LABEL: func.func @dynamic_range
// CHECK:       %[[S:.+]] = tensor.extract %arg0[] : tensor<i64>
// CHECK:       %[[L:.+]] = tensor.extract %arg1[] : tensor<i64>
// CHECK:       %[[D:.+]] = tensor.extract %arg2[] : tensor<i64>
// CHECK:       %[[NZ:.+]] = arith.cmpi ne, %[[D]], %{{.+}} : i64
// CHECK:       arith.ceildivsi
// CHECK:       cf.assert %[[NZ]], "node '?': Range: delta is 0"
// CHECK:       %[[N:.+]] = arith.maxsi %{{.+}}, %{{.+}} : index
// CHECK:       tensor.empty(%[[N]]) : tensor<?xi64>
// CHECK:       linalg.index 0
// CHECK:       arith.muli %{{.+}}, %[[D]] : i64
// CHECK:       arith.addi %[[S]], %{{.+}} : i64
func.func @dynamic_range(%s: tensor<i64>, %l: tensor<i64>, %d: tensor<i64>) -> tensor<?xi64> {
  %r = kiln.dynamic_range %s, %l, %d : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  return %r : tensor<?xi64>
}

// -----

// [batch, seq, 64] -> [batch, seq, 4, 16] from a shape of symbolic scalars:
// the run-time dims pair up, so when their extents agree as the model runs
// the reshape is a view (expand_shape); when they do not (the scalars are
// the input's dims in another order) it reshapes through the shape.
// CHECK-LABEL: func.func @split_heads
// CHECK-SAME:    (%[[X:.+]]: tensor<?x?x64xf32>
// CHECK:       %[[R:.+]] = scf.if %{{.+}} -> (tensor<?x?x4x16xf32>) {
// CHECK:         tensor.expand_shape %[[X]] {{\[\[}}0], [1], [2, 3]] output_shape [%{{.+}}, %{{.+}}, 4, 16] : tensor<?x?x64xf32> into tensor<?x?x4x16xf32>
// CHECK:       } else {
// CHECK:         tensor.reshape %[[X]]
// CHECK:       return %[[R]]
func.func @split_heads(%x: tensor<?x?x64xf32>, %b: i64, %s: i64) -> tensor<?x?x4x16xf32> {
  %c4 = arith.constant 4 : i64
  %c16 = arith.constant 16 : i64
  %shape = tensor.from_elements %b, %s, %c4, %c16 : tensor<4xi64>
  %y = kiln.dynamic_reshape %x, %shape {allow_zero = true, static_shape = array<i64: -1, -1, 4, 16>} : (tensor<?x?x64xf32>, tensor<4xi64>) -> tensor<?x?x4x16xf32>
  return %y : tensor<?x?x4x16xf32>
}

// -----

// The same with the shape built from the input's own dims: provably a view,
// no run-time choice.
// CHECK-LABEL: func.func @split_heads_own_dims
// CHECK-SAME:    (%[[X:.+]]: tensor<?x?x64xf32>
// CHECK-NOT:   scf.if
// CHECK:       %[[R:.+]] = tensor.expand_shape %[[X]] {{\[\[}}0], [1], [2, 3]]
// CHECK-NOT:   tensor.reshape
// CHECK:       return %[[R]]
func.func @split_heads_own_dims(%x: tensor<?x?x64xf32>) -> tensor<?x?x4x16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %d0 = tensor.dim %x, %c0 : tensor<?x?x64xf32>
  %d1 = tensor.dim %x, %c1 : tensor<?x?x64xf32>
  %b = arith.index_cast %d0 : index to i64
  %s = arith.index_cast %d1 : index to i64
  %c4 = arith.constant 4 : i64
  %c16 = arith.constant 16 : i64
  %shape = tensor.from_elements %b, %s, %c4, %c16 : tensor<4xi64>
  %y = kiln.dynamic_reshape %x, %shape {allow_zero = true, static_shape = array<i64: -1, -1, 4, 16>} : (tensor<?x?x64xf32>, tensor<4xi64>) -> tensor<?x?x4x16xf32>
  return %y : tensor<?x?x4x16xf32>
}

// -----

// The input's own dims in the other order pair up by position but are not
// provably equal: the choice stays a run-time one.
// CHECK-LABEL: func.func @swapped_own_dims
// CHECK:       scf.if
// CHECK:         tensor.expand_shape
// CHECK:       } else {
// CHECK:         tensor.reshape
func.func @swapped_own_dims(%x: tensor<?x?x64xf32>) -> tensor<?x?x4x16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %d0 = tensor.dim %x, %c0 : tensor<?x?x64xf32>
  %d1 = tensor.dim %x, %c1 : tensor<?x?x64xf32>
  %b = arith.index_cast %d0 : index to i64
  %s = arith.index_cast %d1 : index to i64
  %c4 = arith.constant 4 : i64
  %c16 = arith.constant 16 : i64
  %shape = tensor.from_elements %s, %b, %c4, %c16 : tensor<4xi64>
  %y = kiln.dynamic_reshape %x, %shape {allow_zero = false, static_shape = array<i64: -1, -1, 4, 16>} : (tensor<?x?x64xf32>, tensor<4xi64>) -> tensor<?x?x4x16xf32>
  return %y : tensor<?x?x4x16xf32>
}

// -----

// [B, S, 64] x [64, 32] with run-time B and S: one linalg.matmul over the
// collapsed rows, then the rows expanded back with the lhs's extents.
// CHECK-LABEL: func.func @rows_matmul
// CHECK-SAME:    (%[[A:.+]]: tensor<?x?x64xf32>, %[[W:.+]]: tensor<64x32xf32>)
// CHECK:       %[[C:.+]] = tensor.collapse_shape %[[A]] {{\[\[}}0, 1], [2]] : tensor<?x?x64xf32> into tensor<?x64xf32>
// CHECK:       %[[M:.+]] = linalg.matmul ins(%[[C]], %[[W]] : tensor<?x64xf32>, tensor<64x32xf32>)
// CHECK:       tensor.expand_shape %[[M]] {{\[\[}}0, 1], [2]] output_shape [%{{.+}}, %{{.+}}, 32] : tensor<?x32xf32> into tensor<?x?x32xf32>
func.func @rows_matmul(%a: tensor<?x?x64xf32>, %w: tensor<64x32xf32>) -> tensor<?x?x32xf32> {
  %y = kiln.matmul %a, %w : (tensor<?x?x64xf32>, tensor<64x32xf32>) -> tensor<?x?x32xf32>
  return %y : tensor<?x?x32xf32>
}

// -----

// Elementwise ops take their run-time extents from an operand that is not
// broadcast along that dim.
// CHECK-LABEL: func.func @add_bias
// CHECK-SAME:    (%[[X:.+]]: tensor<?x?x64xf32>, %[[B:.+]]: tensor<64xf32>)
// CHECK-DAG:   %[[D0:.+]] = tensor.dim %[[X]], %c0
// CHECK-DAG:   %[[D1:.+]] = tensor.dim %[[X]], %c1
// CHECK:       tensor.empty(%[[D0]], %[[D1]]) : tensor<?x?x64xf32>
func.func @add_bias(%x: tensor<?x?x64xf32>, %b: tensor<64xf32>) -> tensor<?x?x64xf32> {
  %y = kiln.add %x, %b : (tensor<?x?x64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
  return %y : tensor<?x?x64xf32>
}

// -----

// The positions of the nonzero elements: a loop counts them, a second one
// writes them into a tensor of that extent.
// CHECK-LABEL: func.func @nonzero_indices
// CHECK-SAME:    (%[[C:.+]]: tensor<8xi1>)
// CHECK:       %[[N:.+]] = scf.for {{.+}} iter_args(%{{.+}} = %{{.+}}) -> (index)
// CHECK:       %[[E:.+]] = tensor.empty(%[[N]]) : tensor<?xi64>
// CHECK:       %[[R:.+]]:2 = scf.for {{.+}} iter_args(%[[OUT:.+]] = %[[E]], %[[K:.+]] = %{{.+}}) -> (tensor<?xi64>, index)
// CHECK:         scf.if
// CHECK:           %[[P:.+]] = arith.index_cast %{{.+}} : index to i64
// CHECK:           tensor.insert %[[P]] into %[[OUT]][%[[K]]] : tensor<?xi64>
// CHECK:       return %[[R]]#0
func.func @nonzero_indices(%c: tensor<8xi1>) -> tensor<?xi64> {
  %p = kiln.nonzero_indices %c : (tensor<8xi1>) -> tensor<?xi64>
  return %p : tensor<?xi64>
}

// -----

// A slice with bounds computed from a symbolic dim (GPT-2's mask[:, :, :s,
// :s]): ONNX's bounds clamped to the extent at run time, then a view.
// CHECK-LABEL: func.func @dynamic_slice
// CHECK-SAME:    (%[[M:.+]]: tensor<1x1x512x512xi1>, %[[S:.+]]: i64)
// CHECK:       %[[SI:.+]] = arith.index_cast %[[S]] : i64 to index
// CHECK:       arith.cmpi slt, %[[SI]], %{{.+}} : index
// CHECK:       %[[E:.+]] = arith.minsi %{{.+}}, %{{.+}} : index
// CHECK:       tensor.extract_slice %[[M]][0, 0, 0, 0] [1, 1, %{{.+}}, %{{.+}}] [1, 1, 1, 1] : tensor<1x1x512x512xi1> to tensor<1x1x?x?xi1>
func.func @dynamic_slice(%m: tensor<1x1x512x512xi1>, %s: i64) -> tensor<1x1x?x?xi1> {
  %starts = arith.constant dense<0> : tensor<4xi64>
  %c1 = arith.constant 1 : i64
  %ends = tensor.from_elements %c1, %c1, %s, %s : tensor<4xi64>
  %y = kiln.dynamic_slice %m, %starts, %ends {static_shape = array<i64: 1, 1, -1, -1>} : (tensor<1x1x512x512xi1>, tensor<4xi64>, tensor<4xi64>) -> tensor<1x1x?x?xi1>
  return %y : tensor<1x1x?x?xi1>
}

// -----

// Steps (`x[:, 1::2]` over a run-time dim): the extent is
// ceil((end - start) / step), the step the slice's stride.
// CHECK-LABEL: func.func @dynamic_slice_steps
// CHECK:       %[[N:.+]] = arith.addi %{{.+}}, %c1 : index
// CHECK:       %[[SIZE:.+]] = arith.divui %[[N]], %c2 : index
// CHECK:       tensor.extract_slice %{{.+}}[0, %{{.+}}] [3, %[[SIZE]]] [1, 2] : tensor<3x?xf32> to tensor<3x?xf32>
func.func @dynamic_slice_steps(%x: tensor<3x?xf32>) -> tensor<3x?xf32> {
  %starts = arith.constant dense<[0, 1]> : tensor<2xi64>
  %ends = arith.constant dense<[3, 1099511627776]> : tensor<2xi64>
  %y = kiln.dynamic_slice %x, %starts, %ends {static_shape = array<i64: 3, -1>, steps = array<i64: 1, 2>} : (tensor<3x?xf32>, tensor<2xi64>, tensor<2xi64>) -> tensor<3x?xf32>
  return %y : tensor<3x?xf32>
}

// -----

// A negative step (`x[:, ::-1]`, torch.flip): the elements taken are read
// upwards as a strided view from the lowest one, then reversed by a copy
// that reads extent - 1 - i.
// CHECK-LABEL: func.func @dynamic_slice_reversed
// CHECK:       %[[V:.+]] = tensor.extract_slice %arg0[0, %{{.+}}] [3, %[[SIZE:.+]]] [1, 1] : tensor<3x?xf32> to tensor<3x?xf32>
// CHECK:       tensor.empty(%[[SIZE]]) : tensor<3x?xf32>
// CHECK:       linalg.generic
// CHECK:         %[[I:.+]] = linalg.index 1 : index
// CHECK:         %[[R:.+]] = arith.subi %{{.+}}, %[[I]] : index
// CHECK:         tensor.extract %[[V]][%{{.+}}, %[[R]]] : tensor<3x?xf32>
func.func @dynamic_slice_reversed(%x: tensor<3x?xf32>) -> tensor<3x?xf32> {
  %starts = arith.constant dense<[0, -1]> : tensor<2xi64>
  %ends = arith.constant dense<[3, -4611686018427387904]> : tensor<2xi64>
  %y = kiln.dynamic_slice %x, %starts, %ends {static_shape = array<i64: 3, -1>, steps = array<i64: 1, -1>} : (tensor<3x?xf32>, tensor<2xi64>, tensor<2xi64>) -> tensor<3x?xf32>
  return %y : tensor<3x?xf32>
}

// -----

// A convolution over a run-time height and width: each result extent is
// (in + pads - span) / stride + 1, read as the model runs, after a check
// that the padded input holds one window; the conv itself is unchanged.
// CHECK-LABEL: func.func @conv_run_time_hw
// CHECK-DAG:   %[[C2:.+]] = arith.constant 2 : index
// CHECK-DAG:   %[[C3:.+]] = arith.constant 3 : index
// CHECK:       %[[H:.+]] = tensor.dim %arg0, %[[C2]] : tensor<1x3x?x?xf32>
// CHECK:       %[[PH:.+]] = arith.addi %[[H]], %[[C2]] : index
// CHECK:       %[[OK:.+]] = arith.cmpi sge, %[[PH]], %[[C3]] : index
// CHECK:       cf.assert %[[OK]], "node '?': spatial dim 2 of the input is smaller than the window (3 with the padding)"
// CHECK:       arith.divui %{{.+}}, %[[C2]] : index
// CHECK:       cf.assert %{{.+}}, "node '?': spatial dim 3 of the input is smaller than the window (3 with the padding)"
// CHECK:       %[[PAD:.+]] = tensor.pad %arg0 low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK:       %[[E:.+]] = tensor.empty(%{{.+}}, %{{.+}}) : tensor<1x4x?x?xf32>
// CHECK:       linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
// CHECK-SAME:    ins(%[[PAD]], %arg1 : tensor<1x3x?x?xf32>, tensor<4x3x3x3xf32>)
// CHECK-SAME:    -> tensor<1x4x?x?xf32>
func.func @conv_run_time_hw(%x: tensor<1x3x?x?xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x?x?xf32> {
  %y = kiln.conv %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x3x?x?xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x?x?xf32>
  return %y : tensor<1x4x?x?xf32>
}

// -----

// A max pool over a run-time height and width: its extents come the same
// way; no padding past the declared one (no ceil_mode at run time).
// CHECK-LABEL: func.func @max_pool_run_time_hw
// CHECK:       cf.assert %{{.+}}, "node '?': spatial dim 2 of the input is smaller than the window (2 with the padding)"
// CHECK:       %[[E:.+]] = tensor.empty(%{{.+}}, %{{.+}}) : tensor<1x8x?x?xf32>
// CHECK:       linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
// CHECK-SAME:    ins(%arg0, %{{.+}} : tensor<1x8x?x?xf32>, tensor<2x2xf32>)
func.func @max_pool_run_time_hw(%x: tensor<1x8x?x?xf32>) -> tensor<1x8x?x?xf32> {
  %y = kiln.max_pool %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x8x?x?xf32>) -> tensor<1x8x?x?xf32>
  return %y : tensor<1x8x?x?xf32>
}

// -----

// A convolution over a run-time image: an im2col copy (the window read
// through the affine map), one matmul of run-time rows with the filter
// transposed at compile time to [C*KH*KW, F], the bias broadcast over its
// rows, then back to NCHW.
// CHECK: #[[IM2COL:.+]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d3, d1 * 2 + d4, d2 + d5 * 2)>
// CHECK-LABEL: func.func @conv_run_time_image
// CHECK-DAG: %[[WT:.+]] = arith.constant dense_resource<im2col_filter{{.*}}> : tensor<12x2xf32>
// CHECK: %[[PAD:.+]] = tensor.pad
// CHECK: %[[COLS:.+]] = linalg.generic {indexing_maps = [#[[IM2COL]],
// CHECK-SAME: ins(%[[PAD]] : tensor<1x3x?x?xf32>) outs(%{{.+}} : tensor<1x?x?x3x2x2xf32>)
// CHECK: %[[ROWS:.+]] = tensor.collapse_shape %[[COLS]] {{\[}}[0, 1, 2], [3, 4, 5]] : tensor<1x?x?x3x2x2xf32> into tensor<?x12xf32>
// CHECK: %[[BIAS:.+]] = linalg.broadcast ins(%{{.+}} : tensor<2xf32>) outs(%{{.+}} : tensor<?x2xf32>) dimensions = [0]
// CHECK: %[[MM:.+]] = linalg.matmul ins(%[[ROWS]], %[[WT]] : tensor<?x12xf32>, tensor<12x2xf32>) outs(%[[BIAS]] : tensor<?x2xf32>)
// CHECK: %[[IMG:.+]] = tensor.expand_shape %[[MM]] {{\[}}[0, 1, 2], [3]]
// CHECK: linalg.transpose ins(%[[IMG]] : tensor<1x?x?x2xf32>) outs(%{{.+}} : tensor<1x2x?x?xf32>) permutation = [0, 3, 1, 2]
// CHECK-NOT: linalg.conv_2d
func.func @conv_run_time_image(%x: tensor<1x3x?x?xf32>) -> tensor<1x2x?x?xf32> {
  %w = kiln.constant dense<[[[[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0], [7.0, 8.0]], [[9.0, 10.0], [11.0, 12.0]]], [[[13.0, 14.0], [15.0, 16.0]], [[17.0, 18.0], [19.0, 20.0]], [[21.0, 22.0], [23.0, 24.0]]]]> : tensor<2x3x2x2xf32>
  %b = kiln.constant dense<[0.5, -0.5]> : tensor<2xf32>
  %y = kiln.conv %x, %w, %b {dilations = array<i64: 1, 2>, group = 1 : i64, pads = array<i64: 1, 0, 1, 0>, strides = array<i64: 2, 1>} : (tensor<1x3x?x?xf32>, tensor<2x3x2x2xf32>, tensor<2xf32>) -> tensor<1x2x?x?xf32>
  return %y : tensor<1x2x?x?xf32>
}
