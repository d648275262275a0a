// RUN: kiln-opt %s -kiln-fuse-attention -split-input-file | FileCheck %s
// RUN: env KILN_LOGS=+fusion kiln-opt %s -kiln-fuse-attention -split-input-file --mlir-disable-threading -o /dev/null 2>&1 | FileCheck %s --check-prefix=LOG

// torch's SDPA after run_decompositions(): q and k^T each scaled by
// sqrt(scale) (0.5 * 0.5 = 1/sqrt(16)), the batch and heads flattened into
// 3-D bmms and restored, the probabilities guarded against rows masked
// everywhere. Without a mask no row can be: one kiln.attention.
// CHECK-LABEL: func.func @sdpa_math
// CHECK-SAME: (%[[Q:.+]]: tensor<2x4x10x16xf32>, %[[K:.+]]: tensor<2x4x10x16xf32>, %[[V:.+]]: tensor<2x4x10x16xf32>)
// CHECK: %[[O:.+]] = kiln.attention %[[Q]], %[[K]], %[[V]] {scale = 2.500000e-01 : f64}
// CHECK-NOT: kiln.matmul
// CHECK-NOT: kiln.softmax
// CHECK-NOT: kiln.where
// CHECK: return %[[O]]
// LOG: unflattened 2 batched matmul(s) of attention
// LOG: fused attention at 'bmm_1': {{.+}} mask none, the guard against rows masked everywhere dropped (none can be)
func.func @sdpa_math(%q: tensor<2x4x10x16xf32>, %k: tensor<2x4x10x16xf32>, %v: tensor<2x4x10x16xf32>) -> tensor<2x4x10x16xf32> {
  %c = kiln.constant dense<0.5> : tensor<f32>
  %qs = kiln.mul %q, %c : (tensor<2x4x10x16xf32>, tensor<f32>) -> tensor<2x4x10x16xf32>
  %kt = kiln.transpose %k {perm = array<i64: 0, 1, 3, 2>} : (tensor<2x4x10x16xf32>) -> tensor<2x4x16x10xf32>
  %ks = kiln.mul %kt, %c : (tensor<2x4x16x10xf32>, tensor<f32>) -> tensor<2x4x16x10xf32>
  %q3 = kiln.reshape %qs {shape = array<i64: 8, 10, 16>} : (tensor<2x4x10x16xf32>) -> tensor<8x10x16xf32>
  %k3 = kiln.reshape %ks {shape = array<i64: 8, 16, 10>} : (tensor<2x4x16x10xf32>) -> tensor<8x16x10xf32>
  %s3 = kiln.matmul %q3, %k3 : (tensor<8x10x16xf32>, tensor<8x16x10xf32>) -> tensor<8x10x10xf32> loc("bmm")
  %s = kiln.reshape %s3 {shape = array<i64: 2, 4, 10, 10>} : (tensor<8x10x10xf32>) -> tensor<2x4x10x10xf32>
  %p = kiln.softmax %s {axis = 3 : i64} : (tensor<2x4x10x10xf32>) -> tensor<2x4x10x10xf32>
  %ninf = kiln.constant dense<0xFF800000> : tensor<f32>
  %eq = kiln.equal %s, %ninf : (tensor<2x4x10x10xf32>, tensor<f32>) -> tensor<2x4x10x10xi1>
  %kept = kiln.not %eq : (tensor<2x4x10x10xi1>) -> tensor<2x4x10x10xi1>
  %keptf = kiln.cast %kept {to = f32} : (tensor<2x4x10x10xi1>) -> tensor<2x4x10x10xf32>
  %anyf = kiln.reduce_max %keptf {axes = array<i64: 3>} : (tensor<2x4x10x10xf32>) -> tensor<2x4x10x1xf32>
  %any = kiln.cast %anyf {to = i1} : (tensor<2x4x10x1xf32>) -> tensor<2x4x10x1xi1>
  %none = kiln.not %any : (tensor<2x4x10x1xi1>) -> tensor<2x4x10x1xi1>
  %zeros = kiln.constant dense<0.0> : tensor<2x4x10x10xf32>
  %g = kiln.where %none, %zeros, %p : (tensor<2x4x10x1xi1>, tensor<2x4x10x10xf32>, tensor<2x4x10x10xf32>) -> tensor<2x4x10x10xf32>
  %g3 = kiln.reshape %g {shape = array<i64: 8, 10, 10>} : (tensor<2x4x10x10xf32>) -> tensor<8x10x10xf32>
  %v3 = kiln.reshape %v {shape = array<i64: 8, 10, 16>} : (tensor<2x4x10x16xf32>) -> tensor<8x10x16xf32>
  %o3 = kiln.matmul %g3, %v3 : (tensor<8x10x10xf32>, tensor<8x10x16xf32>) -> tensor<8x10x16xf32> loc("bmm_1")
  %o = kiln.reshape %o3 {shape = array<i64: 2, 4, 10, 16>} : (tensor<8x10x16xf32>) -> tensor<2x4x10x16xf32>
  return %o : tensor<2x4x10x16xf32>
}

