// RUN: kiln-opt %s --kiln-tile-contractions="int8-dot=true" -split-input-file | FileCheck %s
// RUN: kiln-opt %s --kiln-tile-contractions -split-input-file | FileCheck %s --check-prefix=OFF

// kiln.quantized_matmul's int8 contraction (kiln.int8_contraction) with
// VNNI: the constant int8 B is packed as k-quads [2 panels][16][32][4]; the
// k loop walks the 16 quads, each row's 4 bytes of A broadcast as one i32
// into vpdpbusd (uint8 x int8, i32 sums) on two vector<16xi32> halves per
// row, started at zero; after the K block the sums are converted and added
// to the f32 rows read from the accumulator (its zero-point correction).
// CHECK-LABEL: func.func @int8
// CHECK-DAG: %[[ZEROS:.+]] = arith.constant dense<0> : vector<16xi32>
// CHECK-DAG: arith.constant {{.*}}dense_resource<packed_rhs> : tensor<2x16x32x4xi8>
// CHECK: scf.forall
// CHECK-COUNT-8: vector.transfer_read %{{.+}} : tensor<16x2x32xf32>, vector<32xf32>
// CHECK: %[[QUADS:.+]] = tensor.collapse_shape %{{.+}} {{\[}}[0], [1], [2, 3]] : tensor<1x16x32x4xi8> into tensor<1x16x128xi8>
// CHECK: scf.for %[[KQ:.+]] = %c0 to %c16 step %c1 iter_args(%[[R0:[^ ]+]] = %[[ZEROS]], %[[R1:[^ ]+]] = %[[ZEROS]], {{.+}}) -> (vector<16xi32>,
// CHECK: %[[B:.+]] = vector.transfer_read %[[QUADS]][%c0, %[[KQ]], %c0], %{{.+}} {in_bounds = [true]} : tensor<1x16x128xi8>, vector<128xi8>
// CHECK: %[[B0:.+]] = vector.extract_strided_slice %[[B]] {offsets = [0], sizes = [64], strides = [1]}
// CHECK: %[[B1:.+]] = vector.extract_strided_slice %[[B]] {offsets = [64], sizes = [64], strides = [1]}
// CHECK: %[[K:.+]] = arith.muli %[[KQ]], %c4 : index
// CHECK: %[[Q:.+]] = vector.transfer_read %arg0[%{{.+}}, %[[K]]], %{{.+}} {in_bounds = [true]} : tensor<16x64xi8>, vector<4xi8>
// CHECK: %[[BITS:.+]] = vector.bitcast %[[Q]] : vector<4xi8> to vector<1xi32>
// CHECK: %[[SPLAT:.+]] = vector.broadcast %[[BITS]] : vector<1xi32> to vector<16xi32>
// CHECK: %[[A:.+]] = vector.bitcast %[[SPLAT]] : vector<16xi32> to vector<64xi8>
// CHECK: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"(%[[R0]], %[[A]], %[[B0]]) : (vector<16xi32>, vector<64xi8>, vector<64xi8>) -> vector<16xi32>
// CHECK: llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"(%[[R1]], %[[A]], %[[B1]])
// CHECK: scf.yield
// CHECK: arith.sitofp %{{.+}} : vector<16xi32> to vector<16xf32>
// CHECK: arith.addf %{{.+}}, %{{.+}} : vector<16xf32>
// CHECK-COUNT-8: vector.transfer_write %{{.+}} : vector<32xf32>
// Without VNNI the contraction stays as it is (plain loops).
// OFF-LABEL: func.func @int8
// OFF-NOT: packed_rhs
// OFF: linalg.generic {{.+}} attrs = {kiln.int8_contraction = true}
func.func @int8(%a: tensor<16x64xi8>, %init: tensor<16x40xf32>) -> tensor<16x40xf32> {
  %w = arith.constant dense<3> : tensor<64x40xi8>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %w : tensor<16x64xi8>, tensor<64x40xi8>) outs(%init : tensor<16x40xf32>) attrs = {kiln.int8_contraction = true} {
  ^bb0(%x: i8, %v: i8, %acc: f32):
    %0 = arith.extui %x : i8 to i32
    %1 = arith.extsi %v : i8 to i32
    %2 = arith.muli %0, %1 : i32
    %3 = arith.sitofp %2 : i32 to f32
    %4 = arith.addf %acc, %3 : f32
    linalg.yield %4 : f32
  } -> tensor<16x40xf32>
  return %y : tensor<16x40xf32>
}

// -----

// Signed bytes of A (kiln.int8_contraction = false): vpdpbusd would read
// them as unsigned, so the contraction stays loops.
// CHECK-LABEL: func.func @signed_lhs
// CHECK-NOT: packed_rhs
// CHECK-NOT: vpdpbusd
// CHECK: linalg.generic {{.+}} attrs = {kiln.int8_contraction = false}
func.func @signed_lhs(%a: tensor<16x64xi8>, %init: tensor<16x40xf32>) -> tensor<16x40xf32> {
  %w = arith.constant dense<3> : tensor<64x40xi8>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %w : tensor<16x64xi8>, tensor<64x40xi8>) outs(%init : tensor<16x40xf32>) attrs = {kiln.int8_contraction = false} {
  ^bb0(%x: i8, %v: i8, %acc: f32):
    %0 = arith.extsi %x : i8 to i32
    %1 = arith.extsi %v : i8 to i32
    %2 = arith.muli %0, %1 : i32
    %3 = arith.sitofp %2 : i32 to f32
    %4 = arith.addf %acc, %3 : f32
    linalg.yield %4 : f32
  } -> tensor<16x40xf32>
  return %y : tensor<16x40xf32>
}
