// RUN: kiln-opt %s -kiln-lower-to-linalg -canonicalize -split-input-file | FileCheck %s

// channels_last: the input is padded with the zero point's byte (128 as the
// signless -128), the accumulator starts from -128 * (the sum of each
// filter's bytes: 3 * 3 * 8 * 2 = 144, so -18432), and the generic
// multiplies the raw bytes (input unsigned, filter signed) over
// (n, oh, ow, f, kh, kw, c), marked with its window for the CPU backend.
// CHECK-DAG: #[[IN:.+]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1 * 2 + d4, d2 * 2 + d5, d6)>
// CHECK-DAG: #[[W:.+]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d5, d6, d3)>
// CHECK-DAG: #[[OUT:.+]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @nhwc
// CHECK-DAG: %[[PADV:.+]] = arith.constant -128 : i8
// CHECK-DAG: %[[CORR:.+]] = arith.constant dense<-1.843200e+04> : tensor<4xf32>
// CHECK: %[[PAD:.+]] = tensor.pad %arg0 low[0, 1, 1, 0] high[0, 1, 1, 0]
// CHECK: tensor.yield %[[PADV]] : i8
// CHECK: %[[INIT:.+]] = linalg.broadcast ins(%[[CORR]] : tensor<4xf32>) outs(%{{.+}} : tensor<1x3x3x4xf32>) dimensions = [0, 1, 2]
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[W]], #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%[[PAD]], %{{.+}} : tensor<1x8x8x8xi8>, tensor<3x3x8x4xi8>) outs(%[[INIT]] : tensor<1x3x3x4xf32>) attrs = {kiln.int8_contraction = true, kiln.int8_conv = array<i64: 2, 2, 1, 1>}
// CHECK: arith.extui %{{.+}} : i8 to i32
// CHECK: arith.extsi %{{.+}} : i8 to i32
// CHECK: arith.muli
// CHECK: arith.sitofp
// CHECK: arith.addf
func.func @nhwc(%x: tensor<1x6x6x8xui8>) -> tensor<1x3x3x4xf32> {
  %w = kiln.constant dense<2> : tensor<3x3x8x4xi8>
  %y = kiln.conv %x, %w {channels_last, dilations = array<i64: 1, 1>, input_zero_point = 128 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x6x6x8xui8>, tensor<3x3x8x4xi8>) -> tensor<1x3x3x4xf32>
  return %y : tensor<1x3x3x4xf32>
}

// -----

// NCHW (layout=nchw): the same contraction over (n, f, oh, ow, c, kh, kw),
// left to the generic code (no window marker); no zero point, no correction.
// CHECK-DAG: #[[IN:.+]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d4, d2 + d5 * 2, d3 + d6 * 2)>
// CHECK-DAG: #[[W:.+]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d4, d5, d6)>
// CHECK-LABEL: func.func @nchw
// CHECK: linalg.broadcast ins(%{{.+}} : tensor<4xf32>) outs(%{{.+}} : tensor<1x4x2x2xf32>) dimensions = [0, 2, 3]
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[W]], #{{.+}}], {{.+}} ins(%arg0, %{{.+}} : tensor<1x8x6x6xi8>, tensor<4x8x3x3xi8>) {{.+}} attrs = {kiln.int8_contraction = true}
func.func @nchw(%x: tensor<1x8x6x6xui8>) -> tensor<1x4x2x2xf32> {
  %w = kiln.constant dense<1> : tensor<4x8x3x3xi8>
  %y = kiln.conv %x, %w {dilations = array<i64: 2, 2>, input_zero_point = 0 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x8x6x6xui8>, tensor<4x8x3x3xi8>) -> tensor<1x4x2x2xf32>
  return %y : tensor<1x4x2x2xf32>
}

// -----

// Three channels (an image model's first convolution): padded to a quad,
// the input with the zero point (7) by the spatial padding's tensor.pad,
// the filter with a zero byte per tap at compile time.
// CHECK-LABEL: func.func @rgb
// CHECK: %[[W:.+]] = arith.constant dense_resource<int8_filter> : tensor<3x3x4x8xi8>
// CHECK: tensor.pad %arg0 low[0, 1, 1, 0] high[0, 1, 1, 1]
// CHECK: linalg.generic {{.+}} ins(%{{.+}}, %[[W]] : tensor<1x10x10x4xi8>, tensor<3x3x4x8xi8>)
func.func @rgb(%x: tensor<1x8x8x3xui8>) -> tensor<1x8x8x8xf32> {
  %w = kiln.constant dense<1> : tensor<3x3x3x8xi8>
  %y = kiln.conv %x, %w {channels_last, dilations = array<i64: 1, 1>, input_zero_point = 7 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x8x8x3xui8>, tensor<3x3x3x8xi8>) -> tensor<1x8x8x8xf32>
  return %y : tensor<1x8x8x8xf32>
}
