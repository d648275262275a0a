// RUN: kiln-opt %s -kiln-gpu-attention-kernels -split-input-file | FileCheck %s

// Causal attention over 90 queries and keys, head size 16: one kernel of
// 2 row blocks x 2 (batch x heads), 64 threads, K and V tiles of 16 keys in
// shared memory; the key loop of each block ends at its last row; scores
// 4 keys at a time with one online-softmax rescale each; one division by l.
// CHECK-LABEL: func.func @causal(
// CHECK:         %[[OUT:.+]] = memref.alloc() {alignment = 64 : i64} : memref<1x2x90x16xf32>
// CHECK:         gpu.launch {{.*}} workgroup(%[[KS:.+]] : memref<16x16xf32, #gpu.address_space<workgroup>>, %[[VS:.+]] : memref<16x16xf32, #gpu.address_space<workgroup>>)
// CHECK:           %[[END:.+]] = arith.minui
// CHECK:           scf.for %{{.+}} = %{{.+}} to %[[END]] step
// CHECK:             memref.store %{{.+}}, %[[KS]]
// CHECK:             memref.store %{{.+}}, %[[VS]]
// CHECK:             gpu.barrier
// CHECK:             scf.for
// CHECK-COUNT-4:       arith.cmpi ugt
// CHECK:               arith.maximumf
// CHECK:               math.exp
// CHECK:             gpu.barrier
// CHECK:           arith.divf
// CHECK:           memref.store %{{.+}}, %[[OUT]]
// CHECK:         %[[R:.+]] = bufferization.to_tensor %[[OUT]] restrict writable
// CHECK-NOT:     kiln.attention
// CHECK:         return %[[R]]
func.func @causal(%q: tensor<1x2x90x16xf32>, %k: tensor<1x2x90x16xf32>, %v: tensor<1x2x90x16xf32>) -> tensor<1x2x90x16xf32> {
  %o = kiln.attention %q, %k, %v {causal = true, scale = 2.500000e-01 : f64} : (tensor<1x2x90x16xf32>, tensor<1x2x90x16xf32>, tensor<1x2x90x16xf32>) -> tensor<1x2x90x16xf32>
  return %o : tensor<1x2x90x16xf32>
}

// -----

// A broadcast mask is read per score (its broadcast dims at 0).
// CHECK-LABEL: func.func @masked(
// CHECK:         %[[MASK:.+]] = bufferization.to_buffer %arg3 read_only : tensor<2x1x1x32xf32> to memref<2x1x1x32xf32>
// CHECK:         gpu.launch
// CHECK:           memref.load %[[MASK]][%{{.+}}, %c0{{.*}}, %c0{{.*}}, %{{.+}}]
func.func @masked(%q: tensor<2x4x16x8xf32>, %k: tensor<2x4x32x8xf32>, %v: tensor<2x4x32x8xf32>, %m: tensor<2x1x1x32xf32>) -> tensor<2x4x16x8xf32> {
  %o = kiln.attention %q, %k, %v, %m {causal = false, scale = 0.35 : f64} : (tensor<2x4x16x8xf32>, tensor<2x4x32x8xf32>, tensor<2x4x32x8xf32>, tensor<2x1x1x32xf32>) -> tensor<2x4x16x8xf32>
  return %o : tensor<2x4x16x8xf32>
}

// -----

// Head sizes over 64 keep the generic lowering.
// CHECK-LABEL: func.func @wide(
// CHECK-NOT:     gpu.launch
// CHECK:         kiln.attention
func.func @wide(%q: tensor<1x1x8x128xf32>, %k: tensor<1x1x8x128xf32>, %v: tensor<1x1x8x128xf32>) -> tensor<1x1x8x128xf32> {
  %o = kiln.attention %q, %k, %v {causal = false, scale = 0.088 : f64} : (tensor<1x1x8x128xf32>, tensor<1x1x8x128xf32>, tensor<1x1x8x128xf32>) -> tensor<1x1x8x128xf32>
  return %o : tensor<1x1x8x128xf32>
}

// -----

