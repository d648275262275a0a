// RUN: kiln-opt %s -kiln-fuse-quantized-matmul -split-input-file | FileCheck %s
// RUN: env KILN_LOGS=+fusion kiln-opt %s -kiln-fuse-quantized-matmul -split-input-file --mlir-disable-threading -o /dev/null 2>&1 | FileCheck %s --check-prefix=LOG

// The QDQ form of an int8 matmul: uint8 activations (zero point 128, scale
// 0.5), constant int8 weights with zero point 0 and a scale per column.
// It becomes the integer product of the bytes times 0.5 * w_scale.
// CHECK-LABEL: func.func @qdq
// CHECK: %[[P:.+]] = kiln.quantized_matmul %arg0, %{{.+}} {lhs_zero_point = 128 : i64} : (tensor<2x4x64xui8>, tensor<64x32xi8>) -> tensor<2x4x32xf32>
// CHECK: %[[S:.+]] = kiln.constant dense<[1.250000e-01, 2.500000e-01,
// CHECK-SAME: tensor<32xf32>
// CHECK: %[[Y:.+]] = kiln.mul %[[P]], %[[S]] : (tensor<2x4x32xf32>, tensor<32xf32>) -> tensor<2x4x32xf32>
// CHECK-NOT: kiln.matmul
// CHECK: return %[[Y]]
// LOG: fused int8 matmul at 'qdq_mm' (uint8 x int8, VNNI)
func.func @qdq(%xq: tensor<2x4x64xui8>) -> tensor<2x4x32xf32> {
  %xf = kiln.cast %xq {to = f32} : (tensor<2x4x64xui8>) -> tensor<2x4x64xf32>
  %xz = kiln.constant dense<128.0> : tensor<f32>
  %xc = kiln.sub %xf, %xz : (tensor<2x4x64xf32>, tensor<f32>) -> tensor<2x4x64xf32>
  %xs = kiln.constant dense<0.5> : tensor<f32>
  %x = kiln.mul %xc, %xs : (tensor<2x4x64xf32>, tensor<f32>) -> tensor<2x4x64xf32>
  %wq = kiln.constant dense<3> : tensor<64x32xi8>
  %wf = kiln.cast %wq {to = f32} : (tensor<64x32xi8>) -> tensor<64x32xf32>
  %wz = kiln.constant dense<0.0> : tensor<1x32xf32>
  %wc = kiln.sub %wf, %wz : (tensor<64x32xf32>, tensor<1x32xf32>) -> tensor<64x32xf32>
  %ws = kiln.constant dense<[[0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5, 0.25, 0.5]]> : tensor<1x32xf32>
  %w = kiln.mul %wc, %ws : (tensor<64x32xf32>, tensor<1x32xf32>) -> tensor<64x32xf32>
  %y = kiln.matmul %x, %w : (tensor<2x4x64xf32>, tensor<64x32xf32>) -> tensor<2x4x32xf32> loc("qdq_mm")
  return %y : tensor<2x4x32xf32>
}

// -----

// Gemm with transB: the weights [N, K] are dequantized, then transposed;
// the int8 constant is transposed at compile time instead.
// CHECK-LABEL: func.func @transposed
// CHECK: %[[W:.+]] = kiln.constant dense_resource<int8_weights> : tensor<64x16xi8>
// CHECK: kiln.quantized_matmul %arg0, %[[W]] {lhs_zero_point = 0 : i64} : (tensor<8x64xui8>, tensor<64x16xi8>) -> tensor<8x16xf32>
func.func @transposed(%xq: tensor<8x64xui8>) -> tensor<8x16xf32> {
  %xf = kiln.cast %xq {to = f32} : (tensor<8x64xui8>) -> tensor<8x64xf32>
  %xs = kiln.constant dense<0.5> : tensor<f32>
  %x = kiln.mul %xf, %xs : (tensor<8x64xf32>, tensor<f32>) -> tensor<8x64xf32>
  %wq = kiln.constant dense<1> : tensor<16x64xi8>
  %wf = kiln.cast %wq {to = f32} : (tensor<16x64xi8>) -> tensor<16x64xf32>
  %ws = kiln.constant dense<0.125> : tensor<16x1xf32>
  %w = kiln.mul %wf, %ws : (tensor<16x64xf32>, tensor<16x1xf32>) -> tensor<16x64xf32>
  %wt = kiln.transpose %w {perm = array<i64: 1, 0>} : (tensor<16x64xf32>) -> tensor<64x16xf32>
  %y = kiln.matmul %x, %wt : (tensor<8x64xf32>, tensor<64x16xf32>) -> tensor<8x16xf32>
  return %y : tensor<8x16xf32>
}

// -----

