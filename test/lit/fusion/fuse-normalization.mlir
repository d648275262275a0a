// RUN: kiln-opt %s -kiln-fuse-normalization -split-input-file | FileCheck %s
// RUN: env KILN_LOGS=fusion kiln-opt --mlir-disable-threading %s -kiln-fuse-normalization -split-input-file -o /dev/null 2>&1 | FileCheck %s --check-prefix=LOG

// The opset-14 export of nn.LayerNorm(40): Pow by 2, Div, then the weight
// and the bias.
// CHECK-LABEL: func.func @layer_norm_affine
// CHECK-SAME: (%[[X:.+]]: tensor<4x40xf32>, %[[G:.+]]: tensor<40xf32>, %[[B:.+]]: tensor<40xf32>)
// CHECK-NOT: kiln.reduce_mean
// CHECK: %[[Y:.+]] = kiln.layer_norm %[[X]], %[[G]], %[[B]] {axis = 1 : i64, epsilon = 9.9999997473787516E-6 : f64}
// CHECK-NEXT: return %[[Y]]
// LOG: fused layer norm over axes from 1 (epsilon 1.000000e-05, weight, bias): 'mean', 'sub', 'pow', 'var', 'add_eps', 'sqrt', 'div', 'mul', 'add'
func.func @layer_norm_affine(%x: tensor<4x40xf32>, %g: tensor<40xf32>, %b: tensor<40xf32>) -> tensor<4x40xf32> {
  %two = kiln.constant dense<2.0> : tensor<f32>
  %eps = kiln.constant dense<1.0e-5> : tensor<f32>
  %m = kiln.reduce_mean %x {axes = array<i64: 1>} : (tensor<4x40xf32>) -> tensor<4x1xf32> loc("mean")
  %d = kiln.sub %x, %m : (tensor<4x40xf32>, tensor<4x1xf32>) -> tensor<4x40xf32> loc("sub")
  %p = kiln.pow %d, %two : (tensor<4x40xf32>, tensor<f32>) -> tensor<4x40xf32> loc("pow")
  %v = kiln.reduce_mean %p {axes = array<i64: 1>} : (tensor<4x40xf32>) -> tensor<4x1xf32> loc("var")
  %e = kiln.add %v, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32> loc("add_eps")
  %s = kiln.sqrt %e : (tensor<4x1xf32>) -> tensor<4x1xf32> loc("sqrt")
  %n = kiln.div %d, %s : (tensor<4x40xf32>, tensor<4x1xf32>) -> tensor<4x40xf32> loc("div")
  %w = kiln.mul %n, %g : (tensor<4x40xf32>, tensor<40xf32>) -> tensor<4x40xf32> loc("mul")
  %y = kiln.add %b, %w : (tensor<40xf32>, tensor<4x40xf32>) -> tensor<4x40xf32> loc("add")
  return %y : tensor<4x40xf32>
}

// -----