// The SIMT kernel computes in f32 only: an f16 attention keeps the generic
// lowering (the MFMA kernel takes it on AMD).
// CHECK-LABEL: func.func @half(
// CHECK-NOT:     gpu.launch
// CHECK:         kiln.attention
func.func @half(%q: tensor<2x20x32xf16>, %k: tensor<2x20x32xf16>, %v: tensor<2x20x32xf16>) -> tensor<2x20x32xf16> {
  %o = kiln.attention %q, %k, %v {causal = false, scale = 1.767767e-01 : f64} : (tensor<2x20x32xf16>, tensor<2x20x32xf16>, tensor<2x20x32xf16>) -> tensor<2x20x32xf16>
  return %o : tensor<2x20x32xf16>
}

// -----

// zero_masked_rows (torch's guarded softmax): a row whose every key is
// masked sums to 0 and gives 0, not 0/0, after the one division by l.
// CHECK-LABEL: func.func @zero_masked_rows(
// CHECK:         gpu.launch
// CHECK:           %[[O:.+]] = arith.divf %{{.+}}, %[[L:.+]] : f32
// CHECK:           %[[EMPTY:.+]] = arith.cmpf oeq, %[[L]], %{{.+}} : f32
// CHECK:           %[[Z:.+]] = arith.select %[[EMPTY]], %{{.+}}, %[[O]] : f32
// CHECK:           memref.store %[[Z]]
// CHECK-NOT:     kiln.attention
func.func @zero_masked_rows(%q: tensor<2x4x16x8xf32>, %k: tensor<2x4x32x8xf32>, %v: tensor<2x4x32x8xf32>, %m: tensor<2x1x1x32xf32>) -> tensor<2x4x16x8xf32> {
  %o = kiln.attention %q, %k, %v, %m {causal = false, scale = 0.35 : f64, zero_masked_rows} : (tensor<2x4x16x8xf32>, tensor<2x4x32x8xf32>, tensor<2x4x32x8xf32>, tensor<2x1x1x32xf32>) -> tensor<2x4x16x8xf32>
  return %o : tensor<2x4x16x8xf32>
}

// -----

// A run-time batch and sequence (symbolic dims): the flash kernel with its
// grid (query blocks, batch x heads) and the key bound read from the
// operands' extents at run time, the result allocated at the run's size.
// CHECK-LABEL: func.func @run_time_sequence(
// CHECK-SAME:    %[[Q:[^:]+]]: tensor<?x4x?x16xf32>, %[[K:[^:]+]]: tensor<?x4x?x16xf32>
// CHECK-DAG:     %[[B:.+]] = tensor.dim %[[Q]], %c0{{.*}} :
// CHECK-DAG:     %[[SQ:.+]] = tensor.dim %[[Q]], %c2{{.*}} :
// CHECK-DAG:     %[[SK:.+]] = tensor.dim %[[K]], %c2{{.*}} :
// CHECK:         %[[OUT:.+]] = memref.alloc(%[[B]], %[[SQ]]) {alignment = 64 : i64} : memref<?x4x?x16xf32>
// CHECK:         %[[BLOCKS:.+]] = arith.ceildivui %[[SQ]], %c64
// CHECK:         gpu.launch blocks({{.*}}) in (%{{.+}} = %[[BLOCKS]], %{{.+}} = %{{.+}}, %{{.+}} = %c1{{.*}})
// CHECK:           arith.cmpi ult, %{{.+}}, %[[SQ]]
// CHECK:           scf.for %{{.+}} = %{{.+}} to %[[SK]] step
// CHECK:           memref.store %{{.+}}, %[[OUT]]
// CHECK-NOT:     kiln.attention
func.func @run_time_sequence(%q: tensor<?x4x?x16xf32>, %k: tensor<?x4x?x16xf32>, %v: tensor<?x4x?x16xf32>) -> tensor<?x4x?x16xf32> {
  %o = kiln.attention %q, %k, %v {causal = false, scale = 2.500000e-01 : f64} : (tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>, tensor<?x4x?x16xf32>) -> tensor<?x4x?x16xf32>
  return %o : tensor<?x4x?x16xf32>
}