// int8 activations and weights with a zero point other than 0 keep the
// dequantized float matmul, and say why.
// CHECK-LABEL: func.func @not_fused
// CHECK-COUNT-2: kiln.matmul
// CHECK-NOT: kiln.quantized_matmul
// LOG: not fusing int8 matmul at 'signed_mm': the activations are int8, not uint8
// LOG: not fusing int8 matmul at 'zp_mm': the weights' zero point is not 0
func.func @not_fused(%sq: tensor<8x64xi8>, %xq: tensor<8x64xui8>) -> (tensor<8x16xf32>, tensor<8x16xf32>) {
  %sf = kiln.cast %sq {to = f32} : (tensor<8x64xi8>) -> tensor<8x64xf32>
  %xf = kiln.cast %xq {to = f32} : (tensor<8x64xui8>) -> tensor<8x64xf32>
  %xs = kiln.constant dense<0.5> : tensor<f32>
  %s = kiln.mul %sf, %xs : (tensor<8x64xf32>, tensor<f32>) -> tensor<8x64xf32>
  %x = kiln.mul %xf, %xs : (tensor<8x64xf32>, tensor<f32>) -> tensor<8x64xf32>
  %wq = kiln.constant dense<1> : tensor<64x16xi8>
  %wf = kiln.cast %wq {to = f32} : (tensor<64x16xi8>) -> tensor<64x16xf32>
  %wz = kiln.constant dense<2.0> : tensor<f32>
  %wc = kiln.sub %wf, %wz : (tensor<64x16xf32>, tensor<f32>) -> tensor<64x16xf32>
  %ws = kiln.constant dense<0.125> : tensor<f32>
  %w = kiln.mul %wf, %ws : (tensor<64x16xf32>, tensor<f32>) -> tensor<64x16xf32>
  %w2 = kiln.mul %wc, %ws : (tensor<64x16xf32>, tensor<f32>) -> tensor<64x16xf32>
  %y = kiln.matmul %s, %w : (tensor<8x64xf32>, tensor<64x16xf32>) -> tensor<8x16xf32> loc("signed_mm")
  %z = kiln.matmul %x, %w2 : (tensor<8x64xf32>, tensor<64x16xf32>) -> tensor<8x16xf32> loc("zp_mm")
  return %y, %z : tensor<8x16xf32>, tensor<8x16xf32>
}

// -----

// A reduced dim that is not a multiple of 4 (no whole VNNI quads), and a
// square weight whose scale varies along K rather than N ([K, 1] on
// [K, N]: it cannot leave the sum): both keep the float matmul.
// CHECK-LABEL: func.func @not_quads
// CHECK-COUNT-2: kiln.matmul
// CHECK-NOT: kiln.quantized_matmul
// LOG: not fusing int8 matmul at 'odd_k_mm': the reduced dim is not a multiple of 4 (VNNI quads)
// LOG: not fusing int8 matmul at 'row_scale_mm': the weights' scale varies along the reduced dim
func.func @not_quads(%aq: tensor<8x6xui8>, %xq: tensor<8x16xui8>) -> (tensor<8x16xf32>, tensor<8x16xf32>) {
  %s = kiln.constant dense<0.5> : tensor<f32>
  %af = kiln.cast %aq {to = f32} : (tensor<8x6xui8>) -> tensor<8x6xf32>
  %a = kiln.mul %af, %s : (tensor<8x6xf32>, tensor<f32>) -> tensor<8x6xf32>
  %vq = kiln.constant dense<1> : tensor<6x16xi8>
  %vf = kiln.cast %vq {to = f32} : (tensor<6x16xi8>) -> tensor<6x16xf32>
  %v = kiln.mul %vf, %s : (tensor<6x16xf32>, tensor<f32>) -> tensor<6x16xf32>
  %y = kiln.matmul %a, %v : (tensor<8x6xf32>, tensor<6x16xf32>) -> tensor<8x16xf32> loc("odd_k_mm")
  %xf = kiln.cast %xq {to = f32} : (tensor<8x16xui8>) -> tensor<8x16xf32>
  %x = kiln.mul %xf, %s : (tensor<8x16xf32>, tensor<f32>) -> tensor<8x16xf32>
  %wq = kiln.constant dense<1> : tensor<16x16xi8>
  %wf = kiln.cast %wq {to = f32} : (tensor<16x16xi8>) -> tensor<16x16xf32>
  %ws = kiln.constant dense<[[0.5], [0.25], [0.5], [0.25], [0.5], [0.25], [0.5], [0.25], [0.5], [0.25], [0.5], [0.25], [0.5], [0.25], [0.5], [0.25]]> : tensor<16x1xf32>
  %w = kiln.mul %wf, %ws : (tensor<16x16xf32>, tensor<16x1xf32>) -> tensor<16x16xf32>
  %z = kiln.matmul %x, %w : (tensor<8x16xf32>, tensor<16x16xf32>) -> tensor<8x16xf32> loc("row_scale_mm")
  return %y, %z : tensor<8x16xf32>, tensor<8x16xf32>
}
