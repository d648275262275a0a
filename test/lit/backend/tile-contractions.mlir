// RUN: kiln-opt %s --kiln-tile-contractions --split-input-file | FileCheck %s
// RUN: kiln-opt %s --kiln-tile-contractions="vector-bits=256 registers=16" --split-input-file | FileCheck %s --check-prefix=AVX2
// RUN: kiln-opt %s --kiln-tile-contractions="vector-bits=128 registers=32" --split-input-file | FileCheck %s --check-prefix=NEON

// A constant B is packed at compile time into 32-lane panels (40 columns ->
// two zero-padded panels); the result is viewed through the panels and
// sliced back. 8 rows x 32 lanes per register tile, accumulators carried
// through the k loop as vectors. The zero fill is gone: with one K block
// the accumulators start as zero vectors, nothing is read.
// CHECK-LABEL: func.func @constant_rhs
// CHECK: %[[ZEROS:.+]] = arith.constant dense<0.000000e+00> : vector<32xf32>
// CHECK: %[[PACKED:.+]] = arith.constant {{.*}}dense_resource<packed_rhs> : tensor<2x64x32xf32>
// CHECK-NOT: linalg.fill
// CHECK: %[[EMPTY:.+]] = tensor.empty() : tensor<16x64xf32>
// CHECK: tensor.expand_shape %[[EMPTY]] {{\[}}[0], [1, 2]] output_shape [16, 2, 32]
// CHECK: scf.forall
// CHECK: scf.for
// CHECK: scf.for
// CHECK-NOT: vector.transfer_read %{{.+}} : tensor<16x2x32xf32>, vector<32xf32>
// CHECK: scf.for %{{.+}} iter_args(%{{.+}} = %[[ZEROS]], %{{.+}} = %[[ZEROS]], %{{.+}} = %[[ZEROS]], %{{.+}} = %[[ZEROS]], %{{.+}} = %[[ZEROS]], %{{.+}} = %[[ZEROS]], %{{.+}} = %[[ZEROS]], %{{.+}} = %[[ZEROS]]) -> (vector<32xf32>, vector<32xf32>, vector<32xf32>, vector<32xf32>, vector<32xf32>, vector<32xf32>, vector<32xf32>, vector<32xf32>)
// CHECK: vector.transfer_read %[[PACKED]]
// CHECK-COUNT-8: vector.fma
// CHECK: scf.yield
// CHECK-COUNT-8: vector.transfer_write
// CHECK: tensor.collapse_shape
// CHECK: tensor.extract_slice %{{.+}}[0, 0] [16, 40] [1, 1]
// AVX2-LABEL: func.func @constant_rhs
// AVX2: arith.constant {{.*}}dense_resource<packed_rhs> : tensor<3x64x16xf32>
// AVX2: scf.for %{{.+}} iter_args({{.+}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// NEON (aarch64: the weights are prepacked in 8-lane panels):
// NEON-LABEL: func.func @constant_rhs
// NEON: arith.constant {{.*}}dense_resource<packed_rhs> : tensor<5x64x8xf32>
// NEON: scf.for %{{.+}} iter_args({{.+}}) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>)
func.func @constant_rhs(%a: tensor<16x64xf32>) -> tensor<16x40xf32> {
  %w = arith.constant dense<1.5> : tensor<64x40xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x40xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<16x40xf32>) -> tensor<16x40xf32>
  %y = linalg.matmul ins(%a, %w : tensor<16x64xf32>, tensor<64x40xf32>) outs(%f : tensor<16x40xf32>) -> tensor<16x40xf32>
  return %y : tensor<16x40xf32>
}

// -----