// -----

// A mask from an input may mask a whole row (a padding mask over an empty
// sequence), where the guard gives 0 and the plain softmax NaN: the fused
// op keeps the guard's answer as `zero_masked_rows`.
// CHECK-LABEL: func.func @sdpa_math_mask
// CHECK-SAME: (%[[Q:.+]]: tensor<2x4x10x16xf32>, %[[K:.+]]: tensor<2x4x10x16xf32>, %[[V:.+]]: tensor<2x4x10x16xf32>, %[[M:.+]]: tensor<2x1x1x10xf32>)
// CHECK: %[[O:.+]] = kiln.attention %[[Q]], %[[K]], %[[V]], %[[M]] {scale = 1.000000e+00 : f64, zero_masked_rows}
// CHECK-NOT: kiln.softmax
// CHECK-NOT: kiln.where
// CHECK: return %[[O]]
// LOG: fused attention at 'bmm_1': {{.+}} mask additive [2, 1, 1, 10] from a graph input, rows it masks everywhere 0 (torch's guard)
func.func @sdpa_math_mask(%q: tensor<2x4x10x16xf32>, %k: tensor<2x4x10x16xf32>, %v: tensor<2x4x10x16xf32>, %m: tensor<2x1x1x10xf32>) -> tensor<2x4x10x16xf32> {
  %kt = kiln.transpose %k {perm = array<i64: 0, 1, 3, 2>} : (tensor<2x4x10x16xf32>) -> tensor<2x4x16x10xf32>
  %q3 = kiln.reshape %q {shape = array<i64: 8, 10, 16>} : (tensor<2x4x10x16xf32>) -> tensor<8x10x16xf32>
  %k3 = kiln.reshape %kt {shape = array<i64: 8, 16, 10>} : (tensor<2x4x16x10xf32>) -> tensor<8x16x10xf32>
  %s3 = kiln.matmul %q3, %k3 : (tensor<8x10x16xf32>, tensor<8x16x10xf32>) -> tensor<8x10x10xf32> loc("bmm")
  %s = kiln.reshape %s3 {shape = array<i64: 2, 4, 10, 10>} : (tensor<8x10x10xf32>) -> tensor<2x4x10x10xf32>
  %sm = kiln.add %s, %m : (tensor<2x4x10x10xf32>, tensor<2x1x1x10xf32>) -> tensor<2x4x10x10xf32>
  %p = kiln.softmax %sm {axis = 3 : i64} : (tensor<2x4x10x10xf32>) -> tensor<2x4x10x10xf32>
  %ninf = kiln.constant dense<0xFF800000> : tensor<f32>
  %eq = kiln.equal %sm, %ninf : (tensor<2x4x10x10xf32>, tensor<f32>) -> tensor<2x4x10x10xi1>
  %kept = kiln.not %eq : (tensor<2x4x10x10xi1>) -> tensor<2x4x10x10xi1>
  %keptf = kiln.cast %kept {to = f32} : (tensor<2x4x10x10xi1>) -> tensor<2x4x10x10xf32>
  %anyf = kiln.reduce_max %keptf {axes = array<i64: 3>} : (tensor<2x4x10x10xf32>) -> tensor<2x4x10x1xf32>
  %any = kiln.cast %anyf {to = i1} : (tensor<2x4x10x1xf32>) -> tensor<2x4x10x1xi1>
  %none = kiln.not %any : (tensor<2x4x10x1xi1>) -> tensor<2x4x10x1xi1>
  %zeros = kiln.constant dense<0.0> : tensor<2x4x10x10xf32>
  %g = kiln.where %none, %zeros, %p : (tensor<2x4x10x1xi1>, tensor<2x4x10x10xf32>, tensor<2x4x10x10xf32>) -> tensor<2x4x10x10xf32>
  %g3 = kiln.reshape %g {shape = array<i64: 8, 10, 10>} : (tensor<2x4x10x10xf32>) -> tensor<8x10x10xf32>
  %v3 = kiln.reshape %v {shape = array<i64: 8, 10, 16>} : (tensor<2x4x10x16xf32>) -> tensor<8x10x16xf32>
  %o3 = kiln.matmul %g3, %v3 : (tensor<8x10x10xf32>, tensor<8x10x16xf32>) -> tensor<8x10x16xf32> loc("bmm_1")
  %o = kiln.reshape %o3 {shape = array<i64: 2, 4, 10, 16>} : (tensor<8x10x16xf32>) -> tensor<2x4x10x16xf32>
  return %o : tensor<2x4x10x16xf32>
}

