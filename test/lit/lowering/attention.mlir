// RUN: kiln-opt %s -kiln-lower-to-linalg -canonicalize -split-input-file | FileCheck %s

// Two 64-row query blocks, each walking two 64-key blocks with running
// max/sum/accumulator; only 64x64 score tiles exist, never 128x128.
// CHECK-LABEL: func.func @blocks
// CHECK-NOT: 128x128
// The (batch, head) pairs are one scf.forall (the thread pool's work); each
// iteration fills its [1, 1, Sq, Dv] slice of the result.
// (The unit batch dim folds away.)
// CHECK: scf.forall (%[[H:.+]]) in (2) shared_outs(%[[SHARED:.+]] = %{{.+}}) -> (tensor<1x2x128x16xf32>)
// CHECK: %[[OUT:.+]] = tensor.extract_slice %[[SHARED]][0, %[[H]], 0, 0] [1, 1, 128, 16] [1, 1, 1, 1]
// CHECK: %[[RES:.+]] = scf.for %[[QB:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%{{.+}} = %[[OUT]]) -> (tensor<1x1x128x16xf32>)
// CHECK: tensor.extract_slice %arg0[0, %[[H]], %[[QB]], 0] [1, 1, 64, 16] [1, 1, 1, 1] : tensor<1x2x128x16xf32> to tensor<64x16xf32>
// CHECK: scf.for %[[KB:.+]] = {{.+}} iter_args({{.+}}) -> (tensor<64xf32>, tensor<64xf32>, tensor<64x16xf32>)
// CHECK: %[[KTILE:.+]] = tensor.extract_slice %arg1[0, %[[H]], %[[KB]], 0] [1, 1, 64, 16]
// CHECK: %[[KT:.+]] = linalg.transpose ins(%[[KTILE]] : tensor<64x16xf32>) outs(%{{.+}} : tensor<16x64xf32>) permutation = [1, 0]
// CHECK: linalg.generic {{.+}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%{{.+}}, %[[KT]] : tensor<64x16xf32>, tensor<16x64xf32>) outs(%{{.+}} : tensor<64x64xf32>)
// CHECK: arith.mulf %{{.+}}, %{{.+}} : f32
// CHECK: arith.maximumf
// CHECK: math.exp
// CHECK: scf.yield %{{.+}}, %{{.+}}, %{{.+}} : tensor<64xf32>, tensor<64xf32>, tensor<64x16xf32>
// CHECK: arith.divf
// CHECK: tensor.insert_slice %{{.+}} into %{{.+}}[0, 0, %[[QB]], 0] [1, 1, 64, 16]
// CHECK: scf.forall.in_parallel
// CHECK: tensor.parallel_insert_slice %[[RES]] into %[[SHARED]][0, %[[H]], 0, 0] [1, 1, 128, 16]
// CHECK-NOT: 128x128
func.func @blocks(%q: tensor<1x2x128x16xf32>, %k: tensor<1x2x128x16xf32>, %v: tensor<1x2x128x16xf32>) -> tensor<1x2x128x16xf32> {
  %o = kiln.attention %q, %k, %v {causal = false, scale = 2.500000e-01 : f64} : (tensor<1x2x128x16xf32>, tensor<1x2x128x16xf32>, tensor<1x2x128x16xf32>) -> tensor<1x2x128x16xf32>
  return %o : tensor<1x2x128x16xf32>
}

// -----

// Causal with tails: 200 = 3 * 64 + 8. The key loop stops at the diagonal
// block (min with ceil((row0 + 64) / 64) * 64); the 8-key tail block runs
// under scf.if when the query block reaches it; future keys get -inf. The
// 8-row query tail is one more (static) block.
// CHECK-LABEL: func.func @causal_tail
// CHECK: scf.for %[[QB:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args
// CHECK: %[[END:.+]] = arith.minui %{{.+}}, %{{.+}} : index
// CHECK: scf.for %{{.+}} = %{{.+}} to %[[END]] step %{{.+}} iter_args({{.+}}) -> (tensor<64xf32>, tensor<64xf32>, tensor<64x8xf32>)
// CHECK: linalg.index 0
// CHECK: linalg.index 1
// CHECK: arith.cmpi ugt
// CHECK: arith.select
// CHECK: scf.if %{{.+}} -> (
// CHECK: tensor.extract_slice %arg1[0, 192, 0] [1, 8, 8]
// CHECK: tensor.extract_slice %arg0[0, 192, 0] [1, 8, 8]
// CHECK: tensor.insert_slice %{{.+}} into %{{.+}}[0, 192, 0] [1, 8, 8]
func.func @causal_tail(%q: tensor<1x200x8xf32>, %k: tensor<1x200x8xf32>, %v: tensor<1x200x8xf32>) -> tensor<1x200x8xf32> {
  %o = kiln.attention %q, %k, %v {causal = true, scale = 1.0 : f64} : (tensor<1x200x8xf32>, tensor<1x200x8xf32>, tensor<1x200x8xf32>) -> tensor<1x200x8xf32>
  return %o : tensor<1x200x8xf32>
}

// -----

// A [B, 1, 1, Sk] mask: its tile follows the batch and key indices and
// broadcasts over the query rows (map (i, j) -> (j)).
// CHECK-LABEL: func.func @padding_mask
// CHECK: scf.forall (%[[B:[a-z0-9_]+]], %{{.+}}) in (2, 4) {{.+}} -> (tensor<2x4x8x16xf32>)
// CHECK: tensor.extract_slice %arg3[%[[B]], 0, 0, 0] [1, 1, 1, 8] [1, 1, 1, 1] : tensor<2x1x1x8xf32> to tensor<8xf32>
// CHECK: linalg.generic {{.+}} ins(%{{.+}} : tensor<8xf32>) outs(%{{.+}} : tensor<8x8xf32>)
// CHECK: arith.addf
func.func @padding_mask(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x8x16xf32>, %v: tensor<2x4x8x16xf32>, %m: tensor<2x1x1x8xf32>) -> tensor<2x4x8x16xf32> {
  %o = kiln.attention %q, %k, %v, %m {causal = false, scale = 2.500000e-01 : f64} : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x1x1x8xf32>) -> tensor<2x4x8x16xf32>
  return %o : tensor<2x4x8x16xf32>
}
