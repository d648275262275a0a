// RUN: kiln-opt %s -split-input-file -verify-diagnostics

func.func @shape_not_1d(%x: tensor<2x3xf32>, %s: tensor<2x1xi64>) -> tensor<?x?xf32> {
  // expected-error @+2 {{shape must be a 1-D i64 tensor of static length, got 'tensor<2x1xi64>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = kiln.dynamic_reshape %x, %s : (tensor<2x3xf32>, tensor<2x1xi64>) -> tensor<?x?xf32>
  return %y : tensor<?x?xf32>
}

// -----

func.func @shape_i32(%x: tensor<2x3xf32>, %s: tensor<2xi32>) -> tensor<?x?xf32> {
  // expected-error @+2 {{shape must be a 1-D i64 tensor of static length}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = kiln.dynamic_reshape %x, %s : (tensor<2x3xf32>, tensor<2xi32>) -> tensor<?x?xf32>
  return %y : tensor<?x?xf32>
}

// -----

func.func @wrong_rank(%x: tensor<2x3xf32>, %s: tensor<3xi64>) -> tensor<?x?xf32> {
  // expected-error @+2 {{'kiln.dynamic_reshape' op inferred type(s) 'tensor<?x?x?xf32>' are incompatible with return type(s) of operation 'tensor<?x?xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = kiln.dynamic_reshape %x, %s : (tensor<2x3xf32>, tensor<3xi64>) -> tensor<?x?xf32>
  return %y : tensor<?x?xf32>
}

// -----

func.func @squeeze_too_many(%x: tensor<1x3xf32>, %a: tensor<3xi64>) -> tensor<?xf32> {
  // expected-error @+2 {{cannot squeeze 3 axes of a rank-2 tensor}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = kiln.dynamic_squeeze %x, %a : (tensor<1x3xf32>, tensor<3xi64>) -> tensor<?xf32>
  return %y : tensor<?xf32>
}

// -----

func.func @unsqueeze_axes_2d(%x: tensor<3xf32>, %a: tensor<1x1xi64>) -> tensor<?x?xf32> {
  // expected-error @+2 {{axes must be a 1-D i64 tensor of static length, got 'tensor<1x1xi64>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = kiln.dynamic_unsqueeze %x, %a : (tensor<3xf32>, tensor<1x1xi64>) -> tensor<?x?xf32>
  return %y : tensor<?x?xf32>
}

// -----

func.func @assert_not_0d(%ok: tensor<2xi1>) {
  // expected-error @+1 {{operand #0 must be 0D tensor of 1-bit signless integer values}}
  kiln.assert %ok, "never" : tensor<2xi1>
  return
}

// -----

func.func @expand_static_shape_rank(%t: tensor<i1>, %s: tensor<2xi64>) -> tensor<?x?xi1> {
  // expected-error @+2 {{static_shape has 1 entries for a rank-2 result}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = kiln.dynamic_expand %t, %s {static_shape = array<i64: -1>} : (tensor<i1>, tensor<2xi64>) -> tensor<?x?xi1>
  return %y : tensor<?x?xi1>
}

// -----

func.func @range_not_scalar(%a: tensor<2xi64>, %b: tensor<i64>) -> tensor<?xi64> {
  // expected-error @+2 {{start, limit and delta must be scalars of one type}}
  // expected-error @+1 {{failed to infer returned types}}
  %r = kiln.dynamic_range %a, %b, %b : (tensor<2xi64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  return %r : tensor<?xi64>
}

// -----

func.func @slice_run_time_dim(%x: tensor<?x8xf32>) -> tensor<2x8xf32> {
  // expected-error @+2 {{run-time dim 0 can only be sliced whole}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = kiln.slice %x {starts = array<i64: 0, 0>, ends = array<i64: 2, 8>, steps = array<i64: 1, 1>} : (tensor<?x8xf32>) -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

func.func @nms_boxes_not_4(%b: tensor<1x6x5xf32>, %s: tensor<1x1x6xf32>, %m: tensor<i64>, %t: tensor<f32>) -> tensor<?x3xi64> {
  // expected-error @+2 {{boxes must be [batch, boxes, 4] floats, got 'tensor<1x6x5xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %r = kiln.non_max_suppression %b, %s, %m, %t, %t {center_point_box = false, use_score_threshold = false} : (tensor<1x6x5xf32>, tensor<1x1x6xf32>, tensor<i64>, tensor<f32>, tensor<f32>) -> tensor<?x3xi64>
  return %r : tensor<?x3xi64>
}

// -----

func.func @nms_scores_mismatch(%b: tensor<1x6x4xf32>, %s: tensor<1x1x5xf32>, %m: tensor<i64>, %t: tensor<f32>) -> tensor<?x3xi64> {
  // expected-error @+2 {{scores must be [batch, classes, boxes] of 'tensor<1x6x4xf32>', got 'tensor<1x1x5xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %r = kiln.non_max_suppression %b, %s, %m, %t, %t {center_point_box = false, use_score_threshold = false} : (tensor<1x6x4xf32>, tensor<1x1x5xf32>, tensor<i64>, tensor<f32>, tensor<f32>) -> tensor<?x3xi64>
  return %r : tensor<?x3xi64>
}
