// RUN: kiln-opt %s --kiln-fuse-elementwise --split-input-file | FileCheck %s

// An elementwise chain becomes one generic (each element read once).
// CHECK-LABEL: func.func @chain
// CHECK: linalg.generic
// CHECK: math.erf
// CHECK: arith.maximumf
// CHECK-NOT: linalg.generic
#id = affine_map<(i, j) -> (i, j)>
func.func @chain(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %zero = arith.constant 0.0 : f32
  %g = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.erf %a : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%g : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.maximumf %a, %zero : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// A contraction reads each element of its A operand N times: the erf stays
// in its own generic instead of being evaluated per multiply-add.
// CHECK-LABEL: func.func @not_into_contraction
// CHECK: %[[G:.+]] = linalg.generic
// CHECK: math.erf
// CHECK: linalg.generic {{.*}}ins(%[[G]], %{{.+}} : tensor<4x8xf32>, tensor<8x2xf32>)
// CHECK-NOT: math.erf
// CHECK: return
#id = affine_map<(i, j) -> (i, j)>
func.func @not_into_contraction(%x: tensor<4x8xf32>, %w: tensor<8x2xf32>, %acc: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %g = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.erf %a : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%g, %w : tensor<4x8xf32>, tensor<8x2xf32>) outs(%acc : tensor<4x2xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x2xf32>
  return %y : tensor<4x2xf32>
}

// -----

// A reduction reads each element once: exp is fused into the sum.
// CHECK-LABEL: func.func @into_reduction
// CHECK: linalg.generic
// CHECK: math.exp
// CHECK: arith.addf
// CHECK-NOT: linalg.generic
func.func @into_reduction(%x: tensor<4x8xf32>, %acc: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.exp %a : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
      ins(%g : tensor<4x8xf32>) outs(%acc : tensor<4xf32>) {
  ^bb0(%a: f32, %c: f32):
    %r = arith.addf %a, %c : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %s : tensor<4xf32>
}

// -----

// The epilogue of a contraction (bias per column, ReLU, residual add) ends
// up as one generic reading the matmul's result through an identity map,
// the form kiln-tile-contractions applies in its register tiles.
// CHECK-LABEL: func.func @epilogue_chain
// CHECK: %[[Y:.+]] = linalg.matmul
// CHECK: linalg.generic {indexing_maps = [#{{.+}}, #{{.+}}, #{{.+}}, #{{.+}}], iterator_types = ["parallel", "parallel"]} ins(%[[Y]], %arg2, %arg3 : tensor<4x16xf32>, tensor<16xf32>, tensor<4x16xf32>)
// CHECK: arith.addf
// CHECK: arith.maximumf
// CHECK: arith.addf
// CHECK-NOT: linalg.generic
#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
func.func @epilogue_chain(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>, %bias: tensor<16xf32>, %res: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %y = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x16xf32>) outs(%f : tensor<4x16xf32>) -> tensor<4x16xf32>
  %1 = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%y, %bias : tensor<4x16xf32>, tensor<16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%x: f32, %c: f32, %o: f32):
    %s = arith.addf %x, %c : f32
    linalg.yield %s : f32
  } -> tensor<4x16xf32>
  %2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%1 : tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%x: f32, %o: f32):
    %r = arith.maximumf %x, %zero : f32
    linalg.yield %r : f32
  } -> tensor<4x16xf32>
  %3 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%2, %res : tensor<4x16xf32>, tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%x: f32, %r: f32, %o: f32):
    %s = arith.addf %x, %r : f32
    linalg.yield %s : f32
  } -> tensor<4x16xf32>
  return %3 : tensor<4x16xf32>
}

// -----

// A 0-d scale made by a generic that only yields a constant (read by two
// consumers, so not fused), and a filled bias: both consumers read the
// constants in their bodies instead of loading them.
// CHECK-LABEL: func.func @uniform_inputs
// CHECK-DAG: %[[SCALE:.+]] = arith.constant 1.250000e-01 : f32
// CHECK-DAG: %[[HALF:.+]] = arith.constant 5.000000e-01 : f32
// CHECK-NOT: tensor<f32>
// CHECK-NOT: linalg.fill
// CHECK: linalg.generic {{.*}} ins(%arg0 : tensor<12x128xf32>)
// CHECK: ^bb0(%[[IN:.+]]: f32, %{{.+}}: f32):
// CHECK: arith.mulf %[[IN]], %[[SCALE]] : f32
// CHECK: linalg.generic {{.*}} ins(%arg1 : tensor<12x128xf32>)
// CHECK: ^bb0(%[[IN2:.+]]: f32, %{{.+}}: f32):
// CHECK: %[[M:.+]] = arith.mulf %[[IN2]], %[[SCALE]] : f32
// CHECK: arith.addf %[[M]], %[[HALF]] : f32
#id = affine_map<(i, j) -> (i, j)>
#scalar = affine_map<(i, j) -> ()>
func.func @uniform_inputs(%x: tensor<12x128xf32>, %z: tensor<12x128xf32>) -> (tensor<12x128xf32>, tensor<12x128xf32>) {
  %cst = arith.constant 0.125 : f32
  %half = arith.constant 0.5 : f32
  %e1 = tensor.empty() : tensor<1xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%e1 : tensor<1xf32>) {
  ^bb0(%o: f32):
    linalg.yield %cst : f32
  } -> tensor<1xf32>
  %c = tensor.collapse_shape %s [] : tensor<1xf32> into tensor<f32>
  %e = tensor.empty() : tensor<12x128xf32>
  %bias = linalg.fill ins(%half : f32) outs(%e : tensor<12x128xf32>) -> tensor<12x128xf32>
  %y = linalg.generic {indexing_maps = [#id, #scalar, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %c : tensor<12x128xf32>, tensor<f32>) outs(%e : tensor<12x128xf32>) {
  ^bb0(%a: f32, %k: f32, %o: f32):
    %m = arith.mulf %a, %k : f32
    linalg.yield %m : f32
  } -> tensor<12x128xf32>
  %w = linalg.generic {indexing_maps = [#id, #scalar, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%z, %c, %bias : tensor<12x128xf32>, tensor<f32>, tensor<12x128xf32>) outs(%e : tensor<12x128xf32>) {
  ^bb0(%a: f32, %k: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %k : f32
    %r = arith.addf %m, %b : f32
    linalg.yield %r : f32
  } -> tensor<12x128xf32>
  return %y, %w : tensor<12x128xf32>, tensor<12x128xf32>
}
