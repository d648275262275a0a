// RUN: kiln-opt %s -split-input-file -kiln-merge-contractions | FileCheck %s
// RUN: kiln-opt %s -split-input-file -kiln-merge-contractions=max-width=1 | FileCheck %s --check-prefix=NARROW
// RUN: env KILN_LOGS=fusion kiln-opt --mlir-disable-threading %s -split-input-file -kiln-merge-contractions -o /dev/null 2>&1 | FileCheck %s --check-prefix=LOG

// Q/K/V-style projections of one input: one matmul on [Wq Wk Wv], then
// slices. Row k of the merged weight is row k of Wq, Wk, Wv in turn.
// LOG: [kiln:fusion] merged 3 contractions on 'a graph input' into one: 'q', 'k', 'v'
// CHECK-LABEL: func.func @qkv
// CHECK: %[[W:.+]] = kiln.constant dense_resource<merged_weight> : tensor<2x5xf32>
// CHECK: %[[M:.+]] = kiln.matmul %arg0, %[[W]] : (tensor<3x2xf32>, tensor<2x5xf32>) -> tensor<3x5xf32>
// CHECK: %[[Q:.+]] = kiln.slice %[[M]] {ends = array<i64: 3, 2>, starts = array<i64: 0, 0>, steps = array<i64: 1, 1>}
// CHECK: %[[K:.+]] = kiln.slice %[[M]] {ends = array<i64: 3, 4>, starts = array<i64: 0, 2>, steps = array<i64: 1, 1>}
// CHECK: %[[V:.+]] = kiln.slice %[[M]] {ends = array<i64: 3, 5>, starts = array<i64: 0, 4>, steps = array<i64: 1, 1>}
// CHECK-NOT: kiln.matmul
// CHECK: return %[[Q]], %[[K]], %[[V]]
// Floats 1 2 | 5 6 | 9 / 3 4 | 7 8 | 10 in little-endian hex.
// CHECK: merged_weight: "0x400000000000803F000000400000A0400000C0400000104100004040000080400000E0400000004100002041"
// NARROW-LABEL: func.func @qkv
// NARROW-COUNT-3: kiln.matmul %arg0
func.func @qkv(%x: tensor<3x2xf32>) -> (tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x1xf32>) {
  %wq = kiln.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %wk = kiln.constant dense<[[5.0, 6.0], [7.0, 8.0]]> : tensor<2x2xf32>
  %wv = kiln.constant dense<[[9.0], [10.0]]> : tensor<2x1xf32>
  %q = kiln.matmul %x, %wq : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32> loc(fused<"MatMul">["q"])
  %k = kiln.matmul %x, %wk : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32> loc(fused<"MatMul">["k"])
  %v = kiln.matmul %x, %wv : (tensor<3x2xf32>, tensor<2x1xf32>) -> tensor<3x1xf32> loc(fused<"MatMul">["v"])
  return %q, %k, %v : tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x1xf32>
}

// -----

// Parallel 1x1 convolutions: filters stacked, the missing bias is zeros.
// CHECK-LABEL: func.func @inception
// CHECK-DAG: %[[W:.+]] = kiln.constant dense_resource<merged_weight> : tensor<3x2x1x1xf32>
// CHECK-DAG: %[[B:.+]] = kiln.constant dense_resource<merged_bias> : tensor<3xf32>
// CHECK: %[[C:.+]] = kiln.conv %arg0, %[[W]], %[[B]]
// CHECK-SAME: -> tensor<1x3x4x4xf32>
// CHECK: kiln.slice %[[C]] {ends = array<i64: 1, 1, 4, 4>, starts = array<i64: 0, 0, 0, 0>
// CHECK: kiln.slice %[[C]] {ends = array<i64: 1, 3, 4, 4>, starts = array<i64: 0, 1, 0, 0>
// CHECK-NOT: kiln.conv
// CHECK: merged_bias: "0x400000000000003F0000000000000000"
func.func @inception(%x: tensor<1x2x4x4xf32>) -> (tensor<1x1x4x4xf32>, tensor<1x2x4x4xf32>) {
  %w0 = kiln.constant dense<1.0> : tensor<1x2x1x1xf32>
  %b0 = kiln.constant dense<0.5> : tensor<1xf32>
  %w1 = kiln.constant dense<2.0> : tensor<2x2x1x1xf32>
  %a = kiln.conv %x, %w0, %b0 {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32>, tensor<1xf32>) -> tensor<1x1x4x4xf32>
  %b = kiln.conv %x, %w1 {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  return %a, %b : tensor<1x1x4x4xf32>, tensor<1x2x4x4xf32>
}

// -----

// Negative: different inputs, a non-constant weight, a 3x3 kernel, and
// convolutions with different strides are not merged.
// LOG: [kiln:fusion] not merging contraction 'b' with others on the same input: weight is not constant
// LOG: [kiln:fusion] not merging contraction 'p' with others on the same input: kernel is not 1x1
// LOG-NOT: merged
// CHECK-LABEL: func.func @negative
// CHECK-NOT: merged_weight
// CHECK-COUNT-2: kiln.matmul
// CHECK-COUNT-3: kiln.conv
// CHECK-NOT: kiln.slice
func.func @negative(%x: tensor<3x2xf32>, %y: tensor<3x2xf32>, %w: tensor<2x2xf32>, %i: tensor<1x2x4x4xf32>) -> (tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>, tensor<1x1x4x4xf32>, tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>) {
  %c = kiln.constant dense<1.0> : tensor<2x2xf32>
  %a = kiln.matmul %x, %c : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  %b = kiln.matmul %x, %w : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32> loc(fused<"MatMul">["b"])
  %d = kiln.matmul %y, %c : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  %w1 = kiln.constant dense<1.0> : tensor<1x2x1x1xf32>
  %w3 = kiln.constant dense<1.0> : tensor<1x2x3x3xf32>
  %p = kiln.conv %i, %w3 {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x2x4x4xf32>, tensor<1x2x3x3xf32>) -> tensor<1x1x4x4xf32> loc(fused<"Conv">["p"])
  %s = kiln.conv %i, %w1 {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32>) -> tensor<1x1x2x2xf32>
  %t = kiln.conv %i, %w1 {dilations = array<i64: 2, 2>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32>) -> tensor<1x1x2x2xf32>
  return %a, %b, %d, %p, %s, %t : tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>, tensor<1x1x4x4xf32>, tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>
}