// d * d and a multiply by the reciprocal, over the last two dims, no
// affine: a weight of ones is made; the weight [2, 1, 8] also broadcasts
// over the outer dim, so it stays a separate multiply.
// CHECK-LABEL: func.func @layer_norm_reciprocal
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x8xf32>, %[[W:.+]]: tensor<2x1x8xf32>)
// CHECK: %[[ONES:.+]] = kiln.constant dense<1.000000e+00> : tensor<3x8xf32>
// CHECK: %[[LN:.+]] = kiln.layer_norm %[[X]], %[[ONES]] {axis = 1 : i64, epsilon = 0.0010000000474974513 : f64}
// CHECK: %[[Y:.+]] = kiln.mul %[[LN]], %[[W]]
// CHECK: return %[[Y]]
func.func @layer_norm_reciprocal(%x: tensor<2x3x8xf32>, %wt: tensor<2x1x8xf32>) -> tensor<2x3x8xf32> {
  %eps = kiln.constant dense<1.0e-3> : tensor<1xf32>
  %m = kiln.reduce_mean %x {axes = array<i64: 1, 2>} : (tensor<2x3x8xf32>) -> tensor<2x1x1xf32>
  %d = kiln.sub %x, %m : (tensor<2x3x8xf32>, tensor<2x1x1xf32>) -> tensor<2x3x8xf32>
  %p = kiln.mul %d, %d : (tensor<2x3x8xf32>, tensor<2x3x8xf32>) -> tensor<2x3x8xf32>
  %v = kiln.reduce_mean %p {axes = array<i64: 1, 2>} : (tensor<2x3x8xf32>) -> tensor<2x1x1xf32>
  %e = kiln.add %eps, %v : (tensor<1xf32>, tensor<2x1x1xf32>) -> tensor<2x1x1xf32>
  %s = kiln.sqrt %e : (tensor<2x1x1xf32>) -> tensor<2x1x1xf32>
  %r = kiln.reciprocal %s : (tensor<2x1x1xf32>) -> tensor<2x1x1xf32>
  %n = kiln.mul %r, %d : (tensor<2x1x1xf32>, tensor<2x3x8xf32>) -> tensor<2x3x8xf32>
  %y = kiln.mul %n, %wt : (tensor<2x3x8xf32>, tensor<2x1x8xf32>) -> tensor<2x3x8xf32>
  return %y : tensor<2x3x8xf32>
}

// -----

// Not a layer norm: the mean is over the first axis; the centered input has
// a third user.
// CHECK-LABEL: func.func @layer_norm_negative
// CHECK-NOT: kiln.layer_norm
// CHECK: return
// LOG: not fusing layer norm at 'first_axis': the mean is not over trailing axes with keepdims
// LOG: not fusing layer norm at 'shared': an intermediate result has other users
func.func @layer_norm_negative(%x: tensor<4x40xf32>) -> (tensor<4x40xf32>, tensor<4x40xf32>, tensor<4x40xf32>) {
  %two = kiln.constant dense<2.0> : tensor<f32>
  %eps = kiln.constant dense<1.0e-5> : tensor<f32>
  %m = kiln.reduce_mean %x {axes = array<i64: 0>} : (tensor<4x40xf32>) -> tensor<1x40xf32>
  %d = kiln.sub %x, %m : (tensor<4x40xf32>, tensor<1x40xf32>) -> tensor<4x40xf32>
  %p = kiln.pow %d, %two : (tensor<4x40xf32>, tensor<f32>) -> tensor<4x40xf32>
  %v = kiln.reduce_mean %p {axes = array<i64: 0>} : (tensor<4x40xf32>) -> tensor<1x40xf32>
  %e = kiln.add %v, %eps : (tensor<1x40xf32>, tensor<f32>) -> tensor<1x40xf32>
  %s = kiln.sqrt %e : (tensor<1x40xf32>) -> tensor<1x40xf32>
  %n = kiln.div %d, %s : (tensor<4x40xf32>, tensor<1x40xf32>) -> tensor<4x40xf32> loc("first_axis")
  %m2 = kiln.reduce_mean %x {axes = array<i64: 1>} : (tensor<4x40xf32>) -> tensor<4x1xf32>
  %d2 = kiln.sub %x, %m2 : (tensor<4x40xf32>, tensor<4x1xf32>) -> tensor<4x40xf32>
  %p2 = kiln.pow %d2, %two : (tensor<4x40xf32>, tensor<f32>) -> tensor<4x40xf32>
  %v2 = kiln.reduce_mean %p2 {axes = array<i64: 1>} : (tensor<4x40xf32>) -> tensor<4x1xf32>
  %e2 = kiln.add %v2, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %s2 = kiln.sqrt %e2 : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %n2 = kiln.div %d2, %s2 : (tensor<4x40xf32>, tensor<4x1xf32>) -> tensor<4x40xf32> loc("shared")
  return %n, %n2, %d2 : tensor<4x40xf32>, tensor<4x40xf32>, tensor<4x40xf32>
}

