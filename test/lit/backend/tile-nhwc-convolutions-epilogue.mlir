// K blocks of 256 floats (tile-k) so that a small convolution has several.
// RUN: kiln-opt %s --kiln-tile-nhwc-convolutions="tile-k=256" --split-input-file | FileCheck %s
// RUN: kiln-opt %s --kiln-tile-nhwc-convolutions="fuse-epilogues=false" --split-input-file | FileCheck %s --check-prefix=NOFUSE

// Bias and ReLU in one consumer of a direct convolution with one K block:
// every store holds relu(acc + bias[col]), the bias read as a 32-lane
// vector at the panel's column (40 filters: masked), the generic is gone.
// CHECK-LABEL: func.func @conv_bias_relu
// CHECK: scf.forall
// CHECK-COUNT-8: vector.fma
// CHECK: scf.yield
// CHECK-NOT: scf.if
// CHECK: %[[B:.+]] = vector.transfer_read %arg1[%{{.+}}], %{{.+}} : tensor<40xf32>, vector<32xf32>
// CHECK: %[[S:.+]] = arith.addf %{{.+}}, %[[B]] : vector<32xf32>
// CHECK: %[[R:.+]] = arith.maximumf %[[S]], %{{.+}} : vector<32xf32>
// CHECK: vector.transfer_write %[[R]], %{{.+}} : vector<32xf32>, tensor<?x?xf32>
// CHECK-NOT: linalg.generic
// CHECK: return
// NOFUSE-LABEL: func.func @conv_bias_relu
// NOFUSE: scf.forall
// NOFUSE-NOT: arith.maximumf {{.+}} : vector<32xf32>
// NOFUSE: linalg.generic
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#ch = affine_map<(d0, d1, d2, d3) -> (d3)>
func.func @conv_bias_relu(%x: tensor<1x6x6x16xf32>, %bias: tensor<40xf32>) -> tensor<1x4x4x40xf32> {
  %w = arith.constant dense<1.5> : tensor<3x3x16x40xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4x4x40xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4x4x40xf32>) -> tensor<1x4x4x40xf32>
  %y = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x6x6x16xf32>, tensor<3x3x16x40xf32>) outs(%f : tensor<1x4x4x40xf32>) -> tensor<1x4x4x40xf32>
  %z = linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%y, %bias : tensor<1x4x4x40xf32>, tensor<40xf32>) outs(%e : tensor<1x4x4x40xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<1x4x4x40xf32>
  return %z : tensor<1x4x4x40xf32>
}

// -----

// A bias broadcast init seeds the first K block (no broadcast is
// materialized); a residual add + ReLU consumer applies on the last of the
// six K blocks only (3 x 128 channels: runs split in two), reading the
// residual at each row's pixel (y, x) = (p / 4, p % 4); 32 filters fill the
// panel, so the reads are in bounds.
// CHECK-LABEL: func.func @conv_residual
// CHECK-NOT: linalg.broadcast
// CHECK: scf.for %[[BLOCK:.+]] = %{{.+}} to %c6{{.*}} step %c1
// CHECK: %[[FIRST:.+]] = arith.cmpi eq, %[[BLOCK]], %c0
// CHECK: scf.if %[[FIRST]]
// CHECK: vector.transfer_read %arg2[%{{.+}}], %{{.+}} {in_bounds = [true]} : tensor<32xf32>, vector<32xf32>
// CHECK: %[[LAST:.+]] = arith.cmpi eq, %[[BLOCK]], %c5
// CHECK: scf.if %[[LAST]] -> (tensor<?x?xf32>)
// CHECK: arith.divui %{{.+}}, %c4
// CHECK: arith.remui %{{.+}}, %c4
// CHECK: %[[RES:.+]] = vector.transfer_read %arg1[{{.+}}], %{{.+}} {in_bounds = [true]} : tensor<1x4x4x32xf32>, vector<32xf32>
// CHECK: %[[SUM:.+]] = arith.addf %{{.+}}, %[[RES]] : vector<32xf32>
// CHECK: arith.maximumf %[[SUM]], %{{.+}} : vector<32xf32>
// CHECK-COUNT-8: vector.transfer_write
// CHECK: } else {
// CHECK-COUNT-8: vector.transfer_write
// CHECK-NOT: linalg.generic
// CHECK: return
// NOFUSE-LABEL: func.func @conv_residual
// NOFUSE: linalg.generic
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @conv_residual(%x: tensor<1x6x6x128xf32>, %res: tensor<1x4x4x32xf32>, %bias: tensor<32xf32>) -> tensor<1x4x4x32xf32> {
  %w = arith.constant dense<0.25> : tensor<3x3x128x32xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4x4x32xf32>
  %bb = linalg.broadcast ins(%bias : tensor<32xf32>) outs(%e : tensor<1x4x4x32xf32>) dimensions = [0, 1, 2]
  %y = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x6x6x128xf32>, tensor<3x3x128x32xf32>) outs(%bb : tensor<1x4x4x32xf32>) -> tensor<1x4x4x32xf32>
  %z = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%y, %res : tensor<1x4x4x32xf32>, tensor<1x4x4x32xf32>) outs(%e : tensor<1x4x4x32xf32>) {
  ^bb0(%a: f32, %r: f32, %o: f32):
    %s = arith.addf %a, %r : f32
    %m = arith.maximumf %s, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x4x4x32xf32>
  return %z : tensor<1x4x4x32xf32>
}

