// RUN: kiln-opt %s -kiln-fuse-attention -split-input-file | FileCheck %s

// BHSD, k^T by Transpose [0,1,3,2] (composed away), Div by sqrt(16).
// CHECK-LABEL: func.func @bhsd_div
// CHECK-SAME: (%[[Q:.+]]: tensor<1x2x8x16xf32>, %[[K:.+]]: tensor<1x2x8x16xf32>, %[[V:.+]]: tensor<1x2x8x16xf32>)
// CHECK-NOT: kiln.transpose
// CHECK: %[[O:.+]] = kiln.attention %[[Q]], %[[K]], %[[V]] {scale = 2.500000e-01 : f64}
// CHECK-NOT: kiln.softmax
// CHECK-NOT: kiln.matmul
// CHECK: return %[[O]]
func.func @bhsd_div(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  %kt = kiln.transpose %k {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x2x8x16xf32>) -> tensor<1x2x16x8xf32>
  %s = kiln.matmul %q, %kt : (tensor<1x2x8x16xf32>, tensor<1x2x16x8xf32>) -> tensor<1x2x8x8xf32>
  %c = kiln.constant dense<4.0> : tensor<f32>
  %d = kiln.div %s, %c : (tensor<1x2x8x8xf32>, tensor<f32>) -> tensor<1x2x8x8xf32>
  %p = kiln.softmax %d {axis = 3 : i64} : (tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  %o = kiln.matmul %p, %v : (tensor<1x2x8x8xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}

// -----

// Hugging Face BSHD: transpose(1, 2) on q and v, k^T as [0,2,3,1] of BSHD
// (one [0,2,1,3] transpose remains), Mul scale, additive padding mask.
// CHECK-LABEL: func.func @bshd_mul_mask
// CHECK-SAME: (%[[Q:.+]]: tensor<1x8x2x16xf32>, %[[K:.+]]: tensor<1x8x2x16xf32>, %[[V:.+]]: tensor<1x8x2x16xf32>, %[[M:.+]]: tensor<1x1x1x8xf32>)
// CHECK-DAG: %[[QT:.+]] = kiln.transpose %[[Q]] {perm = array<i64: 0, 2, 1, 3>}
// CHECK-DAG: %[[VT:.+]] = kiln.transpose %[[V]] {perm = array<i64: 0, 2, 1, 3>}
// CHECK-DAG: %[[KT:.+]] = kiln.transpose %[[K]] {perm = array<i64: 0, 2, 1, 3>}
// CHECK: kiln.attention %[[QT]], %[[KT]], %[[VT]], %[[M]] {scale = 2.500000e-01 : f64}
// CHECK-NOT: perm = array<i64: 0, 2, 3, 1>
func.func @bshd_mul_mask(%q: tensor<1x8x2x16xf32>, %k: tensor<1x8x2x16xf32>, %v: tensor<1x8x2x16xf32>, %m: tensor<1x1x1x8xf32>) -> tensor<1x2x8x16xf32> {
  %qt = kiln.transpose %q {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x8x2x16xf32>) -> tensor<1x2x8x16xf32>
  %kt = kiln.transpose %k {perm = array<i64: 0, 2, 3, 1>} : (tensor<1x8x2x16xf32>) -> tensor<1x2x16x8xf32>
  %vt = kiln.transpose %v {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x8x2x16xf32>) -> tensor<1x2x8x16xf32>
  %s = kiln.matmul %qt, %kt : (tensor<1x2x8x16xf32>, tensor<1x2x16x8xf32>) -> tensor<1x2x8x8xf32>
  %c = kiln.constant dense<0.25> : tensor<1xf32>
  %d = kiln.mul %s, %c : (tensor<1x2x8x8xf32>, tensor<1xf32>) -> tensor<1x2x8x8xf32>
  %a = kiln.add %d, %m : (tensor<1x2x8x8xf32>, tensor<1x1x1x8xf32>) -> tensor<1x2x8x8xf32>
  %p = kiln.softmax %a {axis = 3 : i64} : (tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  %o = kiln.matmul %p, %vt : (tensor<1x2x8x8xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}

// -----

// masked_fill of a constant tril buffer: Where(tri == 0, -inf, scores)
// is a causal triangle; the mask disappears.
// CHECK-LABEL: func.func @causal_where
// CHECK-NOT: kiln.where
// CHECK: kiln.attention %arg0, %arg1, %arg2 {causal = true, scale = 5.000000e-01 : f64}
// CHECK-NOT: kiln.where
func.func @causal_where(%q: tensor<2x4x4xf32>, %k: tensor<2x4x4xf32>, %v: tensor<2x4x4xf32>) -> tensor<2x4x4xf32> {
  %kt = kiln.transpose %k {perm = array<i64: 0, 2, 1>} : (tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %s = kiln.matmul %q, %kt : (tensor<2x4x4xf32>, tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %c = kiln.constant dense<2.0> : tensor<f32>
  %d = kiln.div %s, %c : (tensor<2x4x4xf32>, tensor<f32>) -> tensor<2x4x4xf32>
  %future = kiln.constant dense<[[false, true, true, true], [false, false, true, true], [false, false, false, true], [false, false, false, false]]> : tensor<4x4xi1>
  %ninf = kiln.constant dense<0xFF800000> : tensor<f32>
  %w = kiln.where %future, %ninf, %d : (tensor<4x4xi1>, tensor<f32>, tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %p = kiln.softmax %w {axis = 2 : i64} : (tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %o = kiln.matmul %p, %v : (tensor<2x4x4xf32>, tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  return %o : tensor<2x4x4xf32>
}

// -----

// An additive constant triangle (the example transformer's form).
// CHECK-LABEL: func.func @causal_additive
// CHECK: kiln.attention %arg0, %arg1, %arg2 {causal = true, scale = 1.000000e+00 : f64}
// CHECK-NOT: kiln.add
func.func @causal_additive(%q: tensor<1x3x4xf32>, %k: tensor<1x3x4xf32>, %v: tensor<1x3x4xf32>) -> tensor<1x3x4xf32> {
  %kt = kiln.transpose %k {perm = array<i64: 0, 2, 1>} : (tensor<1x3x4xf32>) -> tensor<1x4x3xf32>
  %s = kiln.matmul %q, %kt : (tensor<1x3x4xf32>, tensor<1x4x3xf32>) -> tensor<1x3x3xf32>
  %m = kiln.constant dense<[[0.0, 0xFF800000, 0xFF800000], [0.0, 0.0, 0xFF800000], [0.0, 0.0, 0.0]]> : tensor<3x3xf32>
  %a = kiln.add %s, %m : (tensor<1x3x3xf32>, tensor<3x3xf32>) -> tensor<1x3x3xf32>
  %p = kiln.softmax %a {axis = 2 : i64} : (tensor<1x3x3xf32>) -> tensor<1x3x3xf32>
  %o = kiln.matmul %p, %v : (tensor<1x3x3xf32>, tensor<1x3x4xf32>) -> tensor<1x3x4xf32>
  return %o : tensor<1x3x4xf32>
}

// -----

// SDPA's is_causal export computes the additive mask at run time from
// constants: Where(Trilu(ones) == 0, -inf, 0). Evaluated at compile time, it
// is the causal triangle; the mask disappears.
// CHECK-LABEL: func.func @causal_trilu
// CHECK: kiln.attention %arg0, %arg1, %arg2 {causal = true, scale = 1.000000e+00 : f64}
// CHECK-NOT: kiln.add
func.func @causal_trilu(%q: tensor<1x3x4xf32>, %k: tensor<1x3x4xf32>, %v: tensor<1x3x4xf32>) -> tensor<1x3x4xf32> {
  %kt = kiln.transpose %k {perm = array<i64: 0, 2, 1>} : (tensor<1x3x4xf32>) -> tensor<1x4x3xf32>
  %s = kiln.matmul %q, %kt : (tensor<1x3x4xf32>, tensor<1x4x3xf32>) -> tensor<1x3x3xf32>
  %ones = kiln.constant dense<1.0> : tensor<3x3xf32>
  %diag = kiln.constant dense<0> : tensor<i64>
  %tri = kiln.trilu %ones, %diag {upper = false} : (tensor<3x3xf32>, tensor<i64>) -> tensor<3x3xf32>
  %zero = kiln.constant dense<0.0> : tensor<1xf32>
  %ninf = kiln.constant dense<0xFF800000> : tensor<1xf32>
  %future = kiln.equal %tri, %zero : (tensor<3x3xf32>, tensor<1xf32>) -> tensor<3x3xi1>
  %m = kiln.where %future, %ninf, %zero : (tensor<3x3xi1>, tensor<1xf32>, tensor<1xf32>) -> tensor<3x3xf32>
  %a = kiln.add %s, %m : (tensor<1x3x3xf32>, tensor<3x3xf32>) -> tensor<1x3x3xf32>
  %p = kiln.softmax %a {axis = 2 : i64} : (tensor<1x3x3xf32>) -> tensor<1x3x3xf32>
  %o = kiln.matmul %p, %v : (tensor<1x3x3xf32>, tensor<1x3x4xf32>) -> tensor<1x3x4xf32>
  return %o : tensor<1x3x4xf32>
}

// -----

// The same at 8192 tokens: 2^26 mask elements, too many to scan, so the
// function of (i, j) is checked on a 64 x 64 sample, as for symbolic sizes.
// CHECK-LABEL: func.func @causal_trilu_long
// CHECK: kiln.attention %arg0, %arg1, %arg2 {causal = true, scale = 1.000000e+00 : f64}
// CHECK-NOT: kiln.where
func.func @causal_trilu_long(%q: tensor<1x8192x4xf32>, %k: tensor<1x8192x4xf32>, %v: tensor<1x8192x4xf32>) -> tensor<1x8192x4xf32> {
  %kt = kiln.transpose %k {perm = array<i64: 0, 2, 1>} : (tensor<1x8192x4xf32>) -> tensor<1x4x8192xf32>
  %s = kiln.matmul %q, %kt : (tensor<1x8192x4xf32>, tensor<1x4x8192xf32>) -> tensor<1x8192x8192xf32>
  %ones = kiln.constant dense<true> : tensor<8192x8192xi1>
  %diag = kiln.constant dense<0> : tensor<i64>
  %keep = kiln.trilu %ones, %diag {upper = false} : (tensor<8192x8192xi1>, tensor<i64>) -> tensor<8192x8192xi1>
  %ninf = kiln.constant dense<0xFF800000> : tensor<f32>
  %m = kiln.where %keep, %s, %ninf : (tensor<8192x8192xi1>, tensor<1x8192x8192xf32>, tensor<f32>) -> tensor<1x8192x8192xf32>
  %p = kiln.softmax %m {axis = 2 : i64} : (tensor<1x8192x8192xf32>) -> tensor<1x8192x8192xf32>
  %o = kiln.matmul %p, %v : (tensor<1x8192x8192xf32>, tensor<1x8192x4xf32>) -> tensor<1x8192x4xf32>
  return %o : tensor<1x8192x4xf32>
}

// -----

// A sliding window of 100 keys (a band: Trilu lower, then upper at -100) at
// 8192 tokens is not causal, though it matches the triangle on the 64 x 64
// sample: diagonals that far out are not judged on a sample.
// CHECK-LABEL: func.func @sliding_window_long
// CHECK-NOT: causal = true
// CHECK: kiln.attention
// CHECK-NOT: causal = true
func.func @sliding_window_long(%q: tensor<1x8192x4xf32>, %k: tensor<1x8192x4xf32>, %v: tensor<1x8192x4xf32>) -> tensor<1x8192x4xf32> {
  %kt = kiln.transpose %k {perm = array<i64: 0, 2, 1>} : (tensor<1x8192x4xf32>) -> tensor<1x4x8192xf32>
  %s = kiln.matmul %q, %kt : (tensor<1x8192x4xf32>, tensor<1x4x8192xf32>) -> tensor<1x8192x8192xf32>
  %ones = kiln.constant dense<true> : tensor<8192x8192xi1>
  %diag = kiln.constant dense<0> : tensor<i64>
  %band = kiln.constant dense<-100> : tensor<i64>
  %lower = kiln.trilu %ones, %diag {upper = false} : (tensor<8192x8192xi1>, tensor<i64>) -> tensor<8192x8192xi1>
  %keep = kiln.trilu %lower, %band {upper = true} : (tensor<8192x8192xi1>, tensor<i64>) -> tensor<8192x8192xi1>
  %ninf = kiln.constant dense<0xFF800000> : tensor<f32>
  %m = kiln.where %keep, %s, %ninf : (tensor<8192x8192xi1>, tensor<1x8192x8192xf32>, tensor<f32>) -> tensor<1x8192x8192xf32>
  %p = kiln.softmax %m {axis = 2 : i64} : (tensor<1x8192x8192xf32>) -> tensor<1x8192x8192xf32>
  %o = kiln.matmul %p, %v : (tensor<1x8192x8192xf32>, tensor<1x8192x4xf32>) -> tensor<1x8192x4xf32>
  return %o : tensor<1x8192x4xf32>
}

// -----

// The same with diagonal 1 keeps one key too many: not causal, the mask
// stays (the attention still fuses, with the computed mask).
// CHECK-LABEL: func.func @trilu_not_causal
// CHECK: kiln.attention %arg0, %arg1, %arg2, %{{.+}} {scale = 1.000000e+00 : f64}
func.func @trilu_not_causal(%q: tensor<1x3x4xf32>, %k: tensor<1x3x4xf32>, %v: tensor<1x3x4xf32>) -> tensor<1x3x4xf32> {
  %kt = kiln.transpose %k {perm = array<i64: 0, 2, 1>} : (tensor<1x3x4xf32>) -> tensor<1x4x3xf32>
  %s = kiln.matmul %q, %kt : (tensor<1x3x4xf32>, tensor<1x4x3xf32>) -> tensor<1x3x3xf32>
  %ones = kiln.constant dense<1.0> : tensor<3x3xf32>
  %diag = kiln.constant dense<1> : tensor<i64>
  %tri = kiln.trilu %ones, %diag {upper = false} : (tensor<3x3xf32>, tensor<i64>) -> tensor<3x3xf32>
  %zero = kiln.constant dense<0.0> : tensor<1xf32>
  %ninf = kiln.constant dense<0xFF800000> : tensor<1xf32>
  %future = kiln.equal %tri, %zero : (tensor<3x3xf32>, tensor<1xf32>) -> tensor<3x3xi1>
  %m = kiln.where %future, %ninf, %zero : (tensor<3x3xi1>, tensor<1xf32>, tensor<1xf32>) -> tensor<3x3xf32>
  %a = kiln.add %s, %m : (tensor<1x3x3xf32>, tensor<3x3xf32>) -> tensor<1x3x3xf32>
  %p = kiln.softmax %a {axis = 2 : i64} : (tensor<1x3x3xf32>) -> tensor<1x3x3xf32>
  %o = kiln.matmul %p, %v : (tensor<1x3x3xf32>, tensor<1x3x4xf32>) -> tensor<1x3x4xf32>
  return %o : tensor<1x3x4xf32>
}

// -----

// scaled_dot_product_attention's export: q and k^T each times
// sqrt(1/sqrt(D)), computed from constants; a runtime boolean keep-mask.
// CHECK-LABEL: func.func @sdpa_prescaled_bool_mask
// CHECK-SAME: %[[M:[^:]+]]: tensor<1x1x8x8xi1>
// CHECK-DAG: %[[ZERO:.+]] = kiln.constant dense<0.000000e+00> : tensor<f32>
// CHECK-DAG: %[[FILL:.+]] = kiln.constant dense<0xFF800000> : tensor<f32>
// CHECK: %[[ADD:.+]] = kiln.where %[[M]], %[[ZERO]], %[[FILL]] : (tensor<1x1x8x8xi1>, tensor<f32>, tensor<f32>) -> tensor<1x1x8x8xf32>
// CHECK: kiln.attention %arg0, %arg1, %arg2, %[[ADD]] {scale = 2.500000e-01 : f64}
func.func @sdpa_prescaled_bool_mask(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %m: tensor<1x1x8x8xi1>) -> tensor<1x2x8x16xf32> {
  %d = kiln.constant dense<16.0> : tensor<1xf32>
  %one = kiln.constant dense<1.0> : tensor<1xf32>
  %sd = kiln.sqrt %d : (tensor<1xf32>) -> tensor<1xf32>
  %sc = kiln.div %one, %sd : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xf32>
  %r = kiln.sqrt %sc : (tensor<1xf32>) -> tensor<1xf32>
  %kt = kiln.transpose %k {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x2x8x16xf32>) -> tensor<1x2x16x8xf32>
  %qs = kiln.mul %q, %r : (tensor<1x2x8x16xf32>, tensor<1xf32>) -> tensor<1x2x8x16xf32>
  %ks = kiln.mul %kt, %r : (tensor<1x2x16x8xf32>, tensor<1xf32>) -> tensor<1x2x16x8xf32>
  %s = kiln.matmul %qs, %ks : (tensor<1x2x8x16xf32>, tensor<1x2x16x8xf32>) -> tensor<1x2x8x8xf32>
  %ninf = kiln.constant dense<0xFF800000> : tensor<1xf32>
  %w = kiln.where %m, %s, %ninf : (tensor<1x1x8x8xi1>, tensor<1x2x8x8xf32>, tensor<1xf32>) -> tensor<1x2x8x8xf32>
  %p = kiln.softmax %w {axis = 3 : i64} : (tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  %o = kiln.matmul %p, %v : (tensor<1x2x8x8xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}

// -----

// torch's `d ** 0.5` of a constant head size exports as Pow of two constants.
// CHECK-LABEL: func.func @pow_scale
// CHECK: kiln.attention %arg0, %arg1, %arg2 {scale = 1.250000e-01 : f64}
func.func @pow_scale(%q: tensor<1x2x8x64xf32>, %k: tensor<1x2x8x64xf32>, %v: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  %d = kiln.constant dense<64.0> : tensor<f32>
  %half = kiln.constant dense<0.5> : tensor<f32>
  %r = kiln.pow %d, %half : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %kt = kiln.transpose %k {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x2x8x64xf32>) -> tensor<1x2x64x8xf32>
  %s = kiln.matmul %q, %kt : (tensor<1x2x8x64xf32>, tensor<1x2x64x8xf32>) -> tensor<1x2x8x8xf32>
  %w = kiln.div %s, %r : (tensor<1x2x8x8xf32>, tensor<f32>) -> tensor<1x2x8x8xf32>
  %p = kiln.softmax %w {axis = 3 : i64} : (tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  %o = kiln.matmul %p, %v : (tensor<1x2x8x8xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}

// -----

// MultiheadAttention's bmm form: q pre-scaled, k^T by [0,2,1], a masked_fill
// with the lowest float on a runtime mask (true = masked out).
// CHECK-LABEL: func.func @bmm_masked_fill
// CHECK: %[[ADD:.+]] = kiln.where %arg3, %{{.+}}, %{{.+}} : (tensor<4x1x8xi1>, tensor<f32>, tensor<f32>) -> tensor<4x1x8xf32>
// CHECK: kiln.attention %arg0, %arg1, %arg2, %[[ADD]] {scale = 1.250000e-01 : f64}
func.func @bmm_masked_fill(%q: tensor<4x8x64xf32>, %k: tensor<4x8x64xf32>, %v: tensor<4x8x32xf32>, %m: tensor<4x1x8xi1>) -> tensor<4x8x32xf32> {
  %c = kiln.constant dense<0.125> : tensor<f32>
  %qs = kiln.mul %q, %c : (tensor<4x8x64xf32>, tensor<f32>) -> tensor<4x8x64xf32>
  %kt = kiln.transpose %k {perm = array<i64: 0, 2, 1>} : (tensor<4x8x64xf32>) -> tensor<4x64x8xf32>
  %s = kiln.matmul %qs, %kt : (tensor<4x8x64xf32>, tensor<4x64x8xf32>) -> tensor<4x8x8xf32>
  %low = kiln.constant dense<-3.40282347E+38> : tensor<f32>
  %w = kiln.where %m, %low, %s : (tensor<4x1x8xi1>, tensor<f32>, tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
  %p = kiln.softmax %w {axis = 2 : i64} : (tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
  %o = kiln.matmul %p, %v : (tensor<4x8x8xf32>, tensor<4x8x32xf32>) -> tensor<4x8x32xf32>
  return %o : tensor<4x8x32xf32>
}
