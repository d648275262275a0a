// RUN: kiln-opt %s -kiln-fold-batch-norm -split-input-file | FileCheck %s

// Per channel: s = scale / sqrt(var + eps); W' = W * s; b' = (b - mean) * s + bias.
// Channel 0: s = 2 / sqrt(3 + 1) = 1, W' = 1, b' = (0.5 - 1) * 1 + 0 = -0.5.
// Channel 1: s = 3 / sqrt(8 + 1) = 1, W' = 2, b' = (0.5 - 0) * 1 + 1 = 1.5.
// CHECK-LABEL: func.func @fold
// CHECK-NOT: kiln.batch_norm
// CHECK-DAG: %[[W:.+]] = kiln.constant dense_resource<folded_weight> : tensor<2x1x1x1xf32>
// CHECK-DAG: %[[B:.+]] = kiln.constant dense_resource<folded_bias> : tensor<2xf32>
// CHECK: %[[Y:.+]] = kiln.conv %arg0, %[[W]], %[[B]]
// CHECK: return %[[Y]]
// CHECK-DAG: folded_weight: "0x400000000000803F00000040"
// CHECK-DAG: folded_bias: "0x40000000000000BF0000C03F"
func.func @fold(%x: tensor<1x1x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %w = kiln.constant dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>
  %b = kiln.constant dense<0.5> : tensor<2xf32>
  %c = kiln.conv %x, %w, %b {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x1x4x4xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %scale = kiln.constant dense<[2.0, 3.0]> : tensor<2xf32>
  %bias = kiln.constant dense<[0.0, 1.0]> : tensor<2xf32>
  %mean = kiln.constant dense<[1.0, 0.0]> : tensor<2xf32>
  %var = kiln.constant dense<[3.0, 8.0]> : tensor<2xf32>
  %y = kiln.batch_norm %c, %scale, %bias, %mean, %var {epsilon = 1.0 : f64} : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  return %y : tensor<1x2x4x4xf32>
}

// -----

// A conv with another user keeps its weights; the batch norm becomes x * a + b
// with a = 1 / sqrt(1 + 1e-5) and b = 1 - a, shaped [C, 1, 1].
// CHECK-LABEL: func.func @shared_conv
// CHECK-NOT: kiln.batch_norm
// CHECK-DAG: %[[A:.+]] = kiln.constant dense_resource<bn_scale> : tensor<1x1x1xf32>
// CHECK-DAG: %[[B:.+]] = kiln.constant dense_resource<bn_shift> : tensor<1x1x1xf32>
// CHECK-DAG: %[[C:.+]] = kiln.conv %arg0
// CHECK: %[[M:.+]] = kiln.mul %[[C]], %[[A]] : (tensor<1x1x4x4xf32>, tensor<1x1x1xf32>) -> tensor<1x1x4x4xf32>
// CHECK: %[[Y:.+]] = kiln.add %[[M]], %[[B]] : (tensor<1x1x4x4xf32>, tensor<1x1x1xf32>) -> tensor<1x1x4x4xf32>
// CHECK: return %[[Y]], %[[C]]
// CHECK-DAG: bn_scale: "0x40000000ACFF7F3F"
// CHECK-DAG: bn_shift: "0x400000005AC5A736"
func.func @shared_conv(%x: tensor<1x1x4x4xf32>) -> (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) {
  %w = kiln.constant dense<1.0> : tensor<1x1x1x1xf32>
  %c = kiln.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x1x4x4xf32>, tensor<1x1x1x1xf32>) -> tensor<1x1x4x4xf32>
  %s = kiln.constant dense<1.0> : tensor<1xf32>
  %y = kiln.batch_norm %c, %s, %s, %s, %s {epsilon = 1.0e-05 : f64} : (tensor<1x1x4x4xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x1x4x4xf32>
  return %y, %c : tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>
}

// -----

// Statistics that are graph inputs, or f16: the batch norm stays.
// CHECK-LABEL: func.func @not_constant
// CHECK-COUNT-2: kiln.batch_norm
func.func @not_constant(%x: tensor<1x2x4x4xf32>, %m: tensor<2xf32>, %h: tensor<1x2x4x4xf16>, %hs: tensor<2xf16>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf16>) {
  %s = kiln.constant dense<1.0> : tensor<2xf32>
  %y = kiln.batch_norm %x, %s, %s, %m, %s : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %z = kiln.batch_norm %h, %hs, %hs, %hs, %hs : (tensor<1x2x4x4xf16>, tensor<2xf16>, tensor<2xf16>, tensor<2xf16>, tensor<2xf16>) -> tensor<1x2x4x4xf16>
  return %y, %z : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf16>
}
