// RUN: kiln-opt %s -kiln-gpu-emulate-kernels -split-input-file -verify-diagnostics | FileCheck %s

// An f32 xor shuffle becomes a call of the emulator's block-collective
// exchange: the value's bits in slot 0, the offset and width in 1 and 2,
// the other lane's bits back from slot 6 and whether it was in the group
// from slot 7. The kernel is marked as synchronizing.
// CHECK:       kiln.gpu.kernels = [{barriers = true, {{.*}}name = "kiln_kernel_0"
// CHECK-LABEL: func.func @kiln_kernel_0(
// CHECK-SAME:    %[[STATE:[a-z0-9]+]]: memref<12xi32>)
// CHECK:         %[[SLOTS:.+]] = memref.alloca() : memref<10xi32>
// CHECK:         %[[BITS:.+]] = arith.bitcast %{{.+}} : f32 to i32
// CHECK:         memref.store %[[BITS]], %[[SLOTS]][%c0
// CHECK:         memref.store %{{.+}}, %[[SLOTS]][%c1
// CHECK:         memref.store %{{.+}}, %[[SLOTS]][%c2
// CHECK:         %[[KIND:.+]] = arith.constant 6 : i32
// CHECK:         call @__kiln_emulator_mma(%[[STATE]], %[[KIND]], %[[SLOTS]])
// CHECK:         %[[OUT:.+]] = memref.load %[[SLOTS]][%c6
// CHECK:         arith.bitcast %[[OUT]] : i32 to f32
// CHECK:         %[[VALID:.+]] = memref.load %[[SLOTS]][%c7
// CHECK:         arith.trunci %[[VALID]] : i32 to i1
// CHECK-NOT:     gpu.shuffle
module attributes {gpu.container_module, kiln.gpu.kernels = [{barriers = false, name = "kiln_kernel_0", nodes = [], params = 2 : i64, resources = [], shared = 0 : i64}]} {
  gpu.module @kiln_kernels {
    gpu.func @kiln_kernel_0(%x: memref<64xf32>, %out: memref<64xf32>) kernel {
      %tid = gpu.thread_id x
      %offset = arith.constant 16 : i32
      %width = arith.constant 64 : i32
      %v = memref.load %x[%tid] : memref<64xf32>
      %r, %ok = gpu.shuffle xor %v, %offset, %width : f32
      %zero = arith.constant 0.0 : f32
      %s = arith.select %ok, %r, %zero : f32
      memref.store %s, %out[%tid] : memref<64xf32>
      gpu.return
    }
  }
}

// -----

// Other shuffle modes are not emulated.
module attributes {gpu.container_module, kiln.gpu.kernels = [{barriers = false, name = "kiln_kernel_0", nodes = [], params = 1 : i64, resources = [], shared = 0 : i64}]} {
  gpu.module @kiln_kernels {
    gpu.func @kiln_kernel_0(%x: memref<64xf32>) kernel {
      %c0 = arith.constant 0 : index
      %offset = arith.constant 1 : i32
      %width = arith.constant 64 : i32
      %v = memref.load %x[%c0] : memref<64xf32>
      // expected-error @+1 {{kiln-gpu-emulate-kernels: the emulator runs 32-bit xor shuffles only}}
      %r, %ok = gpu.shuffle down %v, %offset, %width : f32
      memref.store %r, %x[%c0] : memref<64xf32>
      gpu.return
    }
  }
}
