// RUN: kiln-opt %s -kiln-fuse-quantized-conv -split-input-file | FileCheck %s
// RUN: env KILN_LOGS=+fusion kiln-opt %s -kiln-fuse-quantized-conv -split-input-file --mlir-disable-threading -o /dev/null 2>&1 | FileCheck %s --check-prefix=LOG

// The QDQ form of an int8 convolution: uint8 activations (zero point 128,
// scale 0.5), constant int8 weights with zero point 0 and a scale per
// filter, an f32 bias. It becomes the integer convolution of the bytes
// times 0.5 * w_scale per filter, plus the bias as a column.
// CHECK-LABEL: func.func @qdq
// CHECK: %[[P:.+]] = kiln.conv %arg0, %{{.+}} {dilations = array<i64: 1, 1>, input_zero_point = 128 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x8x6x6xui8>, tensor<4x8x3x3xi8>) -> tensor<1x4x6x6xf32>
// CHECK: %[[S:.+]] = kiln.constant dense<{{\[}}{{\[}}[1.250000e-01]], {{\[}}[2.500000e-01]], {{\[}}[1.250000e-01]], {{\[}}[2.500000e-01]]]> : tensor<4x1x1xf32>
// CHECK: %[[M:.+]] = kiln.mul %[[P]], %[[S]] : (tensor<1x4x6x6xf32>, tensor<4x1x1xf32>) -> tensor<1x4x6x6xf32>
// CHECK: %[[B:.+]] = kiln.reshape %arg1 {shape = array<i64: 4, 1, 1>} : (tensor<4xf32>) -> tensor<4x1x1xf32>
// CHECK: %[[Y:.+]] = kiln.add %[[M]], %[[B]] : (tensor<1x4x6x6xf32>, tensor<4x1x1xf32>) -> tensor<1x4x6x6xf32>
// CHECK: return %[[Y]]
// LOG: fused int8 conv at 'qdq_conv' (uint8 x int8, VNNI)
func.func @qdq(%xq: tensor<1x8x6x6xui8>, %b: tensor<4xf32>) -> tensor<1x4x6x6xf32> {
  %xf = kiln.cast %xq {to = f32} : (tensor<1x8x6x6xui8>) -> tensor<1x8x6x6xf32>
  %xz = kiln.constant dense<128.0> : tensor<f32>
  %xc = kiln.sub %xf, %xz : (tensor<1x8x6x6xf32>, tensor<f32>) -> tensor<1x8x6x6xf32>
  %xs = kiln.constant dense<0.5> : tensor<f32>
  %x = kiln.mul %xc, %xs : (tensor<1x8x6x6xf32>, tensor<f32>) -> tensor<1x8x6x6xf32>
  %wq = kiln.constant dense<3> : tensor<4x8x3x3xi8>
  %wf = kiln.cast %wq {to = f32} : (tensor<4x8x3x3xi8>) -> tensor<4x8x3x3xf32>
  %wz = kiln.constant dense<0.0> : tensor<4x1x1x1xf32>
  %wc = kiln.sub %wf, %wz : (tensor<4x8x3x3xf32>, tensor<4x1x1x1xf32>) -> tensor<4x8x3x3xf32>
  %ws = kiln.constant dense<[[[[0.25]]], [[[0.5]]], [[[0.25]]], [[[0.5]]]]> : tensor<4x1x1x1xf32>
  %w = kiln.mul %wc, %ws : (tensor<4x8x3x3xf32>, tensor<4x1x1x1xf32>) -> tensor<4x8x3x3xf32>
  %y = kiln.conv %x, %w, %b {dilations = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x8x6x6xf32>, tensor<4x8x3x3xf32>, tensor<4xf32>) -> tensor<1x4x6x6xf32> loc("qdq_conv")
  return %y : tensor<1x4x6x6xf32>
}

// -----

// Three input channels (the first convolution of an image model) fuse too
// (the lowering pads them to a quad); int8 activations and grouped
// convolutions are not fused: each keeps its dequantized float convolution
// and says why.
// CHECK-LABEL: func.func @not_fused
// CHECK: kiln.conv %arg0, %{{.+}} {dilations = array<i64: 1, 1>, input_zero_point = 0 : i64, {{.+}} : (tensor<1x3x6x6xui8>, tensor<4x3x3x3xi8>) -> tensor<1x4x4x4xf32>
// CHECK-COUNT-2: kiln.conv %{{.+}}, %{{.+}} {dilations = array<i64: 1, 1>, {{(group = 2 : i64, )?}}pads
// LOG: fused int8 conv at 'rgb_conv' (uint8 x int8, VNNI)
// LOG: not fusing int8 conv at 'signed_conv': the activations are int8, not uint8
// LOG: not fusing int8 conv at 'grouped_conv': only 2-D NCHW convolutions of group 1 are fused
func.func @not_fused(%rq: tensor<1x3x6x6xui8>, %sq: tensor<1x8x6x6xi8>, %gq: tensor<1x8x6x6xui8>) -> (tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>, tensor<1x8x4x4xf32>) {
  %s = kiln.constant dense<0.5> : tensor<f32>
  %rf = kiln.cast %rq {to = f32} : (tensor<1x3x6x6xui8>) -> tensor<1x3x6x6xf32>
  %r = kiln.mul %rf, %s : (tensor<1x3x6x6xf32>, tensor<f32>) -> tensor<1x3x6x6xf32>
  %rwq = kiln.constant dense<1> : tensor<4x3x3x3xi8>
  %rwf = kiln.cast %rwq {to = f32} : (tensor<4x3x3x3xi8>) -> tensor<4x3x3x3xf32>
  %rw = kiln.mul %rwf, %s : (tensor<4x3x3x3xf32>, tensor<f32>) -> tensor<4x3x3x3xf32>
  %y0 = kiln.conv %r, %rw {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x3x6x6xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x4x4xf32> loc("rgb_conv")
  %sf = kiln.cast %sq {to = f32} : (tensor<1x8x6x6xi8>) -> tensor<1x8x6x6xf32>
  %sx = kiln.mul %sf, %s : (tensor<1x8x6x6xf32>, tensor<f32>) -> tensor<1x8x6x6xf32>
  %wq = kiln.constant dense<1> : tensor<4x8x3x3xi8>
  %wf = kiln.cast %wq {to = f32} : (tensor<4x8x3x3xi8>) -> tensor<4x8x3x3xf32>
  %w = kiln.mul %wf, %s : (tensor<4x8x3x3xf32>, tensor<f32>) -> tensor<4x8x3x3xf32>
  %y1 = kiln.conv %sx, %w {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x8x6x6xf32>, tensor<4x8x3x3xf32>) -> tensor<1x4x4x4xf32> loc("signed_conv")
  %gf = kiln.cast %gq {to = f32} : (tensor<1x8x6x6xui8>) -> tensor<1x8x6x6xf32>
  %gx = kiln.mul %gf, %s : (tensor<1x8x6x6xf32>, tensor<f32>) -> tensor<1x8x6x6xf32>
  %gwq = kiln.constant dense<1> : tensor<8x4x3x3xi8>
  %gwf = kiln.cast %gwq {to = f32} : (tensor<8x4x3x3xi8>) -> tensor<8x4x3x3xf32>
  %gw = kiln.mul %gwf, %s : (tensor<8x4x3x3xf32>, tensor<f32>) -> tensor<8x4x3x3xf32>
  %y2 = kiln.conv %gx, %gw {dilations = array<i64: 1, 1>, group = 2 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x8x6x6xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x4x4xf32> loc("grouped_conv")
  return %y0, %y1, %y2 : tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>, tensor<1x8x4x4xf32>
}
