// RUN: kiln-opt %s -kiln-lower-to-linalg -split-input-file | FileCheck %s

// Reduced dims are reduction loops missing from the output map; keepdims is
// an expand_shape of the reduced tensor.
// CHECK-DAG: #[[$ID:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[$KEEP:.+]] = affine_map<(d0, d1, d2) -> (d0)>
// CHECK-LABEL: func.func @reduce_sum_keepdims
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x4xf32>)
// CHECK: %[[Z:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[INIT:.+]] = linalg.fill ins(%[[Z]] : f32) outs(%{{.+}} : tensor<2xf32>)
// CHECK: %[[R:.+]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$KEEP]]], iterator_types = ["parallel", "reduction", "reduction"]}
// CHECK-SAME: ins(%[[X]] : tensor<2x3x4xf32>) outs(%[[INIT]] : tensor<2xf32>)
// CHECK: ^bb0(%[[E:.+]]: f32, %[[ACC:.+]]: f32):
// CHECK: arith.addf %[[E]], %[[ACC]] : f32
// CHECK: %[[K:.+]] = tensor.expand_shape %[[R]] {{\[}}[0, 1, 2]] output_shape [2, 1, 1] : tensor<2xf32> into tensor<2x1x1xf32>
// CHECK: return %[[K]]
func.func @reduce_sum_keepdims(%x: tensor<2x3x4xf32>) -> tensor<2x1x1xf32> {
  %y = kiln.reduce_sum %x {axes = array<i64: 1, 2>, keepdims = true} : (tensor<2x3x4xf32>) -> tensor<2x1x1xf32>
  return %y : tensor<2x1x1xf32>
}

// -----

// Non-adjacent axes, no keepdims: no reshape at all.
// CHECK-DAG: #[[$MID:.+]] = affine_map<(d0, d1, d2) -> (d1)>
// CHECK-LABEL: func.func @reduce_sum_outer_axes
// CHECK: linalg.generic {indexing_maps = [#{{.+}}, #[[$MID]]], iterator_types = ["reduction", "parallel", "reduction"]}
// CHECK-SAME: outs(%{{.+}} : tensor<3xi64>)
// CHECK: arith.addi
// CHECK-NOT: tensor.expand_shape
func.func @reduce_sum_outer_axes(%x: tensor<2x3x4xi64>) -> tensor<3xi64> {
  %y = kiln.reduce_sum %x {axes = array<i64: 0, 2>, keepdims = false} : (tensor<2x3x4xi64>) -> tensor<3xi64>
  return %y : tensor<3xi64>
}

// -----

// Mean: sum, then divide by the element count on the reduced tensor.
// CHECK-LABEL: func.func @reduce_mean_float
// CHECK: %[[SUM:.+]] = linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel", "reduction", "reduction"]
// CHECK-SAME: outs(%{{.+}} : tensor<1x512xf32>)
// CHECK: %[[MEAN:.+]] = linalg.generic
// CHECK-SAME: ins(%[[SUM]] : tensor<1x512xf32>) outs(%{{.+}} : tensor<1x512xf32>)
// CHECK: %[[N:.+]] = arith.constant 4.900000e+01 : f32
// CHECK: arith.divf %{{.+}}, %[[N]] : f32
// CHECK: tensor.expand_shape %[[MEAN]] {{\[}}[0], [1, 2, 3]] output_shape [1, 512, 1, 1]
func.func @reduce_mean_float(%x: tensor<1x512x7x7xf32>) -> tensor<1x512x1x1xf32> {
  %y = kiln.reduce_mean %x {axes = array<i64: 2, 3>} : (tensor<1x512x7x7xf32>) -> tensor<1x512x1x1xf32>
  return %y : tensor<1x512x1x1xf32>
}

// Mean over a run-time extent: the count is that extent times the static
// ones, computed once before the division.
// CHECK-LABEL: func.func @reduce_mean_run_time
// CHECK-SAME: (%[[X:.+]]: tensor<2x?x4xf32>)
// CHECK: %[[SUM:.+]] = linalg.generic
// CHECK: %[[C1:.+]] = arith.constant 1 : index
// CHECK: %[[T:.+]] = tensor.dim %[[X]], %[[C1]] : tensor<2x?x4xf32>
// CHECK: %[[C4:.+]] = arith.constant 4 : index
// CHECK: %[[TN:.+]] = arith.muli %[[T]], %[[C4]] : index
// CHECK: %[[I:.+]] = arith.index_cast %[[TN]] : index to i64
// CHECK: %[[N:.+]] = arith.sitofp %[[I]] : i64 to f32
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[SUM]] : tensor<2xf32>)
// CHECK: arith.divf %{{.+}}, %[[N]] : f32
func.func @reduce_mean_run_time(%x: tensor<2x?x4xf32>) -> tensor<2xf32> {
  %y = kiln.reduce_mean %x {axes = array<i64: 1, 2>, keepdims = false} : (tensor<2x?x4xf32>) -> tensor<2xf32>
  return %y : tensor<2xf32>
}