// -----

// Softmax with the max subtracted, and without it (made stable).
// CHECK-LABEL: func.func @softmax_forms
// CHECK-SAME: (%[[X:.+]]: tensor<2x5x7xf32>)
// CHECK-DAG: %[[A:.+]] = kiln.softmax %[[X]] {axis = 2 : i64}
// CHECK-DAG: %[[B:.+]] = kiln.softmax %[[X]] {axis = 1 : i64}
// CHECK-NOT: kiln.exp
// CHECK: return %[[A]], %[[B]]
// LOG: fused softmax over axis 2: 'max', 'sub', 'exp', 'sum', 'div'
// LOG: fused softmax over axis 1 (exp without the max: now computed stably): 'exp1', 'sum1', 'div1'
func.func @softmax_forms(%x: tensor<2x5x7xf32>) -> (tensor<2x5x7xf32>, tensor<2x5x7xf32>) {
  %mx = kiln.reduce_max %x {axes = array<i64: 2>} : (tensor<2x5x7xf32>) -> tensor<2x5x1xf32> loc("max")
  %s = kiln.sub %x, %mx : (tensor<2x5x7xf32>, tensor<2x5x1xf32>) -> tensor<2x5x7xf32> loc("sub")
  %e = kiln.exp %s : (tensor<2x5x7xf32>) -> tensor<2x5x7xf32> loc("exp")
  %sum = kiln.reduce_sum %e {axes = array<i64: 2>} : (tensor<2x5x7xf32>) -> tensor<2x5x1xf32> loc("sum")
  %y = kiln.div %e, %sum : (tensor<2x5x7xf32>, tensor<2x5x1xf32>) -> tensor<2x5x7xf32> loc("div")
  %e1 = kiln.exp %x : (tensor<2x5x7xf32>) -> tensor<2x5x7xf32> loc("exp1")
  %sum1 = kiln.reduce_sum %e1 {axes = array<i64: 1>} : (tensor<2x5x7xf32>) -> tensor<2x1x7xf32> loc("sum1")
  %y1 = kiln.div %e1, %sum1 : (tensor<2x5x7xf32>, tensor<2x1x7xf32>) -> tensor<2x5x7xf32> loc("div1")
  return %y, %y1 : tensor<2x5x7xf32>, tensor<2x5x7xf32>
}

// -----

// Not a softmax: the sum runs over two axes; the exponentials are also
// returned.
// CHECK-LABEL: func.func @softmax_negative
// CHECK-NOT: kiln.softmax
// CHECK: return
// LOG: not fusing softmax at 'two_axes': the sum is not over one axis with keepdims
// LOG: not fusing softmax at 'escapes': the exponentials have other users
func.func @softmax_negative(%x: tensor<2x5x7xf32>) -> (tensor<2x5x7xf32>, tensor<2x5x7xf32>, tensor<2x5x7xf32>) {
  %e = kiln.exp %x : (tensor<2x5x7xf32>) -> tensor<2x5x7xf32>
  %sum = kiln.reduce_sum %e {axes = array<i64: 1, 2>} : (tensor<2x5x7xf32>) -> tensor<2x1x1xf32>
  %y = kiln.div %e, %sum : (tensor<2x5x7xf32>, tensor<2x1x1xf32>) -> tensor<2x5x7xf32> loc("two_axes")
  %e1 = kiln.exp %x : (tensor<2x5x7xf32>) -> tensor<2x5x7xf32>
  %sum1 = kiln.reduce_sum %e1 {axes = array<i64: 2>} : (tensor<2x5x7xf32>) -> tensor<2x5x1xf32>
  %y1 = kiln.div %e1, %sum1 : (tensor<2x5x7xf32>, tensor<2x5x1xf32>) -> tensor<2x5x7xf32> loc("escapes")
  return %y, %y1, %e1 : tensor<2x5x7xf32>, tensor<2x5x7xf32>, tensor<2x5x7xf32>
}