// A filled accumulator over two K blocks: the first block starts the
// register tiles from the fill value, later ones read what the earlier
// blocks wrote; the fill itself is gone.
// CHECK-LABEL: func.func @seeded_k_blocks
// CHECK-DAG: %[[ONES:.+]] = arith.constant dense<1.000000e+00> : vector<32xf32>
// CHECK-DAG: %[[C0:.+]] = arith.constant 0 : index
// CHECK-NOT: linalg.fill
// CHECK: %[[EMPTY:.+]] = tensor.empty() : tensor<16x32xf32>
// CHECK: scf.forall {{.+}} shared_outs(%{{.+}} = %[[EMPTY]])
// CHECK: scf.for %[[KB:.+]] = %[[C0]] to %{{.+}} step %{{.+}} iter_args
// CHECK: %[[FIRST:.+]] = arith.cmpi eq, %[[KB]], %[[C0]] : index
// CHECK: scf.for
// CHECK: scf.if %[[FIRST]]
// CHECK-NEXT: scf.yield %[[ONES]], %[[ONES]], %[[ONES]], %[[ONES]], %[[ONES]], %[[ONES]], %[[ONES]], %[[ONES]]
// CHECK-NEXT: } else {
// CHECK-COUNT-8: vector.transfer_read
// CHECK: scf.yield
// CHECK: scf.for
// CHECK-COUNT-8: vector.fma
func.func @seeded_k_blocks(%a: tensor<16x512xf32>, %b: tensor<512x32xf32>) -> tensor<16x32xf32> {
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<16x32xf32>
  %f = linalg.fill ins(%one : f32) outs(%e : tensor<16x32xf32>) -> tensor<16x32xf32>
  %y = linalg.matmul ins(%a, %b : tensor<16x512xf32>, tensor<512x32xf32>) outs(%f : tensor<16x32xf32>) -> tensor<16x32xf32>
  return %y : tensor<16x32xf32>
}

// -----

// A variable B is read in place; 20 rows = 16 + a partial tile of 4, whose
// rows past the edge read and rewrite the last valid row (no branch).
// CHECK-LABEL: func.func @variable_rhs
// CHECK-NOT: packed_rhs
// CHECK: scf.forall (%{{.+}}, %{{.+}}) = (0, 0) to (20, 64) step (16, 64)
// CHECK: affine.min
// CHECK: arith.minui
// CHECK: scf.for
// CHECK-COUNT-8: vector.fma
// CHECK-NOT: scf.if
// CHECK-COUNT-8: vector.transfer_write
func.func @variable_rhs(%a: tensor<20x8xf32>, %b: tensor<8x64xf32>, %c: tensor<20x64xf32>) -> tensor<20x64xf32> {
  %y = linalg.matmul ins(%a, %b : tensor<20x8xf32>, tensor<8x64xf32>) outs(%c : tensor<20x64xf32>) -> tensor<20x64xf32>
  return %y : tensor<20x64xf32>
}

// -----

// A convolution: im2col into [N][panels][C*KH*KW][32] (a gather per row of
// a panel), then the filter [F, C*KH*KW] times the panels.
// CHECK-LABEL: func.func @conv
// CHECK: tensor.empty() : tensor<1x2x27x32xf32>
// CHECK: scf.forall
// CHECK: vector.gather %{{.+}} : tensor<1x3x10x10xf32>
// CHECK: tensor.collapse_shape %{{.+}} {{\[}}[0], [1, 2, 3]] : tensor<8x3x3x3xf32> into tensor<8x27xf32>
// CHECK: scf.forall
// CHECK-COUNT-8: vector.fma
// CHECK: tensor.expand_shape %{{.+}} output_shape [1, 8, 8, 8]
func.func @conv(%x: tensor<1x3x10x10xf32>, %w: tensor<8x3x3x3xf32>, %c: tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32> {
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x3x10x10xf32>, tensor<8x3x3x3xf32>) outs(%c : tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  return %y : tensor<1x8x8x8xf32>
}

// -----

// A 1x1, stride-1 convolution reads its input in place: the rows of H*W
// pixels are B (no im2col, no gather).
// CHECK-LABEL: func.func @pointwise_conv
// CHECK-NOT: vector.gather
// CHECK: tensor.collapse_shape %{{.+}} {{\[}}[0], [1], [2, 3]] : tensor<1x16x7x7xf32> into tensor<1x16x49xf32>
// CHECK: scf.forall
// CHECK-COUNT-8: vector.fma
// CHECK-NOT: vector.gather
// CHECK: tensor.expand_shape %{{.+}} output_shape [1, 24, 7, 7]
func.func @pointwise_conv(%x: tensor<1x16x7x7xf32>, %w: tensor<24x16x1x1xf32>, %c: tensor<1x24x7x7xf32>) -> tensor<1x24x7x7xf32> {
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x16x7x7xf32>, tensor<24x16x1x1xf32>) outs(%c : tensor<1x24x7x7xf32>) -> tensor<1x24x7x7xf32>
  return %y : tensor<1x24x7x7xf32>
}