// Integer means divide as the type's signedness says.
// CHECK-LABEL: func.func @reduce_mean_int
// CHECK: arith.addi
// CHECK: %[[N:.+]] = arith.constant 3 : i32
// CHECK: arith.divsi %{{.+}}, %[[N]] : i32
// CHECK: arith.addi
// CHECK: %[[N2:.+]] = arith.constant 3 : i16
// CHECK: arith.divui %{{.+}}, %[[N2]] : i16
func.func @reduce_mean_int(%x: tensor<2x3xi32>, %u: tensor<2x3xui16>) -> (tensor<2xi32>, tensor<2xui16>) {
  %y = kiln.reduce_mean %x {axes = array<i64: 1>, keepdims = false} : (tensor<2x3xi32>) -> tensor<2xi32>
  %z = kiln.reduce_mean %u {axes = array<i64: 1>, keepdims = false} : (tensor<2x3xui16>) -> tensor<2xui16>
  return %y, %z : tensor<2xi32>, tensor<2xui16>
}

// f16 sums accumulate in f32.
// CHECK-LABEL: func.func @reduce_sum_f16
// CHECK: linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<4xf32>)
// CHECK: ^bb0(%[[E:.+]]: f16, %[[ACC:.+]]: f32):
// CHECK: %[[W:.+]] = arith.extf %[[E]] : f16 to f32
// CHECK: arith.addf %[[W]], %[[ACC]] : f32
// CHECK: linalg.generic
// CHECK-SAME: outs(%{{.+}} : tensor<4xf16>)
// CHECK: arith.truncf %{{.+}} : f32 to f16
func.func @reduce_sum_f16(%x: tensor<4x64xf16>) -> tensor<4xf16> {
  %y = kiln.reduce_sum %x {axes = array<i64: 1>, keepdims = false} : (tensor<4x64xf16>) -> tensor<4xf16>
  return %y : tensor<4xf16>
}

// -----

// Max/min start from the type's extreme values.
// CHECK-LABEL: func.func @reduce_max_min
// CHECK: %[[NEGINF:.+]] = arith.constant 0xFF800000 : f32
// CHECK: linalg.fill ins(%[[NEGINF]] : f32)
// CHECK: arith.maximumf
// CHECK: %[[IMAX:.+]] = arith.constant 2147483647 : i32
// CHECK: linalg.fill ins(%[[IMAX]] : i32)
// CHECK: arith.minsi
// CHECK: %[[UZERO:.+]] = arith.constant 0 : i8
// CHECK: linalg.fill ins(%[[UZERO]] : i8)
// CHECK: arith.maxui
// CHECK: %[[UMAX:.+]] = arith.constant -1 : i8
// CHECK: linalg.fill ins(%[[UMAX]] : i8)
// CHECK: arith.minui
func.func @reduce_max_min(%f: tensor<2x3xf32>, %i: tensor<2x3xi32>, %u: tensor<2x3xui8>) -> (tensor<2x1xf32>, tensor<2x1xi32>, tensor<3xui8>, tensor<3xui8>) {
  %0 = kiln.reduce_max %f {axes = array<i64: 1>} : (tensor<2x3xf32>) -> tensor<2x1xf32>
  %1 = kiln.reduce_min %i {axes = array<i64: 1>} : (tensor<2x3xi32>) -> tensor<2x1xi32>
  %2 = kiln.reduce_max %u {axes = array<i64: 0>, keepdims = false} : (tensor<2x3xui8>) -> tensor<3xui8>
  %3 = kiln.reduce_min %u {axes = array<i64: 0>, keepdims = false} : (tensor<2x3xui8>) -> tensor<3xui8>
  return %0, %1, %2, %3 : tensor<2x1xf32>, tensor<2x1xi32>, tensor<3xui8>, tensor<3xui8>
}

// -----

// Reducing every dim gives a rank-0 tensor; keepdims expands it.
// CHECK-DAG: #[[$ALL:.+]] = affine_map<(d0, d1) -> ()>
// CHECK-LABEL: func.func @reduce_all
// CHECK: %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// CHECK: linalg.fill ins(%[[ONE]] : f32) outs(%{{.+}} : tensor<f32>)
// CHECK: linalg.generic {indexing_maps = [#{{.+}}, #[[$ALL]]], iterator_types = ["reduction", "reduction"]}
// CHECK: arith.mulf
// CHECK: %[[POSINF:.+]] = arith.constant 0x7F800000 : f32
// CHECK: %[[MIN:.+]] = linalg.generic
// CHECK: arith.minimumf
// CHECK: tensor.expand_shape %[[MIN]] [] output_shape [1, 1] : tensor<f32> into tensor<1x1xf32>
func.func @reduce_all(%x: tensor<2x3xf32>) -> (tensor<f32>, tensor<1x1xf32>) {
  %y = kiln.reduce_prod %x {axes = array<i64: 0, 1>, keepdims = false} : (tensor<2x3xf32>) -> tensor<f32>
  %z = kiln.reduce_min %x {axes = array<i64: 0, 1>, keepdims = true} : (tensor<2x3xf32>) -> tensor<1x1xf32>
  return %y, %z : tensor<f32>, tensor<1x1xf32>
}

// Integer product starts at 1.
// CHECK-LABEL: func.func @reduce_prod_int
// CHECK: %[[ONE:.+]] = arith.constant 1 : i64
// CHECK: linalg.fill ins(%[[ONE]] : i64)
// CHECK: arith.muli
func.func @reduce_prod_int(%x: tensor<2x3xi64>) -> tensor<2xi64> {
  %y = kiln.reduce_prod %x {axes = array<i64: 1>, keepdims = false} : (tensor<2x3xi64>) -> tensor<2xi64>
  return %y : tensor<2xi64>
}

// -----

// No axes: nothing is reduced.
// CHECK-LABEL: func.func @reduce_no_axes
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32>)
// CHECK-NEXT: return %[[X]]
func.func @reduce_no_axes(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = kiln.reduce_max %x {axes = array<i64>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}
