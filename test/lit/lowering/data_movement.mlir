// RUN: kiln-opt %s -kiln-lower-to-linalg -split-input-file | FileCheck %s

// Reshape: a pure collapse or expand when one exists...
// CHECK-LABEL: func.func @reshape_collapse
// CHECK: %[[R:.+]] = tensor.collapse_shape %{{.+}} {{\[}}[0], [1, 2, 3]] : tensor<1x512x1x1xf32> into tensor<1x512xf32>
// CHECK: return %[[R]]
func.func @reshape_collapse(%x: tensor<1x512x1x1xf32>) -> tensor<1x512xf32> {
  %y = kiln.reshape %x {shape = array<i64: 1, 512>} : (tensor<1x512x1x1xf32>) -> tensor<1x512xf32>
  return %y : tensor<1x512xf32>
}
// CHECK-LABEL: func.func @reshape_expand
// CHECK: %[[R:.+]] = tensor.expand_shape %{{.+}} {{\[}}[0], [1], [2, 3]] output_shape [1, 128, 12, 64] : tensor<1x128x768xf32> into tensor<1x128x12x64xf32>
// CHECK: return %[[R]]
func.func @reshape_expand(%x: tensor<1x128x768xf32>) -> tensor<1x128x12x64xf32> {
  %y = kiln.reshape %x {shape = array<i64: 1, 128, 12, 64>} : (tensor<1x128x768xf32>) -> tensor<1x128x12x64xf32>
  return %y : tensor<1x128x12x64xf32>
}

// ...otherwise a collapse to the finest common grouping and an expand:
// [2, 3, 4] -> [6, 4] -> [6, 2, 2], not through [24].
// CHECK-LABEL: func.func @reshape_regroup
// CHECK: %[[C:.+]] = tensor.collapse_shape %{{.+}} {{\[}}[0, 1], [2]] : tensor<2x3x4xf32> into tensor<6x4xf32>
// CHECK: %[[E:.+]] = tensor.expand_shape %[[C]] {{\[}}[0], [1, 2]] output_shape [6, 2, 2] : tensor<6x4xf32> into tensor<6x2x2xf32>
// CHECK: return %[[E]]
func.func @reshape_regroup(%x: tensor<2x3x4xf32>) -> tensor<6x2x2xf32> {
  %y = kiln.reshape %x {shape = array<i64: 6, 2, 2>} : (tensor<2x3x4xf32>) -> tensor<6x2x2xf32>
  return %y : tensor<6x2x2xf32>
}

// No common grouping at all: through 1-D.
// CHECK-LABEL: func.func @reshape_through_1d
// CHECK: %[[C:.+]] = tensor.collapse_shape %{{.+}} {{\[}}[0, 1]] : tensor<4x6xf32> into tensor<24xf32>
// CHECK: tensor.expand_shape %[[C]] {{\[}}[0, 1]] output_shape [3, 8] : tensor<24xf32> into tensor<3x8xf32>
func.func @reshape_through_1d(%x: tensor<4x6xf32>) -> tensor<3x8xf32> {
  %y = kiln.reshape %x {shape = array<i64: 3, 8>} : (tensor<4x6xf32>) -> tensor<3x8xf32>
  return %y : tensor<3x8xf32>
}

// Rank 0 on either side: empty reassociation.
// CHECK-LABEL: func.func @reshape_rank0
// CHECK-SAME: (%{{.+}}: tensor<1x1xi8>, %{{.+}}: tensor<f32>) -> (tensor<i8>, tensor<1x1x1xf32>)
// CHECK: tensor.collapse_shape %{{.+}} [] : tensor<1x1xi8> into tensor<i8>
// CHECK: tensor.expand_shape %{{.+}} [] output_shape [1, 1, 1] : tensor<f32> into tensor<1x1x1xf32>
func.func @reshape_rank0(%a: tensor<1x1xui8>, %b: tensor<f32>) -> (tensor<ui8>, tensor<1x1x1xf32>) {
  %y = kiln.reshape %a {shape = array<i64>} : (tensor<1x1xui8>) -> tensor<ui8>
  %z = kiln.reshape %b {shape = array<i64: 1, 1, 1>} : (tensor<f32>) -> tensor<1x1x1xf32>
  return %y, %z : tensor<ui8>, tensor<1x1x1xf32>
}

