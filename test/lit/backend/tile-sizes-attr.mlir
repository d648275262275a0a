// RUN: kiln-opt %s --kiln-tile-contractions --split-input-file | FileCheck %s

// `kiln.tile_sizes` (the autotuner's choice) replaces the cost model's
// 128x128x256 cache tiles of this op: 32x64 thread-pool tiles, 128-deep K
// blocks. The register tile stays 8x32.
// CHECK-LABEL: func.func @tuned
// CHECK: %[[C128:.+]] = arith.constant 128 : index
// CHECK: scf.forall (%{{.+}}, %{{.+}}) = (0, 0) to (64, 96) step (32, 64)
// CHECK: scf.for %{{.+}} = %{{.+}} to %{{.+}} step %[[C128]]
// CHECK: scf.for %{{.+}} = %{{.+}} to %{{.+}} step %{{.+}} iter_args({{.+}}) -> (tensor<32x?xf32>)
// CHECK: -> (vector<32xf32>, vector<32xf32>, vector<32xf32>, vector<32xf32>, vector<32xf32>, vector<32xf32>, vector<32xf32>, vector<32xf32>)
func.func @tuned(%a: tensor<64x512xf32>, %b: tensor<512x96xf32>) -> tensor<64x96xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x96xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<64x96xf32>) -> tensor<64x96xf32>
  %r = linalg.matmul {kiln.tile_sizes = array<i64: 32, 64, 128>} ins(%a, %b : tensor<64x512xf32>, tensor<512x96xf32>) outs(%c : tensor<64x96xf32>) -> tensor<64x96xf32>
  return %r : tensor<64x96xf32>
}

// -----

// Without it: one 64x96 tile (M and N under 128) and 256-deep K blocks.
// CHECK-LABEL: func.func @default
// CHECK: %[[C256:.+]] = arith.constant 256 : index
// CHECK: scf.forall (%{{.+}}, %{{.+}}) = (0, 0) to (64, 96) step (64, 96)
// CHECK: scf.for %{{.+}} = %{{.+}} to %{{.+}} step %[[C256]]
func.func @default(%a: tensor<64x512xf32>, %b: tensor<512x96xf32>) -> tensor<64x96xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x96xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<64x96xf32>) -> tensor<64x96xf32>
  %r = linalg.matmul ins(%a, %b : tensor<64x512xf32>, tensor<512x96xf32>) outs(%c : tensor<64x96xf32>) -> tensor<64x96xf32>
  return %r : tensor<64x96xf32>
}

// -----

// A convolution carries its choice through the im2col rewrite to the
// contraction that is tiled: 16 filters x 2 panels of 32 pixels per tile.
// CHECK-LABEL: func.func @tuned_conv
// CHECK: scf.forall (%{{.+}}, %{{.+}}) in (1, 8)
// CHECK: scf.forall (%{{.+}}, %{{.+}}, %{{.+}}) = (0, 0, 0) to (1, 32, 8) step (1, 16, 2)
func.func @tuned_conv(%x: tensor<1x16x18x18xf32>) -> tensor<1x32x16x16xf32> {
  %w = arith.constant dense<0.5> : tensor<32x16x3x3xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x32x16x16xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<1x32x16x16xf32>) -> tensor<1x32x16x16xf32>
  %r = linalg.conv_2d_nchw_fchw {kiln.tile_sizes = array<i64: 16, 64, 64>, dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
         ins(%x, %w : tensor<1x16x18x18xf32>, tensor<32x16x3x3xf32>) outs(%c : tensor<1x32x16x16xf32>) -> tensor<1x32x16x16xf32>
  return %r : tensor<1x32x16x16xf32>
}
