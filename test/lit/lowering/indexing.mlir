// RUN: kiln-opt %s -kiln-lower-to-linalg -split-input-file | FileCheck %s

// Gathers: one parallel generic over the result, data read with tensor.extract
// at the coordinate taken from the (wrapped, clamped) index.
// CHECK-LABEL: func.func @gather_elements
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]} ins(%{{.+}} : tensor<2x3xi64>)
// CHECK: arith.minsi
// CHECK: tensor.extract %{{.+}}[%{{.+}}, %{{.+}}] : tensor<3x3xf32>
func.func @gather_elements(%d: tensor<3x3xf32>, %i: tensor<2x3xi64>) -> tensor<2x3xf32> {
  %r = kiln.gather_elements %d, %i {axis = 0 : i64} : (tensor<3x3xf32>, tensor<2x3xi64>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @gather_nd
// CHECK: linalg.generic {{.*}}outs(%{{.+}} : tensor<2x2xi32>)
// CHECK: %[[I:.+]] = tensor.extract %{{.+}} : tensor<2x1xi64>
// CHECK: tensor.extract %{{.+}} : tensor<2x2x2xi32>
func.func @gather_nd(%d: tensor<2x2x2xi32>, %i: tensor<2x1xi64>) -> tensor<2x2xi32> {
  %r = kiln.gather_nd %d, %i {batch_dims = 1 : i64} : (tensor<2x2x2xi32>, tensor<2x1xi64>) -> tensor<2x2xi32>
  return %r : tensor<2x2xi32>
}

// -----

// Scatters: the result is `data` reduced over the candidate updates along
// the axis; a candidate whose index hits the element is combined in.
// CHECK-LABEL: func.func @scatter_elements_add
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]} ins(%{{.+}} : tensor<2xi8>) outs(%arg0 : tensor<1x5xf32>)
// CHECK: %[[HIT:.+]] = arith.cmpi eq
// CHECK: %[[SUM:.+]] = arith.addf %[[OUT:.+]], %{{.+}} : f32
// CHECK: arith.select %[[HIT]], %[[SUM]], %[[OUT]] : f32
func.func @scatter_elements_add(%d: tensor<1x5xf32>, %i: tensor<1x2xi64>, %u: tensor<1x2xf32>) -> tensor<1x5xf32> {
  %r = kiln.scatter_elements %d, %i, %u {axis = 1 : i64, reduction = "add"} : (tensor<1x5xf32>, tensor<1x2xi64>, tensor<1x2xf32>) -> tensor<1x5xf32>
  return %r : tensor<1x5xf32>
}

// -----

// CHECK-LABEL: func.func @scatter_nd
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]} ins(%{{.+}} : tensor<2xi8>) outs(%arg0 : tensor<4x4xf32>)
// CHECK-NOT: arith.addf
// CHECK: arith.select
func.func @scatter_nd(%d: tensor<4x4xf32>, %i: tensor<2x1xi64>, %u: tensor<2x4xf32>) -> tensor<4x4xf32> {
  %r = kiln.scatter_nd %d, %i, %u : (tensor<4x4xf32>, tensor<2x1xi64>, tensor<2x4xf32>) -> tensor<4x4xf32>
  return %r : tensor<4x4xf32>
}

// -----

// Trilu reads k once, outside the generic (it may be a run-time value).
// CHECK-LABEL: func.func @trilu
// CHECK: %[[K:.+]] = tensor.extract %arg1[] : tensor<i64>
// CHECK: linalg.generic
// CHECK: arith.cmpi sge, %{{.+}}, %[[K]] : i64
func.func @trilu(%x: tensor<3x4xf32>, %k: tensor<i64>) -> tensor<3x4xf32> {
  %r = kiln.trilu %x, %k {upper = true} : (tensor<3x4xf32>, tensor<i64>) -> tensor<3x4xf32>
  return %r : tensor<3x4xf32>
}

// -----

// Constant pads are tensor.pad with the (run-time) value; reflect folds the
// coordinate back with period max(2 * (n - 1), 1) (n = 4 here: 6, folded by
// later canonicalization).
// CHECK-LABEL: func.func @pads
// CHECK: linalg.generic
// CHECK: %[[LAST:.+]] = arith.subi %c4{{.*}}, %c1
// CHECK: %[[TWICE:.+]] = arith.addi %[[LAST]], %[[LAST]]
// CHECK: %[[PERIOD:.+]] = arith.maxsi %[[TWICE]], %c1
// CHECK: arith.remsi %{{.+}}, %[[PERIOD]]
// CHECK: %[[V:.+]] = tensor.extract %arg1[] : tensor<f32>
// CHECK: tensor.pad %arg0 low[0, 2] high[0, 1]
// CHECK: tensor.yield %[[V]] : f32
func.func @pads(%x: tensor<3x4xf32>, %v: tensor<f32>) -> (tensor<3x7xf32>, tensor<3x7xf32>) {
  %r = kiln.pad %x, %v {mode = "reflect", pads = array<i64: 0, 2, 0, 1>} : (tensor<3x4xf32>, tensor<f32>) -> tensor<3x7xf32>
  %c = kiln.pad %x, %v {pads = array<i64: 0, 2, 0, 1>} : (tensor<3x4xf32>, tensor<f32>) -> tensor<3x7xf32>
  return %r, %c : tensor<3x7xf32>, tensor<3x7xf32>
}

