// RUN: kiln-opt %s -split-input-file -verify-diagnostics

// Shapes that do not broadcast.
func.func @f(%a: tensor<2x3xf32>, %b: tensor<4xf32>) {
  // expected-error @+2 {{do not broadcast}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.add %a, %b : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  return
}

// -----

// Binary element types differ.
func.func @f(%a: tensor<3xf32>, %b: tensor<3xf16>) {
  // expected-error @+2 {{element types differ}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.mul %a, %b : (tensor<3xf32>, tensor<3xf16>) -> tensor<3xf32>
  return
}

// -----

// Compare result must be i1.
func.func @f(%a: tensor<3xf32>, %b: tensor<3xf32>) {
  // expected-error @+2 {{are incompatible with return type}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.less %a, %b : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return
}

// -----

// Compare operands must not broadcast badly.
func.func @f(%a: tensor<2x3xi32>, %b: tensor<2x2xi32>) {
  // expected-error @+2 {{do not broadcast}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.equal %a, %b : (tensor<2x3xi32>, tensor<2x2xi32>) -> tensor<2x3xi1>
  return
}

// -----

// Unary result type must match.
func.func @f(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{are incompatible with return type}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.relu %a : (tensor<2x3xf32>) -> tensor<2x4xf32>
  return
}

// -----

// Cast result must carry the `to` type.
func.func @f(%a: tensor<4xf32>) {
  // expected-error @+2 {{are incompatible with return type}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.cast %a {to = i32} : (tensor<4xf32>) -> tensor<4xi64>
  return
}

// -----

