// RUN: kiln-opt %s -kiln-gpu-outline-kernels | FileCheck %s

// Symbolic dims: a buffer of run-time extents (here a run-time sized
// allocation) cannot be a bare-pointer kernel parameter. The kernel takes
// its base buffer (rank 0) and its run-time size and stride, and rebuilds
// it with a memref.reinterpret_cast of the same type; a static buffer is
// passed as it is.
// CHECK-LABEL: func.func @main(
// CHECK-SAME:    %[[OUT:.+]]: memref<8xf32>, %[[N:.+]]: index)
// CHECK:         %[[BUF:.+]] = memref.alloc(%[[N]]) : memref<?x4xf32>
// CHECK:         %[[BASE:.+]], %[[OFF:.+]], %[[SIZES:.+]]:2, %[[STRIDES:.+]]:2 = memref.extract_strided_metadata %[[BUF]]
// CHECK:         gpu.launch_func @kiln_kernels::@kiln_kernel_0 {{.*}} args(%[[BASE]] : memref<f32>, %[[SIZES]]#0 : index, %[[OUT]] : memref<8xf32>)
// CHECK:       gpu.func @kiln_kernel_0(%[[KBASE:.+]]: memref<f32>, %[[KN:.+]]: index, %{{.+}}: memref<8xf32>) kernel
// CHECK:         %[[REBUILT:.+]] = memref.reinterpret_cast %[[KBASE]] to offset: [0], sizes: [%[[KN]], 4], strides: [4, 1] : memref<f32> to memref<?x4xf32>
// CHECK:         memref.load %[[REBUILT]]
func.func @main(%out: memref<8xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %buffer = memref.alloc(%n) : memref<?x4xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c8, %sy = %c1, %sz = %c1) {
    %v = memref.load %buffer[%c0, %c0] : memref<?x4xf32>
    memref.store %v, %out[%tx] : memref<8xf32>
    gpu.terminator
  }
  return
}
