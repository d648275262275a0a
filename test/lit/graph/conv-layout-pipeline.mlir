// RUN: kiln-opt %s -kiln-conv-layout=layout=nhwc -kiln-sink-transposes -kiln-fold-weights | FileCheck %s
// RUN: env KILN_LOGS=layout kiln-opt --mlir-disable-threading %s -kiln-conv-layout=layout=nhwc -kiln-sink-transposes -kiln-fold-weights -o /dev/null 2>&1 | FileCheck %s --check-prefix=LOG

// A residual block as ResNet has them (conv, relu, conv, residual add, relu,
// max pool, global average pool, flatten) through the three layout passes:
// conversions at every conv and pool at first, then everything between the
// input and the pooled output runs NHWC. One conversion is left at the
// input, one on the pooled [1, 1, 1, C] value; the residual add reads the
// block input's existing NHWC conversion; the weights are HWCF constants
// (folded), the bias stays [C].
// CHECK-LABEL: func.func @block
// CHECK-SAME: (%[[X:.+]]: tensor<1x16x8x8xf32>)
// CHECK: kiln.constant dense_resource<{{.+}}> : tensor<3x3x16x16xf32>
// CHECK: kiln.constant dense_resource<{{.+}}> : tensor<3x3x16x16xf32>
// CHECK: %[[T:.+]] = kiln.transpose %[[X]] {kiln.layout_conversion, perm = array<i64: 0, 2, 3, 1>} : (tensor<1x16x8x8xf32>) -> tensor<1x8x8x16xf32>
// CHECK: %[[C0:.+]] = kiln.conv %[[T]], %{{.+}}, %{{.+}} {channels_last, {{.*}}} : (tensor<1x8x8x16xf32>, tensor<3x3x16x16xf32>, tensor<16xf32>) -> tensor<1x8x8x16xf32>
// CHECK: %[[R0:.+]] = kiln.relu %[[C0]] : (tensor<1x8x8x16xf32>)
// CHECK: %[[C1:.+]] = kiln.conv %[[R0]], %{{.+}}, %{{.+}} {channels_last, {{.*}}} : (tensor<1x8x8x16xf32>, tensor<3x3x16x16xf32>, tensor<16xf32>) -> tensor<1x8x8x16xf32>
// CHECK: %[[A:.+]] = kiln.add %[[C1]], %[[T]] : (tensor<1x8x8x16xf32>, tensor<1x8x8x16xf32>) -> tensor<1x8x8x16xf32>
// CHECK: %[[R1:.+]] = kiln.relu %[[A]] : (tensor<1x8x8x16xf32>)
// CHECK: %[[P:.+]] = kiln.max_pool %[[R1]] {channels_last, {{.*}}} : (tensor<1x8x8x16xf32>) -> tensor<1x4x4x16xf32>
// CHECK: %[[G:.+]] = kiln.reduce_mean %[[P]] {axes = array<i64: 1, 2>} : (tensor<1x4x4x16xf32>) -> tensor<1x1x1x16xf32>
// CHECK: %[[O:.+]] = kiln.transpose %[[G]] {kiln.layout_conversion, perm = array<i64: 0, 3, 1, 2>} : (tensor<1x1x1x16xf32>) -> tensor<1x16x1x1xf32>
// CHECK: kiln.reshape %[[O]] {shape = array<i64: 1, 16>}
// CHECK-NOT: kiln.transpose
// LOG-COUNT-2: [kiln:layout] conversion left at
// LOG-NOT: conversion left
func.func @block(%x: tensor<1x16x8x8xf32>) -> tensor<1x16xf32> {
  %w = kiln.constant dense<0.05> : tensor<16x16x3x3xf32>
  %b = kiln.constant dense<0.1> : tensor<16xf32>
  %0 = kiln.conv %x, %w, %b {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x16x8x8xf32>, tensor<16x16x3x3xf32>, tensor<16xf32>) -> tensor<1x16x8x8xf32>
  %1 = kiln.relu %0 : (tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32>
  %2 = kiln.conv %1, %w, %b {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x16x8x8xf32>, tensor<16x16x3x3xf32>, tensor<16xf32>) -> tensor<1x16x8x8xf32>
  %3 = kiln.add %2, %x : (tensor<1x16x8x8xf32>, tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32>
  %4 = kiln.relu %3 : (tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32>
  %5 = kiln.max_pool %4 {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x16x8x8xf32>) -> tensor<1x16x4x4xf32>
  %6 = kiln.reduce_mean %5 {axes = array<i64: 2, 3>, keepdims = true} : (tensor<1x16x4x4xf32>) -> tensor<1x16x1x1xf32>
  %7 = kiln.reshape %6 {shape = array<i64: 1, 16>} : (tensor<1x16x1x1xf32>) -> tensor<1x16xf32>
  return %7 : tensor<1x16xf32>
}