// -----

// The scale applied to the scores after the product, with the guard: the
// guard's equal and the softmax both read the scaled scores, and a positive
// scale keeps "is -inf" the same before and after it: one kiln.attention.
// CHECK-LABEL: func.func @scaled_scores_guarded
// CHECK-SAME: (%[[Q:.+]]: tensor<2x4x10x16xf32>, %[[K:.+]]: tensor<2x4x10x16xf32>, %[[V:.+]]: tensor<2x4x10x16xf32>)
// CHECK: %[[O:.+]] = kiln.attention %[[Q]], %[[K]], %[[V]] {scale = 2.500000e-01 : f64}
// CHECK-NOT: kiln.softmax
// CHECK: return %[[O]]
// LOG: fused attention at 'pv': {{.+}} mask none, the guard against rows masked everywhere dropped (none can be)
func.func @scaled_scores_guarded(%q: tensor<2x4x10x16xf32>, %k: tensor<2x4x10x16xf32>, %v: tensor<2x4x10x16xf32>) -> tensor<2x4x10x16xf32> {
  %c = kiln.constant dense<0.25> : tensor<f32>
  %kt = kiln.transpose %k {perm = array<i64: 0, 1, 3, 2>} : (tensor<2x4x10x16xf32>) -> tensor<2x4x16x10xf32>
  %s = kiln.matmul %q, %kt : (tensor<2x4x10x16xf32>, tensor<2x4x16x10xf32>) -> tensor<2x4x10x10xf32> loc("qk")
  %ss = kiln.mul %s, %c : (tensor<2x4x10x10xf32>, tensor<f32>) -> tensor<2x4x10x10xf32>
  %p = kiln.softmax %ss {axis = 3 : i64} : (tensor<2x4x10x10xf32>) -> tensor<2x4x10x10xf32>
  %ninf = kiln.constant dense<0xFF800000> : tensor<f32>
  %eq = kiln.equal %ss, %ninf : (tensor<2x4x10x10xf32>, tensor<f32>) -> tensor<2x4x10x10xi1>
  %kept = kiln.not %eq : (tensor<2x4x10x10xi1>) -> tensor<2x4x10x10xi1>
  %keptf = kiln.cast %kept {to = f32} : (tensor<2x4x10x10xi1>) -> tensor<2x4x10x10xf32>
  %anyf = kiln.reduce_max %keptf {axes = array<i64: 3>} : (tensor<2x4x10x10xf32>) -> tensor<2x4x10x1xf32>
  %any = kiln.cast %anyf {to = i1} : (tensor<2x4x10x1xf32>) -> tensor<2x4x10x1xi1>
  %none = kiln.not %any : (tensor<2x4x10x1xi1>) -> tensor<2x4x10x1xi1>
  %zeros = kiln.constant dense<0.0> : tensor<2x4x10x10xf32>
  %g = kiln.where %none, %zeros, %p : (tensor<2x4x10x1xi1>, tensor<2x4x10x10xf32>, tensor<2x4x10x10xf32>) -> tensor<2x4x10x10xf32>
  %o = kiln.matmul %g, %v : (tensor<2x4x10x10xf32>, tensor<2x4x10x16xf32>) -> tensor<2x4x10x16xf32> loc("pv")
  return %o : tensor<2x4x10x16xf32>
}