// Where condition must be i1.
func.func @f(%c: tensor<4xi8>, %x: tensor<4xf32>) {
  // expected-error @+2 {{condition must be a tensor of i1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.where %c, %x, %x : (tensor<4xi8>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

// Where shapes must broadcast.
func.func @f(%c: tensor<3xi1>, %x: tensor<4xf32>) {
  // expected-error @+2 {{do not broadcast}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.where %c, %x, %x : (tensor<3xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

// Softmax axis out of range.
func.func @f(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{axis 2 out of range for rank 2}}
  %0 = kiln.softmax %a {axis = 2 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// -----

// Log_softmax negative axis.
func.func @f(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{axis -1 out of range for rank 2}}
  %0 = kiln.log_softmax %a {axis = -1 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// -----

// Batch_norm needs rank >= 2.
func.func @f(%x: tensor<4xf32>, %p: tensor<4xf32>) {
  // expected-error @+2 {{input must have rank >= 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.batch_norm %x, %p, %p, %p, %p : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

// Batch_norm parameters are per channel.
func.func @f(%x: tensor<1x3x4x4xf32>, %p: tensor<3xf32>, %q: tensor<4xf32>) {
  // expected-error @+2 {{per-channel operands must be [3]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.batch_norm %x, %p, %p, %q, %p : (tensor<1x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<4xf32>, tensor<3xf32>) -> tensor<1x3x4x4xf32>
  return
}

// -----

// Layer_norm axis out of range.
func.func @f(%x: tensor<1x4x8xf32>, %g: tensor<8xf32>) {
  // expected-error @+2 {{axis 3 out of range for rank 3}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.layer_norm %x, %g {axis = 3 : i64} : (tensor<1x4x8xf32>, tensor<8xf32>) -> tensor<1x4x8xf32>
  return
}

// -----

// Layer_norm scale must broadcast to the normalized dims.
func.func @f(%x: tensor<1x4x8xf32>, %g: tensor<4x8xf32>) {
  // expected-error @+2 {{do not broadcast to [8]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.layer_norm %x, %g {axis = 2 : i64} : (tensor<1x4x8xf32>, tensor<4x8xf32>) -> tensor<1x4x8xf32>
  return
}

// -----

// Matmul operands need rank >= 2.
func.func @f(%a: tensor<4xf32>, %b: tensor<4x2xf32>) {
  // expected-error @+2 {{operands must have rank >= 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.matmul %a, %b : (tensor<4xf32>, tensor<4x2xf32>) -> tensor<2xf32>
  return
}

// -----

// Matmul contracted dims differ.
func.func @f(%a: tensor<3x4xf32>, %b: tensor<5x2xf32>) {
  // expected-error @+2 {{contracted dims differ}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.matmul %a, %b : (tensor<3x4xf32>, tensor<5x2xf32>) -> tensor<3x2xf32>
  return
}

// -----

// Matmul batch dims must broadcast.
func.func @f(%a: tensor<2x3x4xf32>, %b: tensor<3x4x2xf32>) {
  // expected-error @+2 {{batch dims do not broadcast}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.matmul %a, %b : (tensor<2x3x4xf32>, tensor<3x4x2xf32>) -> tensor<2x3x2xf32>
  return
}

// -----

// Conv group does not divide the channels.
func.func @f(%x: tensor<1x6x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+2 {{do not match}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.conv %x, %w {dilations = array<i64: 1, 1>, group = 3 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x6x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

// Conv weight rank differs from input rank.
func.func @f(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3xf32>) {
  // expected-error @+2 {{weight rank 3 differs from input rank 4}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.conv %x, %w {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

// Conv bias has one element per filter.
func.func @f(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<3xf32>) {
  // expected-error @+2 {{bias must be [4]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.conv %x, %w, %b {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

// Conv needs one pad pair per spatial dim.
func.func @f(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+2 {{expected 2 kernel dims, strides and dilations and 4 pads}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.conv %x, %w {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

// ceil_mode over a run-time extent: its last window would depend on it.
func.func @f(%x: tensor<1x3x?x8xf32>) {
  // expected-error @+2 {{ceil_mode over a run-time extent (dim 2)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.max_pool %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = true} : (tensor<1x3x?x8xf32>) -> tensor<1x3x?x4xf32>
  return
}

// -----

// Conv kernel larger than the padded input.
func.func @f(%x: tensor<1x3x2x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+2 {{window larger than padded input in dim 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.conv %x, %w {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x3x2x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x1x6xf32>
  return
}

// -----

// Max_pool stride must be positive.
func.func @f(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+2 {{window attributes must be positive}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.max_pool %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 0, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32>
  return
}

// -----

// Avg_pool pads must be non-negative.
func.func @f(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+2 {{window attributes must be positive}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.avg_pool %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, -1, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32>
  return
}

// -----

// Pooling needs a spatial dim.
func.func @f(%x: tensor<1x3xf32>) {
  // expected-error @+2 {{input must have rank >= 3}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.max_pool %x {kernel_shape = array<i64>, strides = array<i64>, pads = array<i64>, dilations = array<i64>} : (tensor<1x3xf32>) -> tensor<1x3xf32>
  return
}

// -----

// Ceil_mode changes the pooled size.
func.func @f(%x: tensor<1x1x5x5xf32>) {
  // expected-error @+2 {{are incompatible with return type}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.max_pool %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = true} : (tensor<1x1x5x5xf32>) -> tensor<1x1x2x2xf32>
  return
}

// -----

// Reduce axes must be sorted.
func.func @f(%x: tensor<2x3x4xf32>) {
  // expected-error @+2 {{axes must be sorted, unique and in [0, 3)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.reduce_sum %x {axes = array<i64: 2, 0>} : (tensor<2x3x4xf32>) -> tensor<1x3x1xf32>
  return
}

// -----

// Reduce axis out of range.
func.func @f(%x: tensor<2x3x4xf32>) {
  // expected-error @+2 {{axes must be sorted, unique and in [0, 3)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.reduce_max %x {axes = array<i64: 3>} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  return
}

// -----

// Reshape keeps the element count.
func.func @f(%x: tensor<2x3xf32>) {
  // expected-error @+2 {{cannot reshape [2, 3] (6 elements) to [4, 2]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.reshape %x {shape = array<i64: 4, 2>} : (tensor<2x3xf32>) -> tensor<4x2xf32>
  return
}

// -----

// Reshape shape is fully resolved.
func.func @f(%x: tensor<2x3xf32>) {
  // expected-error @+2 {{has a negative dim}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.reshape %x {shape = array<i64: -1, 6>} : (tensor<2x3xf32>) -> tensor<1x6xf32>
  return
}

// -----

// Transpose perm repeats a dim.
func.func @f(%x: tensor<2x3x4xf32>) {
  // expected-error @+2 {{is not a permutation of rank 3}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.transpose %x {perm = array<i64: 0, 2, 2>} : (tensor<2x3x4xf32>) -> tensor<2x4x4xf32>
  return
}

// -----

// Transpose perm too short.
func.func @f(%x: tensor<2x3x4xf32>) {
  // expected-error @+2 {{is not a permutation of rank 3}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.transpose %x {perm = array<i64: 1, 0>} : (tensor<2x3x4xf32>) -> tensor<3x2xf32>
  return
}

// -----

// Concat axis out of range.
func.func @f(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{axis 2 out of range for rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.concat %a, %a {axis = 2 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x6xf32>
  return
}

// -----

// Concat inputs differ off the axis.
func.func @f(%a: tensor<2x3xf32>, %b: tensor<3x3xf32>) {
  // expected-error @+2 {{inputs differ in dim 0}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.concat %a, %b {axis = 1 : i64} : (tensor<2x3xf32>, tensor<3x3xf32>) -> tensor<2x6xf32>
  return
}

// -----

// Concat inputs differ in element type.
func.func @f(%a: tensor<2x3xf32>, %b: tensor<2x3xf16>) {
  // expected-error @+2 {{inputs differ in rank or element type}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.concat %a, %b {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x3xf16>) -> tensor<2x6xf32>
  return
}

// -----

// Slice end past the dim.
func.func @f(%x: tensor<2x4xf32>) {
  // expected-error @+2 {{slice bounds not normalized in dim 1: start 0, end 5, step 1, size 4}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.slice %x {starts = array<i64: 0, 0>, ends = array<i64: 2, 5>, steps = array<i64: 1, 1>} : (tensor<2x4xf32>) -> tensor<2x5xf32>
  return
}

// -----

// Negative-step slice must start after its end.
func.func @f(%x: tensor<2x4xf32>) {
  // expected-error @+2 {{slice bounds not normalized in dim 0}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.slice %x {starts = array<i64: 0, 0>, ends = array<i64: 1, 4>, steps = array<i64: -1, 1>} : (tensor<2x4xf32>) -> tensor<0x4xf32>
  return
}

// -----

// Slice step zero.
func.func @f(%x: tensor<2x4xf32>) {
  // expected-error @+2 {{slice bounds not normalized in dim 1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.slice %x {starts = array<i64: 0, 0>, ends = array<i64: 2, 4>, steps = array<i64: 1, 0>} : (tensor<2x4xf32>) -> tensor<2x4xf32>
  return
}

// -----

// Slice needs one bound per dim.
func.func @f(%x: tensor<2x4xf32>) {
  // expected-error @+2 {{needs one start, end and step per dim}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.slice %x {starts = array<i64: 0>, ends = array<i64: 2>, steps = array<i64: 1>} : (tensor<2x4xf32>) -> tensor<2x4xf32>
  return
}

// -----

// Gather axis out of range.
func.func @f(%d: tensor<4x3xf32>, %i: tensor<2xi64>) {
  // expected-error @+2 {{axis 2 out of range for rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.gather %d, %i {axis = 2 : i64} : (tensor<4x3xf32>, tensor<2xi64>) -> tensor<4x3xf32>
  return
}

// -----

// Gather indices must be integers.
func.func @f(%d: tensor<4x3xf32>, %i: tensor<2xf32>) {
  // expected-error @+2 {{indices must be integers}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.gather %d, %i {axis = 0 : i64} : (tensor<4x3xf32>, tensor<2xf32>) -> tensor<2x3xf32>
  return
}

// -----

// Expand target must be a broadcast of the input.
func.func @f(%x: tensor<2x3xf32>) {
  // expected-error @+2 {{cannot expand [2, 3] to [4, 3]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.expand %x {shape = array<i64: 4, 3>} : (tensor<2x3xf32>) -> tensor<4x3xf32>
  return
}

// -----

func.func @quantized_matmul_float(%x: tensor<4x8xf32>, %w: tensor<8x2xi8>) -> tensor<4x2xf32> {
  // expected-error @+2 {{operands must be 8-bit integers, the rhs signed}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = kiln.quantized_matmul %x, %w {lhs_zero_point = 0 : i64} : (tensor<4x8xf32>, tensor<8x2xi8>) -> tensor<4x2xf32>
  return %y : tensor<4x2xf32>
}

// -----

func.func @quantized_matmul_k(%x: tensor<4x8xui8>, %w: tensor<6x2xi8>) -> tensor<4x2xf32> {
  // expected-error @+2 {{contracted dims differ: [4, 8] @ [6, 2]}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = kiln.quantized_matmul %x, %w {lhs_zero_point = 0 : i64} : (tensor<4x8xui8>, tensor<6x2xi8>) -> tensor<4x2xf32>
  return %y : tensor<4x2xf32>
}

// -----

func.func @quantized_matmul_zero_point(%x: tensor<4x8xui8>, %w: tensor<8x2xi8>) -> tensor<4x2xf32> {
  // expected-error @+2 {{lhs_zero_point 300 is outside the lhs element type}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = kiln.quantized_matmul %x, %w {lhs_zero_point = 300 : i64} : (tensor<4x8xui8>, tensor<8x2xi8>) -> tensor<4x2xf32>
  return %y : tensor<4x2xf32>
}

// -----

func.func @slice_step_zero(%x: tensor<3x?xf32>, %b: tensor<2xi64>) -> tensor<3x?xf32> {
  // expected-error @+2 {{steps must not be 0}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = kiln.dynamic_slice %x, %b, %b {static_shape = array<i64: 3, -1>, steps = array<i64: 1, 0>} : (tensor<3x?xf32>, tensor<2xi64>, tensor<2xi64>) -> tensor<3x?xf32>
  return %y : tensor<3x?xf32>
}

// -----

func.func @slice_step_int64_min(%x: tensor<3x?xf32>, %b: tensor<2xi64>) -> tensor<3x?xf32> {
  // expected-error @+2 {{a step of INT64_MIN cannot be negated}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = kiln.dynamic_slice %x, %b, %b {static_shape = array<i64: 3, -1>, steps = array<i64: 1, -9223372036854775808>} : (tensor<3x?xf32>, tensor<2xi64>, tensor<2xi64>) -> tensor<3x?xf32>
  return %y : tensor<3x?xf32>
}
