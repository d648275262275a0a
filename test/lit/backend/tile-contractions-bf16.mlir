// RUN: kiln-opt %s --kiln-tile-contractions="bf16-weights=true bf16-dot=true" --split-input-file | FileCheck %s --check-prefix=DOT
// RUN: kiln-opt %s --kiln-tile-contractions="bf16-weights=true" --split-input-file | FileCheck %s --check-prefix=EXT
// RUN: kiln-opt %s --kiln-tile-contractions --split-input-file | FileCheck %s --check-prefix=F32

// --precision=bf16 with AVX512-BF16: the constant B is packed as bf16
// k-pairs [panels][K/2][32 lanes][2]; A becomes a bf16 [M, K] once; the k
// loop walks the 32 pairs, each a 64-element load of B split into two
// 16-lane halves, and per row one pair of A broadcast as i32 into vdpbf16ps
// (x86vector.avx512.dot) on two vector<16xf32> accumulators.
// DOT-LABEL: func.func @constant_rhs
// DOT-DAG: %[[PACKED:.+]] = arith.constant {{.*}}dense_resource<packed_rhs> : tensor<2x32x32x2xbf16>
// DOT-DAG: %[[ZEROS:.+]] = arith.constant dense<0.000000e+00> : vector<16xf32>
// DOT: %[[A16:.+]] = linalg.generic {{.+}} ins(%arg0 : tensor<16x64xf32>) outs(%{{.+}} : tensor<16x64xbf16>)
// DOT: arith.truncf %{{.+}} : f32 to bf16
// DOT: scf.forall
// DOT: %[[PANEL:.+]] = tensor.collapse_shape %{{.+}} {{\[}}[0], [1], [2, 3]] : tensor<1x32x32x2xbf16> into tensor<1x32x64xbf16>
// DOT: scf.for %[[KP:.+]] = %c0 to %c32 step %c1 iter_args(%[[R0:[^ ]+]] = %[[ZEROS]], %[[R1:[^ ]+]] = %[[ZEROS]], {{.+}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// DOT: %[[B:.+]] = vector.transfer_read %[[PANEL]][%c0, %[[KP]], %c0], %{{.+}} {in_bounds = [true]} : tensor<1x32x64xbf16>, vector<64xbf16>
// DOT: %[[B0:.+]] = vector.extract_strided_slice %[[B]] {offsets = [0], sizes = [32], strides = [1]}
// DOT: %[[B1:.+]] = vector.extract_strided_slice %[[B]] {offsets = [32], sizes = [32], strides = [1]}
// DOT: %[[K:.+]] = arith.muli %[[KP]], %c2 : index
// DOT: %[[PAIR:.+]] = vector.transfer_read %[[A16]][%{{.+}}, %[[K]]], %{{.+}} {in_bounds = [true]} : tensor<16x64xbf16>, vector<2xbf16>
// DOT: %[[BITS:.+]] = vector.bitcast %[[PAIR]] : vector<2xbf16> to vector<1xi32>
// DOT: %[[SPLAT:.+]] = vector.broadcast %[[BITS]] : vector<1xi32> to vector<16xi32>
// DOT: %[[A:.+]] = vector.bitcast %[[SPLAT]] : vector<16xi32> to vector<32xbf16>
// DOT: x86vector.avx512.dot %[[R0]], %[[A]], %[[B0]] : vector<32xbf16> -> vector<16xf32>
// DOT: x86vector.avx512.dot %[[R1]], %[[A]], %[[B1]] : vector<32xbf16> -> vector<16xf32>
// DOT-COUNT-14: x86vector.avx512.dot
// DOT: scf.yield
// DOT: vector.insert_strided_slice %{{.+}}, %{{.+}} {offsets = [0], strides = [1]} : vector<16xf32> into vector<32xf32>
// DOT: vector.insert_strided_slice %{{.+}}, %{{.+}} {offsets = [16], strides = [1]} : vector<16xf32> into vector<32xf32>
// DOT-COUNT-8: vector.transfer_write %{{.+}} : vector<32xf32>
// Without AVX512-BF16: the same panels as f32 ones, in bf16, extended to
// f32 as each row of B is loaded; A stays f32.
// EXT-LABEL: func.func @constant_rhs
// EXT: %[[PACKED:.+]] = arith.constant {{.*}}dense_resource<packed_rhs> : tensor<2x64x32xbf16>
// EXT-NOT: arith.truncf
// EXT: scf.for %{{.+}} = %c0 to %c64 step %c1 iter_args({{.+}}) -> (vector<32xf32>,
// EXT: %[[ROW:.+]] = vector.transfer_read %[[PACKED]][%{{.+}}, %{{.+}}, %c0], %{{.+}} {in_bounds = [true]} : tensor<2x64x32xbf16>, vector<32xbf16>
// EXT: %[[WIDE:.+]] = arith.extf %[[ROW]] : vector<32xbf16> to vector<32xf32>
// EXT-COUNT-8: vector.fma %{{.+}}, %[[WIDE]], %{{.+}} : vector<32xf32>
// F32-LABEL: func.func @constant_rhs
// F32: arith.constant {{.*}}dense_resource<packed_rhs> : tensor<2x64x32xf32>
// F32-NOT: bf16
func.func @constant_rhs(%a: tensor<16x64xf32>) -> tensor<16x40xf32> {
  %w = arith.constant dense<1.5> : tensor<64x40xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x40xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<16x40xf32>) -> tensor<16x40xf32>
  %y = linalg.matmul ins(%a, %w : tensor<16x64xf32>, tensor<64x40xf32>) outs(%f : tensor<16x40xf32>) -> tensor<16x40xf32>
  return %y : tensor<16x40xf32>
}

