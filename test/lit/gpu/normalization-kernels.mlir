// RUN: kiln-opt %s -kiln-gpu-normalization-kernels -split-input-file | FileCheck %s

// Layer norm over the last dim of [1, 16, 64]: a block of 128 threads per
// row (16 blocks), the rows read through a [16, 64] view, two reductions
// through shared memory (mean, then the variance of the deviations), the
// normalized row written with scale and bias.
// CHECK-LABEL: func.func @layer_norm(
// CHECK:         %[[IN:.+]] = memref.collapse_shape %{{.+}} {{\[\[}}0, 1], [2]] : memref<1x16x64xf32> into memref<16x64xf32>
// CHECK:         %[[OUT:.+]] = memref.alloc() {alignment = 64 : i64} : memref<1x16x64xf32>
// CHECK:         %[[ROWS:.+]] = memref.collapse_shape %[[OUT]]
// CHECK:         gpu.launch {{.*}} workgroup(%[[PART:.+]] : memref<128xf32, #gpu.address_space<workgroup>>)
// CHECK:           scf.for %{{.+}} = %{{.+}} to %c64{{.*}} step %c128
// CHECK:             memref.load %[[IN]]
// CHECK:           memref.store %{{.+}}, %[[PART]]
// CHECK-COUNT-8:   gpu.barrier
// CHECK:           arith.divf
// CHECK:           math.fma
// CHECK-COUNT-8:   gpu.barrier
// CHECK:           math.rsqrt
// CHECK:           scf.for
// CHECK:             arith.mulf
// CHECK:             arith.addf
// CHECK:             memref.store %{{.+}}, %[[ROWS]]
// CHECK:         bufferization.to_tensor %[[OUT]] restrict writable
// CHECK-NOT:     kiln.layer_norm
func.func @layer_norm(%x: tensor<1x16x64xf32>, %g: tensor<64xf32>, %b: tensor<64xf32>) -> tensor<1x16x64xf32> {
  %y = kiln.layer_norm %x, %g, %b {axis = 2 : i64, epsilon = 1.0e-05 : f64} : (tensor<1x16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<1x16x64xf32>
  return %y : tensor<1x16x64xf32>
}

// -----

// Softmax: a max reduction, then a sum of exponentials, then quotients.
// CHECK-LABEL: func.func @softmax(
// CHECK:         gpu.launch
// CHECK:           arith.maximumf
// CHECK:           math.exp
// CHECK:           arith.divf
// CHECK-NOT:     kiln.softmax
func.func @softmax(%x: tensor<3x4x50xf32>) -> tensor<3x4x50xf32> {
  %y = kiln.softmax %x {axis = 2 : i64} : (tensor<3x4x50xf32>) -> tensor<3x4x50xf32>
  return %y : tensor<3x4x50xf32>
}

// -----

// A softmax over a middle axis keeps the generic lowering.
// CHECK-LABEL: func.func @middle_axis(
// CHECK-NOT:     gpu.launch
// CHECK:         kiln.softmax
func.func @middle_axis(%x: tensor<3x4x50xf32>) -> tensor<3x4x50xf32> {
  %y = kiln.softmax %x {axis = 1 : i64} : (tensor<3x4x50xf32>) -> tensor<3x4x50xf32>
  return %y : tensor<3x4x50xf32>
}

// -----

// A layer norm of a layer norm (a BERT export's embeddings): the second
// kernel reads the first one's result, not the op it replaced.
// CHECK-LABEL: func.func @chained(
// CHECK:         %[[FIRST:.+]] = bufferization.to_tensor %{{.+}} restrict writable
// CHECK:         bufferization.to_buffer %[[FIRST]] read_only
// CHECK:         gpu.launch
// CHECK-NOT:     kiln.layer_norm
func.func @chained(%x: tensor<2x12x64xf32>, %g: tensor<64xf32>, %b: tensor<64xf32>) -> tensor<2x12x64xf32> {
  %y = kiln.layer_norm %x, %g, %b {axis = 2 : i64, epsilon = 1.0e-05 : f64} : (tensor<2x12x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<2x12x64xf32>
  %z = kiln.layer_norm %y, %g, %b {axis = 2 : i64, epsilon = 1.0e-05 : f64} : (tensor<2x12x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<2x12x64xf32>
  return %z : tensor<2x12x64xf32>
}

// -----

// Run-time rows (a layer norm over [batch, seq, 64]): one block per row,
// their count read from the rows view at run time.
// CHECK-LABEL: func.func @run_time_rows(
// CHECK:         %[[IN:.+]] = memref.collapse_shape %{{.+}} {{\[\[}}0, 1], [2]] : memref<?x?x64xf32> into memref<?x64xf32>
// CHECK:         %[[OUT:.+]] = memref.alloc(%{{.+}}, %{{.+}}) {alignment = 64 : i64} : memref<?x?x64xf32>
// CHECK:         %[[ROWS:.+]] = memref.dim %[[IN]], %c0
// CHECK:         gpu.launch blocks(%{{.+}}, %{{.+}}, %{{.+}}) in (%{{.+}} = %[[ROWS]],
// CHECK-NOT:     kiln.layer_norm
func.func @run_time_rows(%x: tensor<?x?x64xf32>, %g: tensor<64xf32>, %b: tensor<64xf32>) -> tensor<?x?x64xf32> {
  %y = kiln.layer_norm %x, %g, %b {axis = 2 : i64, epsilon = 1.0e-05 : f64} : (tensor<?x?x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
  return %y : tensor<?x?x64xf32>
}
