// RUN: kiln-opt %s -kiln-slice-run-time-rows -split-input-file | FileCheck %s

// A matmul of run-time rows, one column tile wide: its whole blocks of 128
// and 64 rows are scf.foralls whose iterations insert their rows in
// parallel; the rest runs 8 rows at a time (padded), sequentially.
// CHECK-LABEL: func.func @narrow
// CHECK: %[[B128:.+]] = scf.forall (%[[R:.+]]) = (%{{.+}}) to (%{{.+}}) step (%{{.+}}) shared_outs(%[[OUT:.+]] = %{{.+}}) -> (tensor<?x64xf32>)
// CHECK: tensor.extract_slice %{{.+}}[%[[R]], 0] [128, 32] [1, 1] : tensor<?x32xf32> to tensor<128x32xf32>
// CHECK: %[[MM:.+]] = linalg.matmul ins(%{{.+}}, %{{.+}} : tensor<128x32xf32>, tensor<32x64xf32>) outs(%{{.+}} : tensor<128x64xf32>)
// CHECK: scf.forall.in_parallel
// CHECK-NEXT: tensor.parallel_insert_slice %[[MM]] into %[[OUT]][%[[R]], 0] [128, 64] [1, 1]
// CHECK: %[[B64:.+]] = scf.forall (%{{.+}}) = (%{{.+}}) to (%{{.+}}) step (%{{.+}}) shared_outs(%{{.+}} = %[[B128]])
// CHECK: linalg.matmul ins(%{{.+}}, %{{.+}} : tensor<64x32xf32>, tensor<32x64xf32>)
// CHECK: scf.for %{{.+}} = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%{{.+}} = %[[B64]])
// CHECK: linalg.matmul ins(%{{.+}}, %{{.+}} : tensor<8x32xf32>, tensor<32x64xf32>)
func.func @narrow(%a: tensor<?x32xf32>, %w: tensor<32x64xf32>) -> tensor<?x64xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %m = tensor.dim %a, %c0 : tensor<?x32xf32>
  %empty = tensor.empty(%m) : tensor<?x64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<?x64xf32>) -> tensor<?x64xf32>
  %r = linalg.matmul ins(%a, %w : tensor<?x32xf32>, tensor<32x64xf32>) outs(%acc : tensor<?x64xf32>) -> tensor<?x64xf32>
  return %r : tensor<?x64xf32>
}

// -----

// Wider than one column tile: the kernel spreads its columns over the
// pool, so the blocks stay a sequential scf.for.
// CHECK-LABEL: func.func @wide
// CHECK-NOT: scf.forall
// CHECK: scf.for
// CHECK: linalg.matmul ins(%{{.+}}, %{{.+}} : tensor<128x32xf32>, tensor<32x256xf32>)
func.func @wide(%a: tensor<?x32xf32>, %w: tensor<32x256xf32>) -> tensor<?x256xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %m = tensor.dim %a, %c0 : tensor<?x32xf32>
  %empty = tensor.empty(%m) : tensor<?x256xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<?x256xf32>) -> tensor<?x256xf32>
  %r = linalg.matmul ins(%a, %w : tensor<?x32xf32>, tensor<32x256xf32>) outs(%acc : tensor<?x256xf32>) -> tensor<?x256xf32>
  return %r : tensor<?x256xf32>
}

// -----

// With its elementwise consumer (bias and relu): each block gets a fresh
// filled accumulator, the consumer writes its rows of the shared output,
// and those rows are inserted in parallel.
// CHECK-LABEL: func.func @narrow_bias_relu
// CHECK: scf.forall (%[[R:.+]]) = (%{{.+}}) to (%{{.+}}) step (%{{.+}}) shared_outs(%[[OUT:.+]] = %{{.+}}) -> (tensor<?x64xf32>)
// CHECK: %[[DST:.+]] = tensor.extract_slice %[[OUT]][%[[R]], 0] [128, 64] [1, 1]
// CHECK: %[[FILL:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<128x64xf32>)
// CHECK: %[[MM:.+]] = linalg.matmul ins(%{{.+}}, %{{.+}} : tensor<128x32xf32>, tensor<32x64xf32>) outs(%[[FILL]] : tensor<128x64xf32>)
// CHECK: %[[Y:.+]] = linalg.generic {{.+}} ins(%[[MM]], %{{.+}} : tensor<128x64xf32>, tensor<64xf32>) outs(%[[DST]] : tensor<128x64xf32>)
// CHECK: tensor.parallel_insert_slice %[[Y]] into %[[OUT]][%[[R]], 0] [128, 64] [1, 1]
func.func @narrow_bias_relu(%a: tensor<?x32xf32>, %w: tensor<32x64xf32>, %bias: tensor<64xf32>) -> tensor<?x64xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %m = tensor.dim %a, %c0 : tensor<?x32xf32>
  %empty = tensor.empty(%m) : tensor<?x64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<?x64xf32>) -> tensor<?x64xf32>
  %r = linalg.matmul ins(%a, %w : tensor<?x32xf32>, tensor<32x64xf32>) outs(%acc : tensor<?x64xf32>) -> tensor<?x64xf32>
  %out = tensor.empty(%m) : tensor<?x64xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%r, %bias : tensor<?x64xf32>, tensor<64xf32>) outs(%out : tensor<?x64xf32>) {
  ^bb0(%x: f32, %b: f32, %o: f32):
    %s = arith.addf %x, %b : f32
    %t = arith.maximumf %s, %zero : f32
    linalg.yield %t : f32
  } -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// -----

