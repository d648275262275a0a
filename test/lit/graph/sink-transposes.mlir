// RUN: kiln-opt %s -split-input-file -kiln-sink-transposes | FileCheck %s
// RUN: env KILN_LOGS=layout kiln-opt --mlir-disable-threading %s -split-input-file -kiln-sink-transposes -o /dev/null 2>&1 | FileCheck %s --check-prefix=LOG

// A conversion back to NCHW, an activation, the conversion to NHWC of the
// next conv: the relu runs on NHWC data and both conversions vanish.
// CHECK-LABEL: func.func @cancel_through_relu
// CHECK-SAME: (%[[X:.+]]: tensor<1x8x8x16xf32>)
// CHECK-NEXT: %[[R:.+]] = kiln.relu %[[X]] : (tensor<1x8x8x16xf32>) -> tensor<1x8x8x16xf32>
// CHECK-NEXT: return %[[R]]
func.func @cancel_through_relu(%x: tensor<1x8x8x16xf32>) -> tensor<1x8x8x16xf32> {
  %0 = kiln.transpose %x {kiln.layout_conversion, perm = array<i64: 0, 3, 1, 2>} : (tensor<1x8x8x16xf32>) -> tensor<1x16x8x8xf32>
  %1 = kiln.relu %0 : (tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32>
  %2 = kiln.transpose %1 {kiln.layout_conversion, perm = array<i64: 0, 2, 3, 1>} : (tensor<1x16x8x8xf32>) -> tensor<1x8x8x16xf32>
  return %2 : tensor<1x8x8x16xf32>
}

// -----

// A residual add of two converted values and a per-channel bias constant: the
// add runs on NHWC data, the [16, 1, 1] constant is reshaped to rank 4 (the
// reshape folds) and transposed the inverse way (kiln-fold-weights folds
// that); one conversion
// is left at the output.
// CHECK-LABEL: func.func @residual_add
// CHECK-SAME: (%[[A:.+]]: tensor<1x8x8x16xf32>, %[[B:.+]]: tensor<1x8x8x16xf32>)
// CHECK: %[[C:.+]] = kiln.constant dense<1.000000e+00> : tensor<1x16x1x1xf32>
// CHECK: %[[S:.+]] = kiln.add %[[A]], %[[B]] : (tensor<1x8x8x16xf32>, tensor<1x8x8x16xf32>) -> tensor<1x8x8x16xf32>
// CHECK: %[[CT:.+]] = kiln.transpose %[[C]] {perm = array<i64: 0, 2, 3, 1>} : (tensor<1x16x1x1xf32>) -> tensor<1x1x1x16xf32>
// CHECK: %[[M:.+]] = kiln.mul %[[S]], %[[CT]] : (tensor<1x8x8x16xf32>, tensor<1x1x1x16xf32>) -> tensor<1x8x8x16xf32>
// CHECK: %[[OUT:.+]] = kiln.transpose %[[M]] {kiln.layout_conversion, perm = array<i64: 0, 3, 1, 2>}
// CHECK: return %[[OUT]]
// LOG: [kiln:layout] conversion left at 'mul': tensor<1x8x8x16xf32> -> tensor<1x16x8x8xf32>
func.func @residual_add(%a: tensor<1x8x8x16xf32>, %b: tensor<1x8x8x16xf32>) -> tensor<1x16x8x8xf32> {
  %0 = kiln.transpose %a {kiln.layout_conversion, perm = array<i64: 0, 3, 1, 2>} : (tensor<1x8x8x16xf32>) -> tensor<1x16x8x8xf32>
  %1 = kiln.transpose %b {kiln.layout_conversion, perm = array<i64: 0, 3, 1, 2>} : (tensor<1x8x8x16xf32>) -> tensor<1x16x8x8xf32>
  %2 = kiln.add %0, %1 : (tensor<1x16x8x8xf32>, tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32>
  %c = kiln.constant dense<1.0> : tensor<16x1x1xf32>
  %3 = kiln.mul %2, %c : (tensor<1x16x8x8xf32>, tensor<16x1x1xf32>) -> tensor<1x16x8x8xf32> loc(#mul)
  return %3 : tensor<1x16x8x8xf32>
}
#mul = loc(fused<"Mul">["mul"])

// -----

// Concat along channels (axis 1 of NCHW) becomes a concat along axis 3.
// CHECK-LABEL: func.func @concat_axis
// CHECK: %[[C:.+]] = kiln.concat %{{.+}}, %{{.+}} {axis = 3 : i64} : (tensor<1x4x4x8xf32>, tensor<1x4x4x24xf32>) -> tensor<1x4x4x32xf32>
// CHECK: kiln.transpose %[[C]] {kiln.layout_conversion, perm = array<i64: 0, 3, 1, 2>} : (tensor<1x4x4x32xf32>) -> tensor<1x32x4x4xf32>
func.func @concat_axis(%a: tensor<1x4x4x8xf32>, %b: tensor<1x4x4x24xf32>) -> tensor<1x32x4x4xf32> {
  %0 = kiln.transpose %a {kiln.layout_conversion, perm = array<i64: 0, 3, 1, 2>} : (tensor<1x4x4x8xf32>) -> tensor<1x8x4x4xf32>
  %1 = kiln.transpose %b {kiln.layout_conversion, perm = array<i64: 0, 3, 1, 2>} : (tensor<1x4x4x24xf32>) -> tensor<1x24x4x4xf32>
  %2 = kiln.concat %0, %1 {axis = 1 : i64} : (tensor<1x8x4x4xf32>, tensor<1x24x4x4xf32>) -> tensor<1x32x4x4xf32>
  return %2 : tensor<1x32x4x4xf32>
}

// -----

// An NCHW max pool reading a conversion back to NCHW becomes an NHWC pool;
// the global average pool (reduce_mean over H, W) reduces axes 1, 2; the one
// conversion left is on the pooled [1, 1, 1, C] value, before the flatten.
// CHECK-LABEL: func.func @pool_and_global_pool
// CHECK: %[[P:.+]] = kiln.max_pool %{{.+}} {channels_last, {{.*}}} : (tensor<1x8x8x16xf32>) -> tensor<1x4x4x16xf32>
// CHECK: %[[M:.+]] = kiln.reduce_mean %[[P]] {axes = array<i64: 1, 2>} : (tensor<1x4x4x16xf32>) -> tensor<1x1x1x16xf32>
// CHECK: %[[T:.+]] = kiln.transpose %[[M]] {kiln.layout_conversion, perm = array<i64: 0, 3, 1, 2>} : (tensor<1x1x1x16xf32>) -> tensor<1x16x1x1xf32>
// CHECK: kiln.reshape %[[T]]
func.func @pool_and_global_pool(%x: tensor<1x8x8x16xf32>) -> tensor<1x16xf32> {
  %0 = kiln.transpose %x {kiln.layout_conversion, perm = array<i64: 0, 3, 1, 2>} : (tensor<1x8x8x16xf32>) -> tensor<1x16x8x8xf32>
  %1 = kiln.max_pool %0 {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x16x8x8xf32>) -> tensor<1x16x4x4xf32>
  %2 = kiln.reduce_mean %1 {axes = array<i64: 2, 3>, keepdims = true} : (tensor<1x16x4x4xf32>) -> tensor<1x16x1x1xf32>
  %3 = kiln.reshape %2 {shape = array<i64: 1, 16>} : (tensor<1x16x1x1xf32>) -> tensor<1x16xf32>
  return %3 : tensor<1x16xf32>
}

// -----

// Negative: the conversion is also returned, so moving it below the relu
// would duplicate it; nothing moves.
// CHECK-LABEL: func.func @read_elsewhere
// CHECK: %[[T:.+]] = kiln.transpose %{{.+}} {kiln.layout_conversion
// CHECK: kiln.relu %[[T]]
// LOG: [kiln:layout] conversion left at
func.func @read_elsewhere(%x: tensor<1x8x8x16xf32>) -> (tensor<1x16x8x8xf32>, tensor<1x16x8x8xf32>) {
  %0 = kiln.transpose %x {kiln.layout_conversion, perm = array<i64: 0, 3, 1, 2>} : (tensor<1x8x8x16xf32>) -> tensor<1x16x8x8xf32>
  %1 = kiln.relu %0 : (tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32>
  return %0, %1 : tensor<1x16x8x8xf32>, tensor<1x16x8x8xf32>
}

// -----

// Negative: an add of a converted value and a non-constant NCHW value cannot
// take the conversion; unmarked transposes (the model's own) never move.
// CHECK-LABEL: func.func @cannot_cancel
// CHECK: %[[T:.+]] = kiln.transpose %{{.+}} {kiln.layout_conversion, perm = array<i64: 0, 3, 1, 2>}
// CHECK: kiln.add %[[T]], %{{.+}} : (tensor<1x16x8x8xf32>, tensor<1x16x8x8xf32>)
// CHECK: %[[U:.+]] = kiln.transpose %{{.+}} {perm = array<i64: 0, 3, 1, 2>}
// CHECK: kiln.relu %[[U]]
func.func @cannot_cancel(%x: tensor<1x8x8x16xf32>, %y: tensor<1x16x8x8xf32>) -> (tensor<1x16x8x8xf32>, tensor<1x16x8x8xf32>) {
  %0 = kiln.transpose %x {kiln.layout_conversion, perm = array<i64: 0, 3, 1, 2>} : (tensor<1x8x8x16xf32>) -> tensor<1x16x8x8xf32>
  %1 = kiln.add %0, %y : (tensor<1x16x8x8xf32>, tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32>
  %2 = kiln.transpose %x {perm = array<i64: 0, 3, 1, 2>} : (tensor<1x8x8x16xf32>) -> tensor<1x16x8x8xf32>
  %3 = kiln.relu %2 : (tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32>
  return %1, %3 : tensor<1x16x8x8xf32>, tensor<1x16x8x8xf32>
}

// -----

// Two conversions that do not cancel compose into one.
// CHECK-LABEL: func.func @compose
// CHECK-NEXT: %[[T:.+]] = kiln.transpose %{{.+}} {kiln.layout_conversion, perm = array<i64: 0, 1, 3, 2>} : (tensor<1x2x3x4xf32>) -> tensor<1x2x4x3xf32>
// CHECK-NEXT: return %[[T]]
func.func @compose(%x: tensor<1x2x3x4xf32>) -> tensor<1x2x4x3xf32> {
  %0 = kiln.transpose %x {kiln.layout_conversion, perm = array<i64: 0, 3, 1, 2>} : (tensor<1x2x3x4xf32>) -> tensor<1x4x2x3xf32>
  %1 = kiln.transpose %0 {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x4x2x3xf32>) -> tensor<1x2x4x3xf32>
  return %1 : tensor<1x2x4x3xf32>
}

// -----

// Slice bounds follow their dims (a merged 1x1 conv's per-member slices).
// CHECK-LABEL: func.func @slice_bounds
// CHECK: %[[S:.+]] = kiln.slice %{{.+}} {ends = array<i64: 1, 4, 4, 16>, starts = array<i64: 0, 0, 0, 8>, steps = array<i64: 1, 1, 1, 1>} : (tensor<1x4x4x32xf32>) -> tensor<1x4x4x8xf32>
// CHECK: kiln.transpose %[[S]] {kiln.layout_conversion, perm = array<i64: 0, 3, 1, 2>} : (tensor<1x4x4x8xf32>) -> tensor<1x8x4x4xf32>
func.func @slice_bounds(%x: tensor<1x4x4x32xf32>) -> tensor<1x8x4x4xf32> {
  %0 = kiln.transpose %x {kiln.layout_conversion, perm = array<i64: 0, 3, 1, 2>} : (tensor<1x4x4x32xf32>) -> tensor<1x32x4x4xf32>
  %1 = kiln.slice %0 {starts = array<i64: 0, 8, 0, 0>, ends = array<i64: 1, 16, 4, 4>, steps = array<i64: 1, 1, 1, 1>} : (tensor<1x32x4x4xf32>) -> tensor<1x8x4x4xf32>
  return %1 : tensor<1x8x4x4xf32>
}

// -----

// Negative: a reduction that drops its dims (keepdims = false) keeps the
// conversion before it.
// CHECK-LABEL: func.func @reduce_drops_dims
// CHECK: %[[T:.+]] = kiln.transpose %{{.+}} {kiln.layout_conversion
// CHECK: kiln.reduce_mean %[[T]] {axes = array<i64: 2, 3>, keepdims = false}
func.func @reduce_drops_dims(%x: tensor<1x4x4x16xf32>) -> tensor<1x16xf32> {
  %0 = kiln.transpose %x {kiln.layout_conversion, perm = array<i64: 0, 3, 1, 2>} : (tensor<1x4x4x16xf32>) -> tensor<1x16x4x4xf32>
  %1 = kiln.reduce_mean %0 {axes = array<i64: 2, 3>, keepdims = false} : (tensor<1x16x4x4xf32>) -> tensor<1x16xf32>
  return %1 : tensor<1x16xf32>
}

// -----

// A residual add of a conversion back to NCHW and a block input that is
// already converted to NHWC for another reader: the add reads that
// conversion (moved up to dominate it) and both NCHW values go.
// CHECK-LABEL: func.func @reuse_existing
// CHECK-SAME: (%[[X:.+]]: tensor<1x16x8x8xf32>, %[[C:.+]]: tensor<1x8x8x16xf32>)
// CHECK: %[[T:.+]] = kiln.transpose %[[X]] {kiln.layout_conversion, perm = array<i64: 0, 2, 3, 1>}
// CHECK: %[[A:.+]] = kiln.add %[[C]], %[[T]] : (tensor<1x8x8x16xf32>, tensor<1x8x8x16xf32>) -> tensor<1x8x8x16xf32>
// CHECK: %[[B:.+]] = kiln.transpose %[[A]] {kiln.layout_conversion, perm = array<i64: 0, 3, 1, 2>}
// CHECK: return %[[B]], %[[T]]
func.func @reuse_existing(%x: tensor<1x16x8x8xf32>, %c: tensor<1x8x8x16xf32>) -> (tensor<1x16x8x8xf32>, tensor<1x8x8x16xf32>) {
  %0 = kiln.transpose %c {kiln.layout_conversion, perm = array<i64: 0, 3, 1, 2>} : (tensor<1x8x8x16xf32>) -> tensor<1x16x8x8xf32>
  %1 = kiln.add %0, %x : (tensor<1x16x8x8xf32>, tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32>
  %2 = kiln.transpose %x {kiln.layout_conversion, perm = array<i64: 0, 2, 3, 1>} : (tensor<1x16x8x8xf32>) -> tensor<1x8x8x16xf32>
  return %1, %2 : tensor<1x16x8x8xf32>, tensor<1x8x8x16xf32>
}

// -----

// QuantizeLinear's NaN check between two int8 convolutions, where(x == x,
// x, lo): the equal and the where read the conversion and each other; the
// equal moves first (its only other reader, the where, takes the
// conversion once the equal has), then the where, the clip and the cast,
// and the two conversions cancel.
// CHECK-LABEL: func.func @nan_check
// CHECK: %[[EQ:.+]] = kiln.equal %arg0, %arg0 : (tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xi1>
// CHECK: %[[W:.+]] = kiln.where %[[EQ]], %arg0, %{{.+}} : (tensor<1x4x4x8xi1>, tensor<1x4x4x8xf32>, tensor<1x1x1x1xf32>) -> tensor<1x4x4x8xf32>
// CHECK: %[[C:.+]] = kiln.clip %[[W]]
// CHECK: %[[Q:.+]] = kiln.cast %[[C]] {to = ui8} : (tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xui8>
// CHECK-NOT: layout_conversion
// CHECK: return %[[Q]]
func.func @nan_check(%x: tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xui8> {
  %t = kiln.transpose %x {kiln.layout_conversion, perm = array<i64: 0, 3, 1, 2>} : (tensor<1x4x4x8xf32>) -> tensor<1x8x4x4xf32>
  %eq = kiln.equal %t, %t : (tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xi1>
  %lo = kiln.constant dense<0.0> : tensor<f32>
  %w = kiln.where %eq, %t, %lo : (tensor<1x8x4x4xi1>, tensor<1x8x4x4xf32>, tensor<f32>) -> tensor<1x8x4x4xf32>
  %c = kiln.clip %w {max = 2.550000e+02 : f64, min = 0.000000e+00 : f64} : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  %q = kiln.cast %c {to = ui8} : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xui8>
  %back = kiln.transpose %q {kiln.layout_conversion, perm = array<i64: 0, 2, 3, 1>} : (tensor<1x8x4x4xui8>) -> tensor<1x4x4x8xui8>
  return %back : tensor<1x4x4x8xui8>
}
