// RUN: kiln-opt %s -split-input-file -verify-diagnostics

// channels_last is 2-D only.
func.func @f(%x: tensor<1x8x8x8x3xf32>, %w: tensor<3x3x3x3x4xf32>) {
  // expected-error @+2 {{channels_last needs a rank-4 (NHWC) input, got rank 5}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.conv %x, %w {channels_last, dilations = array<i64: 1, 1, 1>, pads = array<i64: 0, 0, 0, 0, 0, 0>, strides = array<i64: 1, 1, 1>} : (tensor<1x8x8x8x3xf32>, tensor<3x3x3x3x4xf32>) -> tensor<1x6x6x6x4xf32>
  return
}

// -----

// An NHWC conv takes an HWCF weight: an FCHW one does not match the channels.
func.func @f(%x: tensor<1x8x8x4xf32>, %w: tensor<8x4x3x3xf32>) {
  // expected-error @+2 {{input channels 4, weight [8, 4, 3, 3] and group 1 do not match}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.conv %x, %w {channels_last, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x8x8x4xf32>, tensor<8x4x3x3xf32>) -> tensor<1x6x6x8xf32>
  return
}

// -----

// The result is NHWC: an NCHW result type is rejected.
func.func @f(%x: tensor<1x8x8x3xf32>, %w: tensor<3x3x3x4xf32>) {
  // expected-error @+2 {{'kiln.conv' op inferred type(s) 'tensor<1x6x6x4xf32>' are incompatible with return type(s) of operation 'tensor<1x4x6x6xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.conv %x, %w {channels_last, dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x8x8x3xf32>, tensor<3x3x3x4xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

// Pools too.
func.func @f(%x: tensor<1x3x8xf32>) {
  // expected-error @+2 {{channels_last needs a rank-4 (NHWC) input, got rank 3}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.max_pool %x {channels_last, kernel_shape = array<i64: 2>, strides = array<i64: 2>, pads = array<i64: 0, 0>, dilations = array<i64: 1>} : (tensor<1x3x8xf32>) -> tensor<1x3x4xf32>
  return
}

// -----

// The pooled dims of an NHWC input are H and W: a window larger than W = 2.
func.func @f(%x: tensor<1x8x2x16xf32>) {
  // expected-error @+2 {{window larger than padded input}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.avg_pool %x {channels_last, kernel_shape = array<i64: 3, 3>, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x8x2x16xf32>) -> tensor<1x6x1x16xf32>
  return
}

// -----

// A convolution with input_zero_point multiplies 8-bit integers.
func.func @f(%x: tensor<1x8x6x6xf32>, %w: tensor<4x8x3x3xi8>) {
  // expected-error @+2 {{a convolution with input_zero_point takes 8-bit integer input and int8 weight, not 'f32' and 'i8'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.conv %x, %w {dilations = array<i64: 1, 1>, input_zero_point = 0 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x8x6x6xf32>, tensor<4x8x3x3xi8>) -> tensor<1x4x4x4xf32>
  return
}

// -----

// ... without a bias (the scales come after the integer sums).
func.func @f(%x: tensor<1x8x6x6xui8>, %w: tensor<4x8x3x3xi8>, %b: tensor<4xf32>) {
  // expected-error @+2 {{a convolution with input_zero_point is 2-D, of group 1, without bias}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.conv %x, %w, %b {dilations = array<i64: 1, 1>, input_zero_point = 0 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x8x6x6xui8>, tensor<4x8x3x3xi8>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
  return
}