// Two matmuls share one filled accumulator (CSE merges equal fills once
// their extents are one symbol's): each block fills its own, and the rows
// go into a fresh tensor per matmul, not into the shared fill, which
// bufferization would have to copy for the second.
// CHECK-LABEL: func.func @shared_fill
// CHECK: linalg.fill
// CHECK: %[[E1:.+]] = tensor.empty(%{{.+}}) : tensor<?x256xf32>
// CHECK: scf.for %{{.+}} iter_args(%{{.+}} = %[[E1]])
// CHECK: %[[E2:.+]] = tensor.empty(%{{.+}}) : tensor<?x256xf32>
// CHECK: scf.for %{{.+}} iter_args(%{{.+}} = %[[E2]])
func.func @shared_fill(%a: tensor<?x32xf32>, %w: tensor<32x256xf32>,
                       %v: tensor<32x256xf32>)
    -> (tensor<?x256xf32>, tensor<?x256xf32>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %m = tensor.dim %a, %c0 : tensor<?x32xf32>
  %empty = tensor.empty(%m) : tensor<?x256xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<?x256xf32>) -> tensor<?x256xf32>
  %r = linalg.matmul ins(%a, %w : tensor<?x32xf32>, tensor<32x256xf32>) outs(%acc : tensor<?x256xf32>) -> tensor<?x256xf32>
  %s = linalg.matmul ins(%a, %v : tensor<?x32xf32>, tensor<32x256xf32>) outs(%acc : tensor<?x256xf32>) -> tensor<?x256xf32>
  return %r, %s : tensor<?x256xf32>, tensor<?x256xf32>
}

// -----

// Over a run-time batch a 3x3 stride-1 convolution runs image by image
// (static [1, H, W, C] slices, which Winograd may take); a 1x1 one and a
// depthwise one stay whole: their kernels take a run-time batch.
// CHECK-LABEL: func.func @convolutions
// CHECK: scf.for
// CHECK: linalg.conv_2d_nhwc_hwcf {{.*}} ins(%{{.+}}, %{{.+}} : tensor<1x10x10x16xf32>, tensor<3x3x16x16xf32>)
// CHECK: linalg.conv_2d_nhwc_hwcf {{.*}} ins(%{{.+}}, %{{.+}} : tensor<?x8x8x16xf32>, tensor<1x1x16x16xf32>)
// CHECK: linalg.depthwise_conv_2d_nhwc_hwc {{.*}} ins(%{{.+}}, %{{.+}} : tensor<?x10x10x16xf32>, tensor<3x3x16xf32>)
func.func @convolutions(%x: tensor<?x10x10x16xf32>, %e: tensor<?x8x8x16xf32>, %dw: tensor<3x3x16xf32>) -> (tensor<?x8x8x16xf32>, tensor<?x8x8x16xf32>) {
  %w3 = arith.constant dense<0.5> : tensor<3x3x16x16xf32>
  %w1 = arith.constant dense<0.25> : tensor<1x1x16x16xf32>
  %zero = arith.constant 0.0 : f32
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<?x8x8x16xf32>) -> tensor<?x8x8x16xf32>
  %a = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w3 : tensor<?x10x10x16xf32>, tensor<3x3x16x16xf32>) outs(%f : tensor<?x8x8x16xf32>) -> tensor<?x8x8x16xf32>
  %b = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%a, %w1 : tensor<?x8x8x16xf32>, tensor<1x1x16x16xf32>) outs(%f : tensor<?x8x8x16xf32>) -> tensor<?x8x8x16xf32>
  %d = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %dw : tensor<?x10x10x16xf32>, tensor<3x3x16xf32>) outs(%f : tensor<?x8x8x16xf32>) -> tensor<?x8x8x16xf32>
  return %b, %d : tensor<?x8x8x16xf32>, tensor<?x8x8x16xf32>
}