// -----

// CHECK-LABEL: func.func @transpose
// CHECK-SAME: (%[[X:.+]]: tensor<1x128x12x64xf32>)
// CHECK: %[[E:.+]] = tensor.empty() : tensor<1x12x128x64xf32>
// CHECK: %[[T:.+]] = linalg.transpose ins(%[[X]] : tensor<1x128x12x64xf32>) outs(%[[E]] : tensor<1x12x128x64xf32>) permutation = [0, 2, 1, 3]
// CHECK: return %[[T]]
func.func @transpose(%x: tensor<1x128x12x64xf32>) -> tensor<1x12x128x64xf32> {
  %y = kiln.transpose %x {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x128x12x64xf32>) -> tensor<1x12x128x64xf32>
  return %y : tensor<1x12x128x64xf32>
}

// -----

// Concat: one insert_slice per input at a running offset; empty inputs are
// skipped.
// CHECK-LABEL: func.func @concat
// CHECK-SAME: (%[[A:.+]]: tensor<2x3xf32>, %[[B:.+]]: tensor<2x0xf32>, %[[C:.+]]: tensor<2x2xf32>)
// CHECK: %[[E:.+]] = tensor.empty() : tensor<2x5xf32>
// CHECK: %[[I0:.+]] = tensor.insert_slice %[[A]] into %[[E]][0, 0] [2, 3] [1, 1] : tensor<2x3xf32> into tensor<2x5xf32>
// CHECK-NOT: %[[B]]
// CHECK: %[[I1:.+]] = tensor.insert_slice %[[C]] into %[[I0]][0, 3] [2, 2] [1, 1] : tensor<2x2xf32> into tensor<2x5xf32>
// CHECK: return %[[I1]]
func.func @concat(%a: tensor<2x3xf32>, %b: tensor<2x0xf32>, %c: tensor<2x2xf32>) -> tensor<2x5xf32> {
  %y = kiln.concat %a, %b, %c {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x0xf32>, tensor<2x2xf32>) -> tensor<2x5xf32>
  return %y : tensor<2x5xf32>
}

// CHECK-LABEL: func.func @concat_axis0_unsigned
// CHECK: tensor.insert_slice %{{.+}} into %{{.+}}[0, 0, 0] [1, 4, 4] [1, 1, 1] : tensor<1x4x4xi8> into tensor<3x4x4xi8>
// CHECK: tensor.insert_slice %{{.+}} into %{{.+}}[1, 0, 0] [2, 4, 4] [1, 1, 1] : tensor<2x4x4xi8> into tensor<3x4x4xi8>
func.func @concat_axis0_unsigned(%a: tensor<1x4x4xui8>, %b: tensor<2x4x4xui8>) -> tensor<3x4x4xui8> {
  %y = kiln.concat %a, %b {axis = 0 : i64} : (tensor<1x4x4xui8>, tensor<2x4x4xui8>) -> tensor<3x4x4xui8>
  return %y : tensor<3x4x4xui8>
}

// -----

// Maps of the negative-step slices below.
// CHECK-DAG: #[[$BACK:.+]] = affine_map<(d0, d1) -> (-d0 + 3, d1 * 2 + 1)>
// CHECK-DAG: #[[$ID:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$BACK2:.+]] = affine_map<(d0) -> (d0 * -2 + 4)>