// -----

// Not f32: left to the loop path.
// CHECK-LABEL: func.func @f64_not_tiled
// CHECK-NOT: scf.forall
// CHECK: linalg.matmul
func.func @f64_not_tiled(%a: tensor<4x4xf64>, %b: tensor<4x4xf64>, %c: tensor<4x4xf64>) -> tensor<4x4xf64> {
  %y = linalg.matmul ins(%a, %b : tensor<4x4xf64>, tensor<4x4xf64>) outs(%c : tensor<4x4xf64>) -> tensor<4x4xf64>
  return %y : tensor<4x4xf64>
}

// -----

// CHECK-LABEL: func.func @i32_not_tiled
// CHECK-NOT: scf.forall
// CHECK: linalg.matmul
func.func @i32_not_tiled(%a: tensor<4x4xi32>, %b: tensor<4x4xi32>, %c: tensor<4x4xi32>) -> tensor<4x4xi32> {
  %y = linalg.matmul ins(%a, %b : tensor<4x4xi32>, tensor<4x4xi32>) outs(%c : tensor<4x4xi32>) -> tensor<4x4xi32>
  return %y : tensor<4x4xi32>
}

// -----

// N is not the innermost dimension of the result (C = (A B)^T written as
// one op): not matched.
// CHECK-LABEL: func.func @transposed_result
// CHECK-NOT: scf.forall
// CHECK: linalg.generic
func.func @transposed_result(%a: tensor<8x4xf32>, %b: tensor<4x16xf32>, %c: tensor<16x8xf32>) -> tensor<16x8xf32> {
  %y = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (n, m)>],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<8x4xf32>, tensor<4x16xf32>) outs(%c : tensor<16x8xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<16x8xf32>
  return %y : tensor<16x8xf32>
}

// -----

// M = 197 needs two thread-pool tiles of MC = 128 rows; they get equal
// heights (104 + 93, multiples of the 8-row register tile) instead of
// 128 + 69, so the two threads get the same work.
// CHECK-LABEL: func.func @balanced_rows
// CHECK: scf.forall (%{{.+}}, %{{.+}}) = (0, 0) to (197, 32) step (104, 32)
func.func @balanced_rows(%a: tensor<197x64xf32>, %b: tensor<64x32xf32>) -> tensor<197x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<197x32xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<197x32xf32>) -> tensor<197x32xf32>
  %y = linalg.matmul ins(%a, %b : tensor<197x64xf32>, tensor<64x32xf32>) outs(%f : tensor<197x32xf32>) -> tensor<197x32xf32>
  return %y : tensor<197x32xf32>
}

// -----

// One weight used by two matmuls (the static row blocks of a run-time row
// count clone the matmul per block size): packed once, both read the same
// panels.
// CHECK-LABEL: func.func @shared_weight
// CHECK: %[[P:.+]] = arith.constant {{.*}}dense_resource<packed_rhs> : tensor<2x64x32xf32>
// CHECK-NOT: dense_resource
// CHECK: vector.transfer_read %[[P]]
// CHECK-NOT: dense_resource
// CHECK: vector.transfer_read %[[P]]
func.func @shared_weight(%a: tensor<16x64xf32>, %b: tensor<8x64xf32>) -> (tensor<16x40xf32>, tensor<8x40xf32>) {
  %w = arith.constant dense<1.5> : tensor<64x40xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x40xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<16x40xf32>) -> tensor<16x40xf32>
  %y = linalg.matmul ins(%a, %w : tensor<16x64xf32>, tensor<64x40xf32>) outs(%f : tensor<16x40xf32>) -> tensor<16x40xf32>
  %e2 = tensor.empty() : tensor<8x40xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<8x40xf32>) -> tensor<8x40xf32>
  %z = linalg.matmul ins(%b, %w : tensor<8x64xf32>, tensor<64x40xf32>) outs(%f2 : tensor<8x40xf32>) -> tensor<8x40xf32>
  return %y, %z : tensor<16x40xf32>, tensor<8x40xf32>
}
