// RUN: kiln-opt %s | kiln-opt | FileCheck %s

// Round trip of the indexing ops.

// CHECK-LABEL: func.func @gathers
// CHECK: kiln.gather_elements %{{.+}}, %{{.+}} {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x2xi64>) -> tensor<2x2xf32>
// CHECK: kiln.gather_nd %{{.+}}, %{{.+}} {batch_dims = 1 : i64} : (tensor<2x2x2xi32>, tensor<2x1xi64>) -> tensor<2x2xi32>
func.func @gathers(%d: tensor<2x3xf32>, %i: tensor<2x2xi64>, %e: tensor<2x2x2xi32>, %j: tensor<2x1xi64>) -> (tensor<2x2xf32>, tensor<2x2xi32>) {
  %0 = kiln.gather_elements %d, %i {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x2xi64>) -> tensor<2x2xf32>
  %1 = kiln.gather_nd %e, %j {batch_dims = 1 : i64} : (tensor<2x2x2xi32>, tensor<2x1xi64>) -> tensor<2x2xi32>
  return %0, %1 : tensor<2x2xf32>, tensor<2x2xi32>
}

// CHECK-LABEL: func.func @scatters
// CHECK: kiln.scatter_elements %{{.+}}, %{{.+}}, %{{.+}} {axis = 1 : i64, reduction = "add"}
// CHECK: kiln.scatter_nd %{{.+}}, %{{.+}}, %{{.+}} :
func.func @scatters(%d: tensor<1x5xf32>, %i: tensor<1x2xi64>, %u: tensor<1x2xf32>, %e: tensor<8xf32>, %j: tensor<4x1xi64>, %v: tensor<4xf32>) -> (tensor<1x5xf32>, tensor<8xf32>) {
  %0 = kiln.scatter_elements %d, %i, %u {axis = 1 : i64, reduction = "add"} : (tensor<1x5xf32>, tensor<1x2xi64>, tensor<1x2xf32>) -> tensor<1x5xf32>
  %1 = kiln.scatter_nd %e, %j, %v : (tensor<8xf32>, tensor<4x1xi64>, tensor<4xf32>) -> tensor<8xf32>
  return %0, %1 : tensor<1x5xf32>, tensor<8xf32>
}

// CHECK-LABEL: func.func @layout
// CHECK: kiln.trilu %{{.+}}, %{{.+}} {upper = true}
// CHECK: kiln.reverse_sequence %{{.+}}, %{{.+}} {batch_axis = 1 : i64, time_axis = 0 : i64}
// CHECK: kiln.pad %{{.+}}, %{{.+}} {mode = "reflect", pads = array<i64: 0, 2, 0, 1>} : (tensor<3x4xf32>, tensor<f32>) -> tensor<3x7xf32>
// CHECK: kiln.topk %{{.+}} {axis = 1 : i64, k = 2 : i64, largest = false} : (tensor<3x4xf32>) -> (tensor<3x2xf32>, tensor<3x2xi64>)
func.func @layout(%x: tensor<3x4xf32>, %k: tensor<i64>, %s: tensor<4x4xf32>, %l: tensor<4xi64>, %v: tensor<f32>) {
  %0 = kiln.trilu %x, %k {upper = true} : (tensor<3x4xf32>, tensor<i64>) -> tensor<3x4xf32>
  %1 = kiln.reverse_sequence %s, %l {batch_axis = 1 : i64, time_axis = 0 : i64} : (tensor<4x4xf32>, tensor<4xi64>) -> tensor<4x4xf32>
  %2 = kiln.pad %x, %v {mode = "reflect", pads = array<i64: 0, 2, 0, 1>} : (tensor<3x4xf32>, tensor<f32>) -> tensor<3x7xf32>
  %3:2 = kiln.topk %x {axis = 1 : i64, k = 2 : i64, largest = false} : (tensor<3x4xf32>) -> (tensor<3x2xf32>, tensor<3x2xi64>)
  return
}

// Interior pads: 3 + 2 * 2 + 1 + 0 = 8; a run-time extent stays one.
// CHECK-LABEL: func.func @pad_interior
// CHECK: kiln.pad %{{.+}}, %{{.+}} {interior = array<i64: 2, 0>, pads = array<i64: 1, 0, 0, 0>} : (tensor<3x?xf32>, tensor<f32>) -> tensor<8x?xf32>
func.func @pad_interior(%x: tensor<3x?xf32>, %v: tensor<f32>) -> tensor<8x?xf32> {
  %0 = kiln.pad %x, %v {pads = array<i64: 1, 0, 0, 0>, interior = array<i64: 2, 0>} : (tensor<3x?xf32>, tensor<f32>) -> tensor<8x?xf32>
  return %0 : tensor<8x?xf32>
}

// CHECK-LABEL: func.func @resize
// CHECK: kiln.resize %{{.+}} {{{.*}}mode = "nearest"{{.*}}sizes = array<i64: 1, 3, 8, 8>{{.*}}} : (tensor<1x3x4x4xf32>) -> tensor<1x3x8x8xf32>
func.func @resize(%x: tensor<1x3x4x4xf32>) -> tensor<1x3x8x8xf32> {
  %0 = kiln.resize %x {mode = "nearest", coordinate_transformation_mode = "asymmetric", nearest_mode = "floor", scales = array<f64: 1.0, 1.0, 2.0, 2.0>, sizes = array<i64: 1, 3, 8, 8>, roi = array<f64>, cubic_coeff_a = -7.5e-01 : f64, exclude_outside = false, extrapolation_value = 0.0 : f64} : (tensor<1x3x4x4xf32>) -> tensor<1x3x8x8xf32>
  return %0 : tensor<1x3x8x8xf32>
}

// CHECK-LABEL: func.func @grid_sample
// CHECK: kiln.grid_sample %{{.+}}, %{{.+}} {align_corners = false, mode = "linear", padding_mode = "zeros"} : (tensor<1x1x3x2xf32>, tensor<1x2x4x2xf32>) -> tensor<1x1x2x4xf32>
func.func @grid_sample(%x: tensor<1x1x3x2xf32>, %g: tensor<1x2x4x2xf32>) -> tensor<1x1x2x4xf32> {
  %0 = kiln.grid_sample %x, %g {mode = "linear", padding_mode = "zeros", align_corners = false} : (tensor<1x1x3x2xf32>, tensor<1x2x4x2xf32>) -> tensor<1x1x2x4xf32>
  return %0 : tensor<1x1x2x4xf32>
}