// Positive steps: extract_slice with the steps as strides.
// CHECK-LABEL: func.func @slice_positive
// CHECK: %[[S:.+]] = tensor.extract_slice %{{.+}}[1, 0] [2, 3] [3, 2] : tensor<5x6xf32> to tensor<2x3xf32>
// CHECK: return %[[S]]
func.func @slice_positive(%x: tensor<5x6xf32>) -> tensor<2x3xf32> {
  %y = kiln.slice %x {starts = array<i64: 1, 0>, ends = array<i64: 5, 5>, steps = array<i64: 3, 2>} : (tensor<5x6xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}

// A negative step anywhere: a copy generic whose input map walks backwards.
// CHECK-LABEL: func.func @slice_negative
// CHECK-SAME: (%[[X:.+]]: tensor<5x6xf32>)
// CHECK: linalg.generic {indexing_maps = [#[[$BACK]], #[[$ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: ins(%[[X]] : tensor<5x6xf32>) outs(%{{.+}} : tensor<4x3xf32>)
// CHECK: ^bb0(%[[E:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT: linalg.yield %[[E]] : f32
func.func @slice_negative(%x: tensor<5x6xf32>) -> tensor<4x3xf32> {
  %y = kiln.slice %x {starts = array<i64: 3, 1>, ends = array<i64: -1, 6>, steps = array<i64: -1, 2>} : (tensor<5x6xf32>) -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}

// CHECK-LABEL: func.func @slice_negative_stride2
// CHECK: linalg.generic {indexing_maps = [#[[$BACK2]], #{{.+}}]
// CHECK-SAME: outs(%{{.+}} : tensor<3xi64>)
func.func @slice_negative_stride2(%x: tensor<5xi64>) -> tensor<3xi64> {
  %y = kiln.slice %x {starts = array<i64: 4>, ends = array<i64: -1>, steps = array<i64: -2>} : (tensor<5xi64>) -> tensor<3xi64>
  return %y : tensor<3xi64>
}

// Nothing selected: an empty tensor.
// CHECK-LABEL: func.func @slice_empty
// CHECK-NEXT: %[[E:.+]] = tensor.empty() : tensor<0x3xf32>
// CHECK-NEXT: return %[[E]]
func.func @slice_empty(%x: tensor<2x3xf32>) -> tensor<0x3xf32> {
  %y = kiln.slice %x {starts = array<i64: 1, 0>, ends = array<i64: 1, 3>, steps = array<i64: 1, 1>} : (tensor<2x3xf32>) -> tensor<0x3xf32>
  return %y : tensor<0x3xf32>
}

// -----

// Gather: a generic over the result, reading the indices through their dims
// and the data with tensor.extract; negative indices wrap once, then the
// index is clamped into [0, dim - 1].
// CHECK-DAG: #[[$IDX:.+]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[$OUT:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @gather_axis0
// CHECK-SAME: (%[[T:.+]]: tensor<1000x64xf32>, %[[I:.+]]: tensor<1x16xi64>)
// CHECK: linalg.generic {indexing_maps = [#[[$IDX]], #[[$OUT]]], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-SAME: ins(%[[I]] : tensor<1x16xi64>) outs(%{{.+}} : tensor<1x16x64xf32>)
// CHECK: ^bb0(%[[V:.+]]: i64, %{{.+}}: f32):
// CHECK: %[[IDX:.+]] = arith.index_cast %[[V]] : i64 to index
// CHECK-DAG: %[[SIZE:.+]] = arith.constant 1000 : index
// CHECK-DAG: %[[ZERO:.+]] = arith.constant 0 : index
// CHECK: %[[NEG:.+]] = arith.cmpi slt, %[[IDX]], %[[ZERO]] : index
// CHECK: %[[WRAPPED:.+]] = arith.addi %[[IDX]], %[[SIZE]] : index
// CHECK: %[[SEL:.+]] = arith.select %[[NEG]], %[[WRAPPED]], %[[IDX]] : index
// CHECK: %[[LO:.+]] = arith.maxsi %[[SEL]], %[[ZERO]] : index
// CHECK: %[[LAST:.+]] = arith.constant 999 : index
// CHECK: %[[CL:.+]] = arith.minsi %[[LO]], %[[LAST]] : index
// CHECK: %[[J:.+]] = linalg.index 2 : index
// CHECK: %[[E:.+]] = tensor.extract %[[T]][%[[CL]], %[[J]]] : tensor<1000x64xf32>
// CHECK: linalg.yield %[[E]] : f32
func.func @gather_axis0(%t: tensor<1000x64xf32>, %i: tensor<1x16xi64>) -> tensor<1x16x64xf32> {
  %y = kiln.gather %t, %i {axis = 0 : i64} : (tensor<1000x64xf32>, tensor<1x16xi64>) -> tensor<1x16x64xf32>
  return %y : tensor<1x16x64xf32>
}

// -----

// Gather on an inner axis with unsigned indices: no wrap, unsigned clamp.
// CHECK-DAG: #[[$IDX:.+]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-LABEL: func.func @gather_unsigned_inner_axis
// CHECK-SAME: (%[[T:.+]]: tensor<5x3xf32>, %[[I:.+]]: tensor<2x2xi8>)
// CHECK: linalg.generic {indexing_maps = [#[[$IDX]], #{{.+}}]
// CHECK: ^bb0(%[[V:.+]]: i8, %{{.+}}: f32):
// CHECK: %[[IDX:.+]] = arith.index_castui %[[V]] : i8 to index
// CHECK-NOT: arith.cmpi
// CHECK: %[[LAST:.+]] = arith.constant 2 : index
// CHECK: %[[CL:.+]] = arith.minui %[[IDX]], %[[LAST]] : index
// CHECK: %[[I0:.+]] = linalg.index 0 : index
// CHECK: tensor.extract %[[T]][%[[I0]], %[[CL]]] : tensor<5x3xf32>
func.func @gather_unsigned_inner_axis(%t: tensor<5x3xf32>, %i: tensor<2x2xui8>) -> tensor<5x2x2xf32> {
  %y = kiln.gather %t, %i {axis = 1 : i64} : (tensor<5x3xf32>, tensor<2x2xui8>) -> tensor<5x2x2xf32>
  return %y : tensor<5x2x2xf32>
}

// -----

// Scalar index: the axis disappears from the result.
// CHECK-DAG: #[[$SCALAR:.+]] = affine_map<(d0) -> ()>
// CHECK-LABEL: func.func @gather_scalar_index
// CHECK: linalg.generic {indexing_maps = [#[[$SCALAR]], #{{.+}}]
// CHECK-SAME: ins(%{{.+}} : tensor<i32>) outs(%{{.+}} : tensor<3xf32>)
// CHECK: %[[J:.+]] = linalg.index 0 : index
// CHECK: tensor.extract %{{.+}}[%{{.+}}, %[[J]]] : tensor<5x3xf32>
func.func @gather_scalar_index(%t: tensor<5x3xf32>, %i: tensor<i32>) -> tensor<3xf32> {
  %y = kiln.gather %t, %i {axis = 0 : i64} : (tensor<5x3xf32>, tensor<i32>) -> tensor<3xf32>
  return %y : tensor<3xf32>
}

// -----

// Expand: a broadcasting copy; the input's unit dim is collapsed away.
// CHECK-DAG: #[[$IN:.+]] = affine_map<(d0, d1, d2) -> (d1)>
// CHECK-DAG: #[[$OUT:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @expand
// CHECK-SAME: (%[[X:.+]]: tensor<3x1xf32>)
// CHECK: %[[C:.+]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1]] : tensor<3x1xf32> into tensor<3xf32>
// CHECK: linalg.generic {indexing_maps = [#[[$IN]], #[[$OUT]]], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-SAME: ins(%[[C]] : tensor<3xf32>) outs(%{{.+}} : tensor<2x3x4xf32>)
// CHECK: ^bb0(%[[E:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT: linalg.yield %[[E]] : f32
func.func @expand(%x: tensor<3x1xf32>) -> tensor<2x3x4xf32> {
  %y = kiln.expand %x {shape = array<i64: 2, 3, 4>} : (tensor<3x1xf32>) -> tensor<2x3x4xf32>
  return %y : tensor<2x3x4xf32>
}
