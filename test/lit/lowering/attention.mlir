// RUN: kiln-opt %s -kiln-lower-to-linalg -canonicalize -split-input-file | FileCheck %s

// Two 64-row query blocks, each walking two 64-key blocks with running
// max/sum/accumulator; only 64x64 score tiles exist, never 128x128.
// CHECK-DAG: #[[ROWS:.+]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[COLS:.+]] = affine_map<(d0, d1, d2) -> (d2, d1)>
// CHECK-DAG: #[[OUT:.+]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[PT:.+]] = affine_map<(d0, d1, d2) -> (d2, d0)>
// CHECK-DAG: #[[LANES:.+]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG: #[[ID:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @blocks
// CHECK-NOT: 128x128
// The (batch, head, query block) triples are one scf.forall (the thread
// pool's work); each iteration inserts its [64, Dv] tile of the result.
// (The unit batch dim folds away.)
// CHECK: scf.forall (%[[H:.+]], %[[QB:.+]]) in (2, 2) shared_outs(%[[SHARED:.+]] = %{{.+}}) -> (tensor<1x2x128x16xf32>)
// CHECK: %[[ROW:.+]] = arith.muli %[[QB]], %c64
// CHECK: %[[QTILE:.+]] = tensor.extract_slice %arg0[0, %[[H]], %[[ROW]], 0] [1, 1, 64, 16] [1, 1, 1, 1] : tensor<1x2x128x16xf32> to tensor<64x16xf32>
// The query block transposed and scaled once: qT [16, 64].
// CHECK: %[[QT:.+]] = linalg.generic {{.+}} ins(%[[QTILE]] : tensor<64x16xf32>) outs(%{{.+}} : tensor<16x64xf32>)
// CHECK: arith.mulf %{{.+}}, %cst : f32
// CHECK: scf.for %[[KB:.+]] = {{.+}} iter_args({{.+}}) -> (tensor<64xf32>, tensor<64xf32>, tensor<64x16xf32>)
// CHECK: %[[KTILE:.+]] = tensor.extract_slice %arg1[0, %[[H]], %[[KB]], 0] [1, 1, 64, 16]
// CHECK: %[[VTILE:.+]] = tensor.extract_slice %arg2[0, %[[H]], %[[KB]], 0] [1, 1, 64, 16]
// Scores transposed, sT = k qT: a contraction with the queries innermost.
// CHECK: %[[ST:.+]] = linalg.generic {indexing_maps = [#[[ROWS]], #[[COLS]], #[[OUT]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[KTILE]], %[[QT]] : tensor<64x16xf32>, tensor<16x64xf32>) outs(%{{.+}} : tensor<64x64xf32>)
// Row max over the keys, the outer dim: vector lanes over queries.
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[LANES]]], iterator_types = ["reduction", "parallel"]} ins(%[[ST]] : tensor<64x64xf32>) outs(%{{.+}} : tensor<64xf32>)
// CHECK: arith.maximumf
// p = exp(s - m) in place and the row sums, in one pass over the tile.
// CHECK: %[[P:.+]]:2 = linalg.generic {indexing_maps = [#[[LANES]], #[[ID]], #[[LANES]]], iterator_types = ["reduction", "parallel"]} ins(%{{.+}} : tensor<64xf32>) outs(%[[ST]], %{{.+}} : tensor<64x64xf32>, tensor<64xf32>)
// CHECK: %[[E:.+]] = math.exp
// CHECK: %[[L:.+]] = arith.addf %{{.+}}, %[[E]]
// CHECK: linalg.yield %[[E]], %[[L]]
// acc += pT^T v.
// CHECK: linalg.generic {indexing_maps = [#[[PT]], #[[COLS]], #[[OUT]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[P]]#0, %[[VTILE]] : tensor<64x64xf32>, tensor<64x16xf32>) outs(%{{.+}} : tensor<64x16xf32>)
// CHECK: scf.yield %{{.+}}, %{{.+}}, %{{.+}} : tensor<64xf32>, tensor<64xf32>, tensor<64x16xf32>
// CHECK: arith.divf
// CHECK: scf.forall.in_parallel
// CHECK: tensor.parallel_insert_slice %{{.+}} into %[[SHARED]][0, %[[H]], %[[ROW]], 0] [1, 1, 64, 16]
// CHECK-NOT: 128x128
func.func @blocks(%q: tensor<1x2x128x16xf32>, %k: tensor<1x2x128x16xf32>, %v: tensor<1x2x128x16xf32>) -> tensor<1x2x128x16xf32> {
  %o = kiln.attention %q, %k, %v {causal = false, scale = 2.500000e-01 : f64} : (tensor<1x2x128x16xf32>, tensor<1x2x128x16xf32>, tensor<1x2x128x16xf32>) -> tensor<1x2x128x16xf32>
  return %o : tensor<1x2x128x16xf32>
}

// -----