// -----

// Edge pads over a run-time extent: the run checks the input holds an
// element to repeat; the result is that extent plus the pads, and the
// coordinate is clamped to the run-time last index.
// CHECK-LABEL: func.func @pad_edge_run_time
// CHECK: %[[N:.+]] = tensor.dim %arg0, %c1
// CHECK: %[[SIZE:.+]] = arith.addi %[[N]], %c3
// CHECK: %[[SOME:.+]] = arith.cmpi sgt, %[[N]], %c0
// CHECK: cf.assert %[[SOME]], "{{.*}}Pad: edge padding of dim 1, whose run-time extent is 0"
// CHECK: tensor.empty(%[[SIZE]]) : tensor<2x?xf32>
// CHECK: linalg.generic
// CHECK: %[[LAST:.+]] = arith.subi %[[N]], %c1
// CHECK: arith.minsi %{{.+}}, %[[LAST]]
func.func @pad_edge_run_time(%x: tensor<2x?xf32>, %v: tensor<f32>) -> tensor<2x?xf32> {
  %r = kiln.pad %x, %v {mode = "edge", pads = array<i64: 0, 1, 0, 2>} : (tensor<2x?xf32>, tensor<f32>) -> tensor<2x?xf32>
  return %r : tensor<2x?xf32>
}

// -----

// Interior pads (a transposed convolution's stride) over a run-time extent:
// the result, n + (n - 1) * 2 + 1 + 0 wide, is filled with the value and the
// input inserted from offset 1 with stride 3; the static dim is 2 + 1 + 1.
// CHECK-LABEL: func.func @pad_interior
// CHECK: %[[N:.+]] = tensor.dim %arg0, %c1
// CHECK: %[[GAPS:.+]] = arith.maxsi
// CHECK: %[[MUL:.+]] = arith.muli %[[GAPS]], %c2
// CHECK: %[[SUM:.+]] = arith.addi %[[N]], %[[MUL]]
// CHECK: %[[SIZE:.+]] = arith.addi %[[SUM]], %c1
// CHECK: %[[EMPTY:.+]] = tensor.empty(%[[SIZE]]) : tensor<4x?xf32>
// CHECK: %[[FILL:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%[[EMPTY]]
// CHECK: tensor.insert_slice %arg0 into %[[FILL]][1, 1] [2, %[[N]]] [1, 3]
func.func @pad_interior(%x: tensor<2x?xf32>, %v: tensor<f32>) -> tensor<4x?xf32> {
  %r = kiln.pad %x, %v {pads = array<i64: 1, 1, 1, 0>, interior = array<i64: 0, 2>} : (tensor<2x?xf32>, tensor<f32>) -> tensor<4x?xf32>
  return %r : tensor<4x?xf32>
}

// -----

// Resize: tap tables computed at compile time. Nearest with integer scales
// is one index table per resized dim; untouched dims use the loop index.
// CHECK-LABEL: func.func @resize_nearest
// CHECK-DAG: arith.constant dense<[0, 0, 1, 1]> : tensor<4xi64>
// CHECK-DAG: arith.constant dense<[0, 0, 0, 1, 1, 1]> : tensor<6xi64>
// CHECK: linalg.generic
// CHECK-NOT: arith.mulf
// CHECK: tensor.extract %arg0
func.func @resize_nearest(%x: tensor<1x3x2x2xf32>) -> tensor<1x3x4x6xf32> {
  %r = kiln.resize %x {mode = "nearest", coordinate_transformation_mode = "asymmetric", nearest_mode = "floor", scales = array<f64: 1.0, 1.0, 2.0, 3.0>, sizes = array<i64: 1, 3, 4, 6>, roi = array<f64>, cubic_coeff_a = -7.5e-01 : f64, exclude_outside = false, extrapolation_value = 0.0 : f64} : (tensor<1x3x2x2xf32>) -> tensor<1x3x4x6xf32>
  return %r : tensor<1x3x4x6xf32>
}

// -----

