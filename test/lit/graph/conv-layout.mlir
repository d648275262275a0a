// RUN: kiln-opt %s -split-input-file -kiln-conv-layout | FileCheck %s
// RUN: kiln-opt %s -split-input-file -kiln-conv-layout=layout=nhwc | FileCheck %s --check-prefix=NHWC
// RUN: kiln-opt %s -split-input-file -kiln-conv-layout=layout=nchw | FileCheck %s --check-prefix=NCHW
// RUN: env KILN_LOGS=layout kiln-opt --mlir-disable-threading %s -split-input-file -kiln-conv-layout -o /dev/null 2>&1 | FileCheck %s --check-prefix=LOG
// RUN: not kiln-opt %s -split-input-file -kiln-conv-layout=layout=nhcw -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: kiln-conv-layout: layout must be auto, nchw or nhwc, got 'nhcw'

// Three 128-channel 3x3 convs on 8x8 (56.6 MFLOP) against 81920 bytes of
// conversions at the chain's input and output: 691 FLOPs per byte >= 320,
// so the chain goes NHWC. Each conv and the pool gets channels_last between
// marked transposes; the weights a transpose to HWCF.
// CHECK-LABEL: func.func @chain
// CHECK-SAME: (%[[X:.+]]: tensor<1x128x8x8xf32>)
// CHECK: %[[T0:.+]] = kiln.transpose %[[X]] {kiln.layout_conversion, perm = array<i64: 0, 2, 3, 1>} : (tensor<1x128x8x8xf32>) -> tensor<1x8x8x128xf32>
// CHECK: %[[W0:.+]] = kiln.transpose %{{.+}} {perm = array<i64: 2, 3, 1, 0>} : (tensor<128x128x3x3xf32>) -> tensor<3x3x128x128xf32>
// CHECK: %[[C0:.+]] = kiln.conv %[[T0]], %[[W0]], %{{.+}} {channels_last, {{.*}}} : (tensor<1x8x8x128xf32>, tensor<3x3x128x128xf32>, tensor<128xf32>) -> tensor<1x8x8x128xf32>
// CHECK: %[[B0:.+]] = kiln.transpose %[[C0]] {kiln.layout_conversion, perm = array<i64: 0, 3, 1, 2>} : (tensor<1x8x8x128xf32>) -> tensor<1x128x8x8xf32>
// CHECK: kiln.relu %[[B0]] : (tensor<1x128x8x8xf32>)
// CHECK: kiln.conv {{.*}}channels_last
// CHECK: kiln.conv {{.*}}channels_last
// CHECK: kiln.transpose %{{.+}} {kiln.layout_conversion, perm = array<i64: 0, 2, 3, 1>} : (tensor<1x128x8x8xf32>) -> tensor<1x8x8x128xf32>
// CHECK: kiln.max_pool %{{.+}} {channels_last, {{.*}}} : (tensor<1x8x8x128xf32>) -> tensor<1x4x4x128xf32>
// CHECK: kiln.transpose %{{.+}} {kiln.layout_conversion, perm = array<i64: 0, 3, 1, 2>} : (tensor<1x4x4x128xf32>) -> tensor<1x128x4x4xf32>
// NCHW-LABEL: func.func @chain
// NCHW-NOT: kiln.transpose
// NCHW-NOT: channels_last
// LOG: [kiln:layout] chain of 3 conv(s) from 'c0' to 'pool': 56623104 conv FLOPs, 81920 bytes of conversions -> NHWC
// LOG-NEXT: [kiln:layout]   conv 'c0' -> NHWC
// LOG-NEXT: [kiln:layout]   conv 'c1' -> NHWC
// LOG-NEXT: [kiln:layout]   conv 'c2' -> NHWC
// LOG-NEXT: [kiln:layout]   max_pool 'pool' -> NHWC
func.func @chain(%x: tensor<1x128x8x8xf32>) -> tensor<1x128x4x4xf32> {
  %w = kiln.constant dense<0.01> : tensor<128x128x3x3xf32>
  %b = kiln.constant dense<0.5> : tensor<128xf32>
  %0 = kiln.conv %x, %w, %b {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x128x8x8xf32>, tensor<128x128x3x3xf32>, tensor<128xf32>) -> tensor<1x128x8x8xf32> loc(#c0)
  %1 = kiln.relu %0 : (tensor<1x128x8x8xf32>) -> tensor<1x128x8x8xf32>
  %2 = kiln.conv %1, %w, %b {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x128x8x8xf32>, tensor<128x128x3x3xf32>, tensor<128xf32>) -> tensor<1x128x8x8xf32> loc(#c1)
  %3 = kiln.add %2, %1 : (tensor<1x128x8x8xf32>, tensor<1x128x8x8xf32>) -> tensor<1x128x8x8xf32>
  %4 = kiln.conv %3, %w, %b {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x128x8x8xf32>, tensor<128x128x3x3xf32>, tensor<128xf32>) -> tensor<1x128x8x8xf32> loc(#c2)
  %5 = kiln.max_pool %4 {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x128x8x8xf32>) -> tensor<1x128x4x4xf32> loc(#pool)
  return %5 : tensor<1x128x4x4xf32>
}
#c0 = loc(fused<"Conv">["c0"])
#c1 = loc(fused<"Conv">["c1"])
#c2 = loc(fused<"Conv">["c2"])
#pool = loc(fused<"MaxPool">["pool"])

// -----

// One small conv: 7776 FLOPs against 2688 bytes of conversions; the model
// keeps it NCHW. layout=nhwc converts it anyway.
// CHECK-LABEL: func.func @tiny
// CHECK-NOT: kiln.transpose
// CHECK: kiln.conv %{{.+}}, %{{.+}} {dilations
// CHECK-NOT: channels_last
// NHWC-LABEL: func.func @tiny
// NHWC: kiln.transpose {{.*}}kiln.layout_conversion
// NHWC: kiln.conv {{.*}}channels_last{{.*}} -> tensor<1x6x6x4xf32>
// NHWC: kiln.transpose {{.*}}kiln.layout_conversion
// LOG: [kiln:layout] chain of 1 conv(s) from 'tiny' to 'tiny': 7776 conv FLOPs, 2688 bytes of conversions -> NCHW (FLOPs below flops-per-byte x bytes)
func.func @tiny(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  %0 = kiln.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> loc(#tiny)
  return %0 : tensor<1x4x6x6xf32>
}
#tiny = loc(fused<"Conv">["tiny"])

// -----

// f16 convolutions are not candidates, whatever their size; layout=nhwc
// converts them.
// CHECK-LABEL: func.func @f16_chain
// CHECK-NOT: kiln.transpose
// CHECK-NOT: channels_last
// CHECK: return
// NHWC-LABEL: func.func @f16_chain
// NHWC-COUNT-2: kiln.conv {{.*}}channels_last
func.func @f16_chain(%x: tensor<1x128x8x8xf16>, %w: tensor<128x128x3x3xf16>) -> tensor<1x128x8x8xf16> {
  %0 = kiln.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x128x8x8xf16>, tensor<128x128x3x3xf16>) -> tensor<1x128x8x8xf16>
  %1 = kiln.conv %0, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x128x8x8xf16>, tensor<128x128x3x3xf16>) -> tensor<1x128x8x8xf16>
  return %1 : tensor<1x128x8x8xf16>
}

// -----

// 1-D and 3-D convolutions keep NCHW in every mode.
// NHWC-LABEL: func.func @conv1d
// NHWC-NOT: kiln.transpose
// NHWC-NOT: channels_last
// NHWC: return
func.func @conv1d(%x: tensor<1x4x16xf32>, %w: tensor<8x4x3xf32>) -> tensor<1x8x14xf32> {
  %0 = kiln.conv %x, %w {dilations = array<i64: 1>, group = 1 : i64, pads = array<i64: 0, 0>, strides = array<i64: 1>} : (tensor<1x4x16xf32>, tensor<8x4x3xf32>) -> tensor<1x8x14xf32>
  return %0 : tensor<1x8x14xf32>
}

// -----

// A run-time batch, height or width goes NHWC too (im2col matmuls and the
// channel-vectorized depthwise loops); run-time channels keep NCHW.
// NHWC-LABEL: func.func @run_time_hw
// NHWC: kiln.conv {{.*}}channels_last{{.*}} -> tensor<1x?x?x8xf32>
// NHWC-LABEL: func.func @run_time_batch
// NHWC: kiln.conv {{.*}}channels_last{{.*}} -> tensor<?x6x6x8xf32>
// NHWC-LABEL: func.func @run_time_channels
// NHWC-NOT: channels_last
// NHWC: return
// In auto mode a chain with a convolution over a run-time image goes NHWC
// however small (a run-time extent counts as 1 in the figures).
// CHECK-LABEL: func.func @run_time_hw
// CHECK: kiln.conv {{.*}}channels_last{{.*}} -> tensor<1x?x?x8xf32>
// LOG: [kiln:layout] chain of 1 conv(s) from '{{.*}}' to '{{.*}}': 576 conv FLOPs, 96 bytes of conversions -> NHWC (convolutions over run-time images)
func.func @run_time_hw(%x: tensor<1x4x?x?xf32>, %w: tensor<8x4x3x3xf32>) -> tensor<1x8x?x?xf32> {
  %0 = kiln.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x?x?xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x?x?xf32>
  return %0 : tensor<1x8x?x?xf32>
}
func.func @run_time_batch(%x: tensor<?x4x8x8xf32>, %w: tensor<8x4x3x3xf32>) -> tensor<?x8x6x6xf32> {
  %0 = kiln.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<?x4x8x8xf32>, tensor<8x4x3x3xf32>) -> tensor<?x8x6x6xf32>
  return %0 : tensor<?x8x6x6xf32>
}
func.func @run_time_channels(%x: tensor<1x?x8x8xf32>, %w: tensor<8x?x3x3xf32>) -> tensor<1x8x6x6xf32> {
  %0 = kiln.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x?x8x8xf32>, tensor<8x?x3x3xf32>) -> tensor<1x8x6x6xf32>
  return %0 : tensor<1x8x6x6xf32>
}
