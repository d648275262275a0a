// RUN: kiln-opt %s -kiln-gpu-emulate-kernels | FileCheck %s

// The kernels become host functions with a last argument holding the
// thread's coordinates (thread id, block id, block size, grid size: twelve
// i32); a barrier calls the emulator; device-module globals move to the
// host module; the kernel table records which kernels use barriers.
// CHECK:       module attributes {kiln.gpu.kernels = [{barriers = true, {{.*}}name = "kiln_kernel_0", {{.*}}}], kiln.gpu.platform = "emulator"} {
// CHECK-NOT:     gpu.module
// CHECK:         memref.global "private" @tile : memref<8xf32>
// CHECK-LABEL:   func.func @kiln_kernel_0(
// CHECK-SAME:      %[[X:.+]]: memref<8xf32>, %[[STATE:.+]]: memref<12xi32>)
// CHECK:           %[[C0:.+]] = arith.constant 0 : index
// CHECK:           %[[TID:.+]] = memref.load %[[STATE]][%[[C0]]] : memref<12xi32>
// CHECK:           %[[T:.+]] = arith.index_castui %[[TID]] : i32 to index
// CHECK:           %[[C3:.+]] = arith.constant 3 : index
// CHECK:           memref.load %[[STATE]][%[[C3]]] : memref<12xi32>
// CHECK:           %[[C6:.+]] = arith.constant 6 : index
// CHECK:           memref.load %[[STATE]][%[[C6]]] : memref<12xi32>
// CHECK:           call @__kiln_emulator_barrier(%[[STATE]]) : (memref<12xi32>) -> ()
// CHECK:           return
// CHECK:         func.func private @__kiln_emulator_barrier(memref<12xi32>)
module attributes {gpu.container_module, kiln.gpu.kernels = [{barriers = false, name = "kiln_kernel_0", nodes = [], params = 1 : i64, resources = [], shared = 0 : i64}]} {
  gpu.module @kiln_kernels {
    memref.global "private" @tile : memref<8xf32>
    gpu.func @kiln_kernel_0(%x: memref<8xf32>) kernel {
      %t = gpu.thread_id x
      %b = gpu.block_id x
      %n = gpu.block_dim x
      %base = arith.muli %b, %n : index
      %i = arith.addi %base, %t : index
      %v = memref.load %x[%i] : memref<8xf32>
      gpu.barrier
      memref.store %v, %x[%t] : memref<8xf32>
      gpu.return
    }
  }
}
