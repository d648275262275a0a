// RUN: kiln-opt %s --pass-pipeline='builtin.module(gpu.module(kiln-gpu-lower-vector-ops))' | FileCheck %s

// In-bounds 1-D transfers become vector loads and stores; a multi-reduction
// becomes a vector.reduction; a contraction becomes FMAs.
// CHECK-LABEL: gpu.func @row(
// CHECK-NOT:     vector.transfer_read
// CHECK:         %[[V:.+]] = vector.load %{{.+}}[%{{.+}}, %{{.+}}] : memref<16x64xf32>, vector<16xf32>
// CHECK:         vector.reduction <add>, %[[V]]
// CHECK:         vector.store %{{.+}}, %{{.+}}[%{{.+}}, %{{.+}}] : memref<16x64xf32>, vector<16xf32>
// CHECK-NOT:     vector.transfer_write
gpu.module @kernels {
  gpu.func @row(%m: memref<16x64xf32>, %out: memref<16xf32>) kernel {
    %c0 = arith.constant 0 : index
    %zero = arith.constant 0.0 : f32
    %t = gpu.thread_id x
    %v = vector.transfer_read %m[%t, %c0], %zero {in_bounds = [true]} : memref<16x64xf32>, vector<16xf32>
    %s = vector.multi_reduction <add>, %v, %zero [0] : vector<16xf32> to f32
    memref.store %s, %out[%t] : memref<16xf32>
    %d = arith.addf %v, %v : vector<16xf32>
    vector.transfer_write %d, %m[%t, %c0] {in_bounds = [true]} : vector<16xf32>, memref<16x64xf32>
    gpu.return
  }
}