// -----

// An odd K has no whole k-pairs: the weights are still bf16, extended as
// loaded, with the dot form or without.
// DOT-LABEL: func.func @odd_k
// DOT: arith.constant {{.*}}dense_resource<packed_rhs> : tensor<1x7x32xbf16>
// DOT-NOT: x86vector.avx512.dot
// DOT: arith.extf %{{.+}} : vector<32xbf16> to vector<32xf32>
// EXT-LABEL: func.func @odd_k
// EXT: arith.constant {{.*}}dense_resource<packed_rhs> : tensor<1x7x32xbf16>
func.func @odd_k(%a: tensor<4x7xf32>, %acc: tensor<4x32xf32>) -> tensor<4x32xf32> {
  %w = arith.constant dense<0.5> : tensor<7x32xf32>
  %y = linalg.matmul ins(%a, %w : tensor<4x7xf32>, tensor<7x32xf32>) outs(%acc : tensor<4x32xf32>) -> tensor<4x32xf32>
  return %y : tensor<4x32xf32>
}

// -----

// Transposed A (Gemm transA): converted to a row-major bf16 [M, K] so that
// each row's pairs are adjacent.
// DOT: #[[T:.+]] = affine_map<(d0, d1) -> (d1, d0)>
// DOT-LABEL: func.func @transposed_a
// DOT: linalg.generic {indexing_maps = [#[[T]], #{{.+}}], {{.+}} ins(%arg0 : tensor<64x8xf32>) outs(%{{.+}} : tensor<8x64xbf16>)
// DOT: x86vector.avx512.dot
#at = affine_map<(m, n, k) -> (k, m)>
#b = affine_map<(m, n, k) -> (k, n)>
#c = affine_map<(m, n, k) -> (m, n)>
func.func @transposed_a(%a: tensor<64x8xf32>, %acc: tensor<8x32xf32>) -> tensor<8x32xf32> {
  %w = arith.constant dense<0.25> : tensor<64x32xf32>
  %y = linalg.generic {indexing_maps = [#at, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %w : tensor<64x8xf32>, tensor<64x32xf32>) outs(%acc : tensor<8x32xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %z, %p : f32
    linalg.yield %s : f32
  } -> tensor<8x32xf32>
  return %y : tensor<8x32xf32>
}