// -----

// Depthwise with a bias init and Clip(0, 6): the accumulators start from
// the bias vector at the channel offset, the clip applies to every pixel's
// vector before its store (20 channels: masked).
// CHECK-LABEL: func.func @depthwise_clip
// CHECK-NOT: linalg.broadcast
// CHECK: scf.forall
// CHECK: %[[SEED:.+]] = vector.transfer_read %arg2[%{{.+}}], %{{.+}} : tensor<20xf32>, vector<16xf32>
// CHECK: scf.for %{{.+}} iter_args(%{{.+}} = %[[SEED]], %{{.+}} = %[[SEED]]
// CHECK: vector.fma
// CHECK: %[[LO:.+]] = arith.maximumf %{{.+}}, %{{.+}} : vector<16xf32>
// CHECK: %[[HI:.+]] = arith.minimumf %[[LO]], %{{.+}} : vector<16xf32>
// CHECK: vector.transfer_write %[[HI]]
// CHECK-NOT: linalg.generic
// CHECK: return
// NOFUSE-LABEL: func.func @depthwise_clip
// NOFUSE: scf.forall
// NOFUSE-NOT: arith.minimumf {{.+}} : vector<16xf32>
// NOFUSE: linalg.generic
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @depthwise_clip(%x: tensor<1x10x10x20xf32>, %w: tensor<3x3x20xf32>, %bias: tensor<20xf32>) -> tensor<1x8x8x20xf32> {
  %lo = arith.constant 0.0 : f32
  %hi = arith.constant 6.0 : f32
  %e = tensor.empty() : tensor<1x8x8x20xf32>
  %bb = linalg.broadcast ins(%bias : tensor<20xf32>) outs(%e : tensor<1x8x8x20xf32>) dimensions = [0, 1, 2]
  %y = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x10x10x20xf32>, tensor<3x3x20xf32>) outs(%bb : tensor<1x8x8x20xf32>) -> tensor<1x8x8x20xf32>
  %z = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%y : tensor<1x8x8x20xf32>) outs(%e : tensor<1x8x8x20xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %lo : f32
    %n = arith.minimumf %m, %hi : f32
    linalg.yield %n : f32
  } -> tensor<1x8x8x20xf32>
  return %z : tensor<1x8x8x20xf32>
}

// -----

