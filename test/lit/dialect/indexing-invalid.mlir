// RUN: kiln-opt %s -split-input-file -verify-diagnostics

func.func @f(%d: tensor<2x3xf32>, %i: tensor<2xi64>) {
  // expected-error @+2 {{indices must have the rank of data}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.gather_elements %d, %i {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<2xf32>
  return
}

// -----

func.func @f(%d: tensor<2x3xf32>, %i: tensor<2x4xi64>) {
  // expected-error @+2 {{index tuples of length 4 do not fit data of rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.gather_nd %d, %i {batch_dims = 0 : i64} : (tensor<2x3xf32>, tensor<2x4xi64>) -> tensor<2xf32>
  return
}

// -----

func.func @f(%d: tensor<1x5xf32>, %i: tensor<1x2xi64>, %u: tensor<1x2xf32>) {
  // expected-error @+2 {{unknown reduction 'sum'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.scatter_elements %d, %i, %u {axis = 1 : i64, reduction = "sum"} : (tensor<1x5xf32>, tensor<1x2xi64>, tensor<1x2xf32>) -> tensor<1x5xf32>
  return
}

// -----

func.func @f(%d: tensor<8xf32>, %i: tensor<4x1xi64>, %u: tensor<3xf32>) {
  // expected-error @+2 {{updates do not match data and indices}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.scatter_nd %d, %i, %u : (tensor<8xf32>, tensor<4x1xi64>, tensor<3xf32>) -> tensor<8xf32>
  return
}

// -----

func.func @f(%x: tensor<3x4xf32>, %v: tensor<f32>) {
  // expected-error @+2 {{pads must be 4 non-negative values}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.pad %x, %v {pads = array<i64: 0, -1, 0, 1>} : (tensor<3x4xf32>, tensor<f32>) -> tensor<3x4xf32>
  return
}

// -----

func.func @f(%x: tensor<3x4xf32>, %v: tensor<f16>) {
  // expected-error @+2 {{value must be a rank-0 tensor of 'f32'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.pad %x, %v {pads = array<i64: 0, 1, 0, 1>} : (tensor<3x4xf32>, tensor<f16>) -> tensor<3x6xf32>
  return
}

// -----

func.func @f(%x: tensor<3x4xf32>) {
  // expected-error @+2 {{k = 5 out of range for a dim of 4}}
  // expected-error @+1 {{failed to infer returned types}}
  %0:2 = kiln.topk %x {axis = 1 : i64, k = 5 : i64, largest = true} : (tensor<3x4xf32>) -> (tensor<3x5xf32>, tensor<3x5xi64>)
  return
}

// -----

func.func @f(%x: tensor<4xf32>, %k: tensor<i64>) {
  // expected-error @+2 {{input must have rank >= 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.trilu %x, %k {upper = true} : (tensor<4xf32>, tensor<i64>) -> tensor<4xf32>
  return
}

// -----

func.func @f(%x: tensor<1x1x3x2xf32>, %g: tensor<1x2x4x3xf32>) {
  // expected-error @+2 {{grid must be [N, O1..Ok, k] for an input of k spatial dims}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.grid_sample %x, %g {mode = "linear", padding_mode = "zeros", align_corners = false} : (tensor<1x1x3x2xf32>, tensor<1x2x4x3xf32>) -> tensor<1x1x2x4xf32>
  return
}

// -----

func.func @f(%x: tensor<1x1x3x2xf32>, %g: tensor<1x2x4x2xf32>) {
  // expected-error @+2 {{unknown padding_mode 'wrap'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.grid_sample %x, %g {mode = "linear", padding_mode = "wrap", align_corners = false} : (tensor<1x1x3x2xf32>, tensor<1x2x4x2xf32>) -> tensor<1x1x2x4xf32>
  return
}

// -----

// A run-time extent resized to a static size needs its run-time scale.
func.func @f(%x: tensor<1x?xf32>) {
  // expected-error @+2 {{dim 1 resizes a run-time extent to a static size; its scale must come from params}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.resize %x {mode = "nearest", coordinate_transformation_mode = "asymmetric", nearest_mode = "floor", scales = array<f64: 1.0, 2.0>, sizes = array<i64: 1, 8>, roi = array<f64>, cubic_coeff_a = -7.5e-01 : f64, exclude_outside = false, extrapolation_value = 0.0 : f64} : (tensor<1x?xf32>) -> tensor<1x8xf32>
  return
}

// -----

// Interior pads fill with the constant only.
func.func @f(%x: tensor<3x4xf32>, %v: tensor<f32>) {
  // expected-error @+2 {{interior must be 2 non-negative values, in constant mode}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = kiln.pad %x, %v {mode = "edge", pads = array<i64: 0, 0, 0, 0>, interior = array<i64: 0, 1>} : (tensor<3x4xf32>, tensor<f32>) -> tensor<3x7xf32>
  return
}