// Causal with tails: 200 = 3 * 64 + 8, four query blocks taken in the
// order 0, 3, 1, 2 (iteration 2a + 1 takes block n - 1 - a) so that the
// pool's runs of iterations have equal work. The key loop stops at the
// diagonal block (min with ceil((row0 + 64) / 64) * 64); the 8-key tail
// block runs under scf.if when the query block reaches it; future keys get
// -inf. The 8-row query tail is its own static block.
// CHECK-LABEL: func.func @causal_tail
// CHECK: scf.forall (%[[P:.+]]) in (4) shared_outs(%[[SHARED:.+]] = %{{.+}})
// CHECK: %[[HALF:.+]] = arith.divui %[[P]], %c2
// CHECK: %[[ODD:.+]] = arith.remui %[[P]], %c2
// CHECK: %[[ISODD:.+]] = arith.cmpi ne, %[[ODD]], %c0
// CHECK: %[[MIRROR:.+]] = arith.subi %c3, %[[HALF]]
// CHECK: %[[QB:.+]] = arith.select %[[ISODD]], %[[MIRROR]], %[[HALF]]
// CHECK: %[[ROW:.+]] = arith.muli %[[QB]], %c64
// CHECK: %[[LEFT:.+]] = arith.subi %c200, %[[ROW]]
// CHECK: %[[ROWS:.+]] = arith.minui %[[LEFT]], %c64
// CHECK: %[[WHOLE:.+]] = arith.cmpi eq, %[[ROWS]], %c64
// CHECK: %[[TILE:.+]] = scf.if %[[WHOLE]] -> (tensor<?x8xf32>)
// CHECK: %[[END:.+]] = arith.minui %{{.+}}, %c192 : index
// CHECK: scf.for %{{.+}} = %{{.+}} to %[[END]] step %{{.+}} iter_args({{.+}}) -> (tensor<64xf32>, tensor<64xf32>, tensor<64x8xf32>)
// CHECK: linalg.index 1
// CHECK: linalg.index 0
// CHECK: arith.cmpi ugt
// CHECK: arith.select
// CHECK: scf.if %{{.+}} -> (
// CHECK: tensor.extract_slice %arg1[0, 192, 0] [1, 8, 8]
// CHECK: tensor.extract_slice %arg2[0, 192, 0] [1, 8, 8]
// CHECK: tensor.cast %{{.+}} : tensor<64x8xf32> to tensor<?x8xf32>
// CHECK: } else {
// CHECK: tensor.extract_slice %arg0[0, %[[ROW]], 0] [1, 8, 8]
// CHECK: tensor.cast %{{.+}} : tensor<8x8xf32> to tensor<?x8xf32>
// CHECK: scf.forall.in_parallel
// CHECK: tensor.parallel_insert_slice %[[TILE]] into %[[SHARED]][0, %[[ROW]], 0] [1, %[[ROWS]], 8]
func.func @causal_tail(%q: tensor<1x200x8xf32>, %k: tensor<1x200x8xf32>, %v: tensor<1x200x8xf32>) -> tensor<1x200x8xf32> {
  %o = kiln.attention %q, %k, %v {causal = true, scale = 1.0 : f64} : (tensor<1x200x8xf32>, tensor<1x200x8xf32>, tensor<1x200x8xf32>) -> tensor<1x200x8xf32>
  return %o : tensor<1x200x8xf32>
}

// -----

// A [B, 1, 1, Sk] mask: its tile follows the batch and key indices and
// broadcasts over the query rows: the scores are [keys, queries], so the map
// is (j, i) -> (j). The one query block's forall dim folds away.
// CHECK-DAG: #[[KEYS:.+]] = affine_map<(d0, d1) -> (d0)>
// CHECK-DAG: #[[ID:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @padding_mask
// CHECK: scf.forall (%[[B:[a-z0-9_]+]], %{{.+}}) in (2, 4) {{.+}} -> (tensor<2x4x8x16xf32>)
// CHECK: tensor.extract_slice %arg3[%[[B]], 0, 0, 0] [1, 1, 1, 8] [1, 1, 1, 1] : tensor<2x1x1x8xf32> to tensor<8xf32>
// CHECK: linalg.generic {indexing_maps = [#[[KEYS]], #[[ID]]], {{.+}} ins(%{{.+}} : tensor<8xf32>) outs(%{{.+}} : tensor<8x8xf32>)
// CHECK: arith.addf
func.func @padding_mask(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x8x16xf32>, %v: tensor<2x4x8x16xf32>, %m: tensor<2x1x1x8xf32>) -> tensor<2x4x8x16xf32> {
  %o = kiln.attention %q, %k, %v, %m {causal = false, scale = 2.500000e-01 : f64} : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x1x1x8xf32>) -> tensor<2x4x8x16xf32>
  return %o : tensor<2x4x8x16xf32>
}

// -----

// zero_masked_rows (torch's guarded softmax): the final division gives 0
// where the row sum is 0 (every key masked out) instead of 0/0.
// CHECK-LABEL: func.func @zero_masked_rows
// CHECK: arith.divf %[[ACC:.+]], %[[SUM:.+]] : f32
// CHECK: %[[EMPTY:.+]] = arith.cmpf oeq, %[[SUM]], %{{.+}} : f32
// CHECK: arith.select %[[EMPTY]], %{{.+}}, %{{.+}} : f32
func.func @zero_masked_rows(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %m: tensor<1x1x1x8xf32>) -> tensor<1x2x8x16xf32> {
  %o = kiln.attention %q, %k, %v, %m {scale = 2.500000e-01 : f64, zero_masked_rows} : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x1x1x8xf32>) -> tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}