// Not fused: the convolution's result has a second use (it is returned too).
// CHECK-LABEL: func.func @second_use
// CHECK: scf.forall
// CHECK-NOT: arith.maximumf {{.+}} : vector<32xf32>
// CHECK: linalg.generic
// CHECK: arith.maximumf {{.+}} : f32
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @second_use(%x: tensor<1x6x6x16xf32>) -> (tensor<1x4x4x32xf32>, tensor<1x4x4x32xf32>) {
  %w = arith.constant dense<1.5> : tensor<3x3x16x32xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4x4x32xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4x4x32xf32>) -> tensor<1x4x4x32xf32>
  %y = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x6x6x16xf32>, tensor<3x3x16x32xf32>) outs(%f : tensor<1x4x4x32xf32>) -> tensor<1x4x4x32xf32>
  %z = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%y : tensor<1x4x4x32xf32>) outs(%e : tensor<1x4x4x32xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.maximumf %a, %zero : f32
    linalg.yield %r : f32
  } -> tensor<1x4x4x32xf32>
  return %y, %z : tensor<1x4x4x32xf32>, tensor<1x4x4x32xf32>
}

// -----

// Not fused: the consumer reduces (a sum over the pixels), it is not
// elementwise.
// CHECK-LABEL: func.func @reduction_consumer
// CHECK: scf.forall
// CHECK: linalg.generic {{.+}} iterator_types = ["parallel", "reduction", "reduction", "parallel"]
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @reduction_consumer(%x: tensor<1x10x10x20xf32>, %w: tensor<3x3x20xf32>) -> tensor<1x20xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x8x8x20xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x8x8x20xf32>) -> tensor<1x8x8x20xf32>
  %y = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x10x10x20xf32>, tensor<3x3x20xf32>) outs(%f : tensor<1x8x8x20xf32>) -> tensor<1x8x8x20xf32>
  %se = tensor.empty() : tensor<1x20xf32>
  %sf = linalg.fill ins(%zero : f32) outs(%se : tensor<1x20xf32>) -> tensor<1x20xf32>
  %s = linalg.generic {indexing_maps = [#id, affine_map<(d0, d1, d2, d3) -> (d0, d3)>], iterator_types = ["parallel", "reduction", "reduction", "parallel"]}
      ins(%y : tensor<1x8x8x20xf32>) outs(%sf : tensor<1x20xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.addf %a, %o : f32
    linalg.yield %t : f32
  } -> tensor<1x20xf32>
  return %s : tensor<1x20xf32>
}

// -----

// Over a run-time image the consumer is read as it is (no reshapes between
// it and the convolution): the residual, of run-time extents too, is read
// at the row's pixel and the channel offset, the result written once.
// CHECK-LABEL: func.func @dynamic_conv_residual
// CHECK: scf.forall
// CHECK: %[[RES:.+]] = vector.transfer_read %arg1[{{.+}}], %{{.+}} {in_bounds = [true]} : tensor<?x?x?x32xf32>, vector<32xf32>
// CHECK: %[[SUM:.+]] = arith.addf %{{.+}}, %[[RES]] : vector<32xf32>
// CHECK: arith.maximumf %[[SUM]], %{{.+}} : vector<32xf32>
// CHECK-NOT: linalg.generic
// CHECK: return
// NOFUSE-LABEL: func.func @dynamic_conv_residual
// NOFUSE: linalg.generic
#idd = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @dynamic_conv_residual(%x: tensor<?x?x?x128xf32>, %res: tensor<?x?x?x32xf32>, %init: tensor<?x?x?x32xf32>) -> tensor<?x?x?x32xf32> {
  %w = arith.constant dense<0.25> : tensor<3x3x128x32xf32>
  %zero = arith.constant 0.0 : f32
  %f = linalg.fill ins(%zero : f32) outs(%init : tensor<?x?x?x32xf32>) -> tensor<?x?x?x32xf32>
  %y = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<?x?x?x128xf32>, tensor<3x3x128x32xf32>) outs(%f : tensor<?x?x?x32xf32>) -> tensor<?x?x?x32xf32>
  %z = linalg.generic {indexing_maps = [#idd, #idd, #idd], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%y, %res : tensor<?x?x?x32xf32>, tensor<?x?x?x32xf32>) outs(%init : tensor<?x?x?x32xf32>) {
  ^bb0(%a: f32, %r: f32, %o: f32):
    %s = arith.addf %a, %r : f32
    %m = arith.maximumf %s, %zero : f32
    linalg.yield %m : f32
  } -> tensor<?x?x?x32xf32>
  return %z : tensor<?x?x?x32xf32>
}