// Linear, half_pixel, 2x: two taps per dim with weights 1/4 and 3/4.
// CHECK-LABEL: func.func @resize_linear
// CHECK-DAG: arith.constant dense<[0, 0, 0, 1]> : tensor<4xi64>
// CHECK-DAG: arith.constant dense<[2.500000e-01, 7.500000e-01, 2.500000e-01, 7.500000e-01]> : tensor<4xf32>
// CHECK: linalg.generic
// CHECK-COUNT-4: tensor.extract %arg0
func.func @resize_linear(%x: tensor<1x1x2x2xf32>) -> tensor<1x1x4x4xf32> {
  %r = kiln.resize %x {mode = "linear", coordinate_transformation_mode = "half_pixel", nearest_mode = "round_prefer_floor", scales = array<f64: 1.0, 1.0, 2.0, 2.0>, sizes = array<i64: 1, 1, 4, 4>, roi = array<f64>, cubic_coeff_a = -7.5e-01 : f64, exclude_outside = false, extrapolation_value = 0.0 : f64} : (tensor<1x1x2x2xf32>) -> tensor<1x1x4x4xf32>
  return %r : tensor<1x1x4x4xf32>
}

// -----

// Linear with run-time scales (params): the tap tables of each dim are
// generics over its output coordinates computing ONNX's coordinate from the
// scale read out of params (index: floor, clamped; weight: 1 - r, r), then
// the same generic over the result reads them.
// CHECK-LABEL: func.func @resize_linear_run_time
// CHECK: %[[SCALE:.+]] = tensor.extract %arg1[%c1{{.*}}] : tensor<6xf64>
// CHECK: linalg.generic {{.*}}outs(%{{.+}} : tensor<4xi64>)
// CHECK: arith.divf %{{.+}}, %[[SCALE]] : f64
// CHECK: math.floor
// CHECK: arith.fptosi
// CHECK: linalg.generic {{.*}}outs(%{{.+}} : tensor<4xf32>)
// CHECK: linalg.generic {{.*}}outs(%{{.+}} : tensor<1x4xf32>)
// CHECK-COUNT-4: tensor.extract %arg0
func.func @resize_linear_run_time(%x: tensor<1x2xf32>, %p: tensor<6xf64>) -> tensor<1x4xf32> {
  %r = kiln.resize %x, %p {mode = "linear", coordinate_transformation_mode = "half_pixel", nearest_mode = "round_prefer_floor", scales = array<f64: 1.0, 1.0>, sizes = array<i64: 1, 4>, roi = array<f64>, cubic_coeff_a = -7.5e-01 : f64, exclude_outside = false, extrapolation_value = 0.0 : f64} : (tensor<1x2xf32>, tensor<6xf64>) -> tensor<1x4xf32>
  return %r : tensor<1x4xf32>
}

// -----

// Nearest 2x over a run-time batch, height and width: the batch (scale 1)
// reads the loop index, the channels (static, scale 1) too; the height and
// width get run-time tables over floor(extent * 2) output coordinates,
// which are also the result's extents.
// CHECK-LABEL: func.func @resize_run_time_extents
// CHECK-DAG: %[[N:.+]] = tensor.dim %arg0, %c0
// CHECK-DAG: %[[H:.+]] = tensor.dim %arg0, %c2
// CHECK: arith.index_cast %[[H]] : index to i64
// CHECK: arith.sitofp
// CHECK: arith.mulf %{{.+}}, %cst{{.*}} : f64
// CHECK: math.floor
// CHECK: %[[OH:.+]] = arith.index_cast %{{.+}} : i64 to index
// CHECK: tensor.empty(%[[OH]]) : tensor<?xi64>
// CHECK: %[[OW:.+]] = arith.index_cast %{{.+}} : i64 to index
// CHECK: tensor.empty(%[[N]], %[[OH]], %[[OW]]) : tensor<?x3x?x?xf32>
// CHECK: linalg.generic
// CHECK: linalg.index 0
// CHECK: linalg.index 1
// CHECK: tensor.extract %arg0
func.func @resize_run_time_extents(%x: tensor<?x3x?x?xf32>) -> tensor<?x3x?x?xf32> {
  %r = kiln.resize %x {mode = "nearest", coordinate_transformation_mode = "asymmetric", nearest_mode = "floor", scales = array<f64: 1.0, 1.0, 2.0, 2.0>, sizes = array<i64: -1, 3, -1, -1>, roi = array<f64>, cubic_coeff_a = -7.5e-01 : f64, exclude_outside = false, extrapolation_value = 0.0 : f64} : (tensor<?x3x?x?xf32>) -> tensor<?x3x?x?xf32>
  return %r : tensor<?x3x?x?xf32>
}

// -----

