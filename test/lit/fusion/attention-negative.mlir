// RUN: kiln-opt %s -kiln-fuse-attention -split-input-file | FileCheck %s

// Softmax over the queries, not the keys.
// CHECK-LABEL: func.func @softmax_other_axis
// CHECK-NOT: kiln.attention
// CHECK: kiln.softmax %{{.+}} {axis = 2 : i64}
func.func @softmax_other_axis(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  %kt = kiln.transpose %k {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x2x8x16xf32>) -> tensor<1x2x16x8xf32>
  %s = kiln.matmul %q, %kt : (tensor<1x2x8x16xf32>, tensor<1x2x16x8xf32>) -> tensor<1x2x8x8xf32>
  %p = kiln.softmax %s {axis = 2 : i64} : (tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  %o = kiln.matmul %p, %v : (tensor<1x2x8x8xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}

// -----

// The scale is a runtime input.
// CHECK-LABEL: func.func @runtime_scale
// CHECK-NOT: kiln.attention
// CHECK: kiln.div
func.func @runtime_scale(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %t: tensor<f32>) -> tensor<1x2x8x16xf32> {
  %kt = kiln.transpose %k {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x2x8x16xf32>) -> tensor<1x2x16x8xf32>
  %s = kiln.matmul %q, %kt : (tensor<1x2x8x16xf32>, tensor<1x2x16x8xf32>) -> tensor<1x2x8x8xf32>
  %d = kiln.div %s, %t : (tensor<1x2x8x8xf32>, tensor<f32>) -> tensor<1x2x8x8xf32>
  %p = kiln.softmax %d {axis = 3 : i64} : (tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  %o = kiln.matmul %p, %v : (tensor<1x2x8x8xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}

// -----

// A mask with a batch of 2 widens scores of batch 1 to [2, 2, 8, 8].
// CHECK-LABEL: func.func @mask_widens_scores
// CHECK-NOT: kiln.attention
// CHECK: kiln.softmax
func.func @mask_widens_scores(%q: tensor<1x2x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>, %m: tensor<2x1x8x8xf32>) -> tensor<2x2x8x16xf32> {
  %kt = kiln.transpose %k {perm = array<i64: 0, 1, 3, 2>} : (tensor<1x2x8x16xf32>) -> tensor<1x2x16x8xf32>
  %s = kiln.matmul %q, %kt : (tensor<1x2x8x16xf32>, tensor<1x2x16x8xf32>) -> tensor<1x2x8x8xf32>
  %a = kiln.add %s, %m : (tensor<1x2x8x8xf32>, tensor<2x1x8x8xf32>) -> tensor<2x2x8x8xf32>
  %p = kiln.softmax %a {axis = 3 : i64} : (tensor<2x2x8x8xf32>) -> tensor<2x2x8x8xf32>
  %o = kiln.matmul %p, %v : (tensor<2x2x8x8xf32>, tensor<1x2x8x16xf32>) -> tensor<2x2x8x16xf32>
  return %o : tensor<2x2x8x16xf32>
}

// -----

// The probabilities are also returned: fusing would recompute them.
// CHECK-LABEL: func.func @probs_escape
// CHECK-NOT: kiln.attention
func.func @probs_escape(%q: tensor<2x8x16xf32>, %k: tensor<2x8x16xf32>, %v: tensor<2x8x16xf32>) -> (tensor<2x8x16xf32>, tensor<2x8x8xf32>) {
  %kt = kiln.transpose %k {perm = array<i64: 0, 2, 1>} : (tensor<2x8x16xf32>) -> tensor<2x16x8xf32>
  %s = kiln.matmul %q, %kt : (tensor<2x8x16xf32>, tensor<2x16x8xf32>) -> tensor<2x8x8xf32>
  %p = kiln.softmax %s {axis = 2 : i64} : (tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %o = kiln.matmul %p, %v : (tensor<2x8x8xf32>, tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  return %o, %p : tensor<2x8x16xf32>, tensor<2x8x8xf32>
}

// -----

// A Where whose fill is a modest value is not a mask.
// CHECK-LABEL: func.func @where_not_mask
// CHECK-NOT: kiln.attention
func.func @where_not_mask(%q: tensor<2x8x16xf32>, %k: tensor<2x8x16xf32>, %v: tensor<2x8x16xf32>, %m: tensor<8x8xi1>) -> tensor<2x8x16xf32> {
  %kt = kiln.transpose %k {perm = array<i64: 0, 2, 1>} : (tensor<2x8x16xf32>) -> tensor<2x16x8xf32>
  %s = kiln.matmul %q, %kt : (tensor<2x8x16xf32>, tensor<2x16x8xf32>) -> tensor<2x8x8xf32>
  %f = kiln.constant dense<-5.0> : tensor<f32>
  %w = kiln.where %m, %s, %f : (tensor<8x8xi1>, tensor<2x8x8xf32>, tensor<f32>) -> tensor<2x8x8xf32>
  %p = kiln.softmax %w {axis = 2 : i64} : (tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %o = kiln.matmul %p, %v : (tensor<2x8x8xf32>, tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  return %o : tensor<2x8x16xf32>
}
