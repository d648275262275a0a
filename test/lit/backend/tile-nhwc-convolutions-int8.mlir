// RUN: kiln-opt %s --kiln-tile-nhwc-convolutions="int8-dot=true" | FileCheck %s
// RUN: kiln-opt %s --kiln-tile-nhwc-convolutions | FileCheck %s --check-prefix=OFF

// The int8 convolution of kiln.conv {input_zero_point} (QuantizedConv.cpp)
// with VNNI: the 3x3x16x40 int8 filter is packed as k-quads [2 panels][36
// quads][32 lanes x 4]; the input bytes are read in place as [1, 10, 160]
// (a filter row is one run of 48 bytes: 12 quads); each quad of a row is
// broadcast as one i32 into vpdpbusd on two vector<16xi32> halves per row,
// started at zero; after the taps the sums are converted and added to the
// f32 rows, which start from the zero-point correction (the broadcast init).
// CHECK-LABEL: func.func @int8_conv
// CHECK: %[[PACKED:.+]] = arith.constant dense_resource<packed_filter> : tensor<2x36x128xi8>
// CHECK: %[[ROWS:.+]] = tensor.collapse_shape %arg0 {{\[}}[0], [1], [2, 3]] : tensor<1x10x10x16xi8> into tensor<1x10x160xi8>
// CHECK: scf.forall
// CHECK: %[[ZEROS:.+]] = arith.constant dense<0> : vector<16xi32>
// CHECK: vector.transfer_read %arg1[%{{.+}}], %{{.+}} : tensor<40xf32>, vector<32xf32>
// CHECK: scf.for %{{.+}} = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%{{.+}} = %[[ZEROS]],
// CHECK: scf.for %{{.+}} = %c0 to %c48 step %{{.+}} iter_args(
// CHECK: %[[KQ:.+]] = arith.divui
// CHECK: %[[B:.+]] = vector.transfer_read %[[PACKED]][%{{.+}}, %[[KQ]], %{{.+}}], %{{.+}} {in_bounds = [true]} : tensor<2x36x128xi8>, vector<128xi8>
// CHECK: %[[B0:.+]] = vector.extract_strided_slice %[[B]] {offsets = [0], sizes = [64], strides = [1]}
// CHECK: %[[Q:.+]] = vector.transfer_read %[[ROWS]][%{{.+}}], %{{.+}} {in_bounds = [true]} : tensor<1x10x160xi8>, vector<4xi8>
// CHECK: %[[BITS:.+]] = vector.bitcast %[[Q]] : vector<4xi8> to vector<1xi32>
// CHECK: %[[SPLAT:.+]] = vector.broadcast %[[BITS]] : vector<1xi32> to vector<16xi32>
// CHECK: %[[A:.+]] = vector.bitcast %[[SPLAT]] : vector<16xi32> to vector<64xi8>
// CHECK: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"(%{{.+}}, %[[A]], %[[B0]]) : (vector<16xi32>, vector<64xi8>, vector<64xi8>) -> vector<16xi32>
// CHECK: arith.sitofp %{{.+}} : vector<16xi32> to vector<16xf32>
// CHECK: arith.addf %{{.+}}, %{{.+}} : vector<16xf32>
// CHECK: vector.transfer_write
// CHECK-NOT: linalg.generic
// CHECK-NOT: linalg.broadcast
// Without VNNI the generic stays as it is (plain loops).
// OFF-LABEL: func.func @int8_conv
// OFF-NOT: packed_filter
// OFF: linalg.generic {{.+}} attrs = {kiln.int8_contraction = true, kiln.int8_conv = array<i64: 1, 1, 1, 1>}
#in = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1 + d4, d2 + d5, d6)>
#w = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d5, d6, d3)>
#out = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>
func.func @int8_conv(%x: tensor<1x10x10x16xi8>, %corr: tensor<40xf32>) -> tensor<1x8x8x40xf32> {
  %w = arith.constant dense<3> : tensor<3x3x16x40xi8>
  %e = tensor.empty() : tensor<1x8x8x40xf32>
  %init = linalg.broadcast ins(%corr : tensor<40xf32>) outs(%e : tensor<1x8x8x40xf32>) dimensions = [0, 1, 2]
  %y = linalg.generic {indexing_maps = [#in, #w, #out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%x, %w : tensor<1x10x10x16xi8>, tensor<3x3x16x40xi8>) outs(%init : tensor<1x8x8x40xf32>) attrs = {kiln.int8_contraction = true, kiln.int8_conv = array<i64: 1, 1, 1, 1>} {
  ^bb0(%a: i8, %b: i8, %acc: f32):
    %0 = arith.extui %a : i8 to i32
    %1 = arith.extsi %b : i8 to i32
    %2 = arith.muli %0, %1 : i32
    %3 = arith.sitofp %2 : i32 to f32
    %4 = arith.addf %acc, %3 : f32
    linalg.yield %4 : f32
  } -> tensor<1x8x8x40xf32>
  return %y : tensor<1x8x8x40xf32>
}