// TopK: ranks (n^2 per row), then slot r takes the element of rank r.
// CHECK-LABEL: func.func @topk
// CHECK: %[[RANKS:.+]] = linalg.generic {{.*}}outs(%{{.+}} : tensor<3x4xi64>)
// CHECK: arith.cmpf ogt
// CHECK: linalg.generic {{.*}}outs(%{{.+}}, %{{.+}} : tensor<3x2xf32>, tensor<3x2xi64>)
// CHECK: tensor.extract %[[RANKS]]
func.func @topk(%x: tensor<3x4xf32>) -> (tensor<3x2xf32>, tensor<3x2xi64>) {
  %v, %i = kiln.topk %x {axis = 1 : i64, k = 2 : i64, largest = true} : (tensor<3x4xf32>) -> (tensor<3x2xf32>, tensor<3x2xi64>)
  return %v, %i : tensor<3x2xf32>, tensor<3x2xi64>
}

// -----

// TopK with a run-time k: the results are sized by k (checked against the
// axis extent) and filled by the same rank-and-pick generics.
// CHECK-LABEL: func.func @topk_run_time_k
// CHECK: %[[K:.+]] = tensor.extract %arg1[] : tensor<i64>
// CHECK: arith.cmpi sge, %[[K]]
// CHECK: arith.cmpi sle, %[[K]]
// CHECK: cf.assert %{{.+}}, "{{.*}}TopK: k is out of range for a dim of 4"
// CHECK: %[[KI:.+]] = arith.index_cast %[[K]] : i64 to index
// CHECK: tensor.empty(%[[KI]]) : tensor<3x?xf32>
// CHECK: tensor.empty(%[[KI]]) : tensor<3x?xi64>
// CHECK: linalg.generic {{.*}}outs(%{{.+}}, %{{.+}} : tensor<3x?xf32>, tensor<3x?xi64>)
func.func @topk_run_time_k(%x: tensor<3x4xf32>, %k: tensor<i64>) -> (tensor<3x?xf32>, tensor<3x?xi64>) {
  %v, %i = kiln.topk %x, %k {axis = 1 : i64, k = -1 : i64, largest = true} : (tensor<3x4xf32>, tensor<i64>) -> (tensor<3x?xf32>, tensor<3x?xi64>)
  return %v, %i : tensor<3x?xf32>, tensor<3x?xi64>
}

// -----

// GridSample, linear: one parallel generic over the result; the two grid
// coordinates are read with tensor.extract, each dim takes floor and
// floor + 1, and the four input reads are masked (zeros padding) and summed.
// CHECK-LABEL: func.func @grid_sample_linear
// CHECK: linalg.generic
// CHECK-COUNT-2: tensor.extract %arg1
// CHECK: math.floor
// CHECK-COUNT-4: tensor.extract %arg0
// CHECK: linalg.yield
func.func @grid_sample_linear(%x: tensor<1x1x3x2xf32>, %g: tensor<1x2x4x2xf32>) -> tensor<1x1x2x4xf32> {
  %r = kiln.grid_sample %x, %g {mode = "linear", padding_mode = "zeros", align_corners = false} : (tensor<1x1x3x2xf32>, tensor<1x2x4x2xf32>) -> tensor<1x1x2x4xf32>
  return %r : tensor<1x1x2x4xf32>
}

// -----

// Nearest with reflection: the coordinate is rounded (ties to even) and
// mirrored at the borders; one read, no weights.
// CHECK-LABEL: func.func @grid_sample_nearest
// CHECK: linalg.generic
// CHECK: math.roundeven
// CHECK: math.trunc
// CHECK-COUNT-1: tensor.extract %arg0
// CHECK-NOT: tensor.extract %arg0
// CHECK: linalg.yield
func.func @grid_sample_nearest(%x: tensor<1x1x3x2xf32>, %g: tensor<1x2x4x2xf32>) -> tensor<1x1x2x4xf32> {
  %r = kiln.grid_sample %x, %g {mode = "nearest", padding_mode = "reflection", align_corners = true} : (tensor<1x1x3x2xf32>, tensor<1x2x4x2xf32>) -> tensor<1x1x2x4xf32>
  return %r : tensor<1x1x2x4xf32>
}

// -----

// Cubic: four taps per dim, sixteen reads.
// CHECK-LABEL: func.func @grid_sample_cubic
// CHECK: linalg.generic
// CHECK-COUNT-16: tensor.extract %arg0
func.func @grid_sample_cubic(%x: tensor<1x2x5x5xf32>, %g: tensor<1x3x3x2xf32>) -> tensor<1x2x3x3xf32> {
  %r = kiln.grid_sample %x, %g {mode = "cubic", padding_mode = "border", align_corners = false} : (tensor<1x2x5x5xf32>, tensor<1x3x3x2xf32>) -> tensor<1x2x3x3xf32>
  return %r : tensor<1x2x3x3xf32>
}