// -----

// A negative scale would turn -inf scores into +inf ones, which the guard
// then no longer sees: the scores are not peeled, nothing fuses, and the
// log says why.
// CHECK-LABEL: func.func @negative_scale_guarded
// CHECK-NOT: kiln.attention
// CHECK: kiln.softmax
// LOG: not fusing attention at 'neg_pv': the scale at '{{.*}}' is not positive and torch's row guard also reads the scaled scores
func.func @negative_scale_guarded(%q: tensor<2x4x10x16xf32>, %k: tensor<2x4x10x16xf32>, %v: tensor<2x4x10x16xf32>) -> tensor<2x4x10x16xf32> {
  %c = kiln.constant dense<-0.25> : tensor<f32>
  %kt = kiln.transpose %k {perm = array<i64: 0, 1, 3, 2>} : (tensor<2x4x10x16xf32>) -> tensor<2x4x16x10xf32>
  %s = kiln.matmul %q, %kt : (tensor<2x4x10x16xf32>, tensor<2x4x16x10xf32>) -> tensor<2x4x10x10xf32>
  %ss = kiln.mul %s, %c : (tensor<2x4x10x10xf32>, tensor<f32>) -> tensor<2x4x10x10xf32>
  %p = kiln.softmax %ss {axis = 3 : i64} : (tensor<2x4x10x10xf32>) -> tensor<2x4x10x10xf32>
  %ninf = kiln.constant dense<0xFF800000> : tensor<f32>
  %eq = kiln.equal %ss, %ninf : (tensor<2x4x10x10xf32>, tensor<f32>) -> tensor<2x4x10x10xi1>
  %kept = kiln.not %eq : (tensor<2x4x10x10xi1>) -> tensor<2x4x10x10xi1>
  %keptf = kiln.cast %kept {to = f32} : (tensor<2x4x10x10xi1>) -> tensor<2x4x10x10xf32>
  %anyf = kiln.reduce_max %keptf {axes = array<i64: 3>} : (tensor<2x4x10x10xf32>) -> tensor<2x4x10x1xf32>
  %any = kiln.cast %anyf {to = i1} : (tensor<2x4x10x1xf32>) -> tensor<2x4x10x1xi1>
  %none = kiln.not %any : (tensor<2x4x10x1xi1>) -> tensor<2x4x10x1xi1>
  %zeros = kiln.constant dense<0.0> : tensor<2x4x10x10xf32>
  %g = kiln.where %none, %zeros, %p : (tensor<2x4x10x1xi1>, tensor<2x4x10x10xf32>, tensor<2x4x10x10xf32>) -> tensor<2x4x10x10xf32>
  %o = kiln.matmul %g, %v : (tensor<2x4x10x10xf32>, tensor<2x4x10x16xf32>) -> tensor<2x4x10x16xf32> loc("neg_pv")
  return %o : tensor<2x4x10x16xf32>
}
