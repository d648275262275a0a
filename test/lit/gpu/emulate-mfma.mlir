// RUN: kiln-opt %s -kiln-gpu-emulate-kernels | FileCheck %s

// An MFMA becomes a call of the emulator's wave-collective product: A's four
// halves as two words from slot 0, B's from slot 4, the f32 accumulators in
// slots 6..9 as bits, D read back from them as a vector; the kernel is
// marked as synchronizing.
// CHECK:       kiln.gpu.kernels = [{barriers = true, {{.*}}name = "kiln_kernel_0"
// CHECK-LABEL: func.func @kiln_kernel_0(
// CHECK-SAME:    %[[STATE:[a-z0-9]+]]: memref<12xi32>)
// CHECK:         %[[SLOTS:.+]] = memref.alloca() : memref<10xi32>
// CHECK:         vector.bitcast %{{.+}} : vector<4xf16> to vector<2xi32>
// CHECK:         memref.store %{{.+}}, %[[SLOTS]][%c0
// CHECK:         memref.store %{{.+}}, %[[SLOTS]][%c1
// CHECK:         vector.bitcast %{{.+}} : vector<4xf16> to vector<2xi32>
// CHECK:         memref.store %{{.+}}, %[[SLOTS]][%c4
// CHECK:         memref.store %{{.+}}, %[[SLOTS]][%c5
// CHECK:         %[[KIND:.+]] = arith.constant 4 : i32
// CHECK:         call @__kiln_emulator_mma(%[[STATE]], %[[KIND]], %[[SLOTS]]) : (memref<12xi32>, i32, memref<10xi32>) -> ()
// CHECK:         memref.load %[[SLOTS]][%c6{{.*}}] : memref<10xi32>
// CHECK:         vector.from_elements {{.*}} : vector<4xf32>
// CHECK-NOT:     amdgpu.mfma
// CHECK:       func.func private @__kiln_emulator_mma(memref<12xi32>, i32, memref<10xi32>)
module attributes {gpu.container_module, kiln.gpu.kernels = [{barriers = false, name = "kiln_kernel_0", nodes = [], params = 2 : i64, resources = [], shared = 0 : i64}]} {
  gpu.module @kiln_kernels {
    gpu.func @kiln_kernel_0(%a: memref<4xvector<4xf16>>, %out: memref<4xvector<4xf32>>) kernel {
      %c0 = arith.constant 0 : index
      %zero = arith.constant dense<0.0> : vector<4xf32>
      %a0 = memref.load %a[%c0] : memref<4xvector<4xf16>>
      %d = amdgpu.mfma 16x16x16 %a0 * %a0 + %zero blgp = none : vector<4xf16>, vector<4xf16>, vector<4xf32>
      memref.store %d, %out[%c0] : memref<4xvector<4xf32>>
      gpu.return
    }
  }
}
