// RUN: kiln-opt %s -split-input-file -verify-diagnostics

// Verifier of kiln.attention (its type inference), next to its lowering.

func.func @head_dims(%q: tensor<2x8x16xf32>, %k: tensor<2x8x8xf32>, %v: tensor<2x8x16xf32>) -> tensor<2x8x16xf32> {
  // expected-error @+2 {{q and k head dims differ (16 vs 8)}}
  // expected-error @+1 {{failed to infer returned types}}
  %o = kiln.attention %q, %k, %v {scale = 1.0 : f64} : (tensor<2x8x16xf32>, tensor<2x8x8xf32>, tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  return %o : tensor<2x8x16xf32>
}

// -----

func.func @batch(%q: tensor<2x8x16xf32>, %k: tensor<1x8x16xf32>, %v: tensor<1x8x16xf32>) -> tensor<2x8x16xf32> {
  // expected-error @+2 {{batch dims differ}}
  // expected-error @+1 {{failed to infer returned types}}
  %o = kiln.attention %q, %k, %v {scale = 1.0 : f64} : (tensor<2x8x16xf32>, tensor<1x8x16xf32>, tensor<1x8x16xf32>) -> tensor<2x8x16xf32>
  return %o : tensor<2x8x16xf32>
}

// -----

func.func @mask_widens(%q: tensor<2x8x16xf32>, %k: tensor<2x4x16xf32>, %v: tensor<2x4x16xf32>, %m: tensor<3x1x4xf32>) -> tensor<2x8x16xf32> {
  // expected-error @+2 {{mask [3, 1, 4] does not broadcast to the scores [2, 8, 4]}}
  // expected-error @+1 {{failed to infer returned types}}
  %o = kiln.attention %q, %k, %v, %m {scale = 1.0 : f64} : (tensor<2x8x16xf32>, tensor<2x4x16xf32>, tensor<2x4x16xf32>, tensor<3x1x4xf32>) -> tensor<2x8x16xf32>
  return %o : tensor<2x8x16xf32>
}

// -----

func.func @bool_mask(%q: tensor<2x8x16xf32>, %k: tensor<2x4x16xf32>, %v: tensor<2x4x16xf32>, %m: tensor<8x4xi1>) -> tensor<2x8x16xf32> {
  // expected-error @+2 {{the mask is additive}}
  // expected-error @+1 {{failed to infer returned types}}
  %o = kiln.attention %q, %k, %v, %m {scale = 1.0 : f64} : (tensor<2x8x16xf32>, tensor<2x4x16xf32>, tensor<2x4x16xf32>, tensor<8x4xi1>) -> tensor<2x8x16xf32>
  return %o : tensor<2x8x16xf32>
}

// -----

func.func @result(%q: tensor<2x8x16xf32>, %k: tensor<2x4x16xf32>, %v: tensor<2x4x32xf32>) -> tensor<2x8x16xf32> {
  // expected-error @+2 {{'kiln.attention' op inferred type(s) 'tensor<2x8x32xf32>' are incompatible with return type(s) of operation 'tensor<2x8x16xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %o = kiln.attention %q, %k, %v {scale = 1.0 : f64} : (tensor<2x8x16xf32>, tensor<2x4x16xf32>, tensor<2x4x32xf32>) -> tensor<2x8x16xf32>
  return %o : tensor<2x8x16xf32>
}
