// RUN: kiln-opt %s -kiln-gpu-emulate-kernels | FileCheck %s

// An mma.sync becomes a call of the emulator's warp-collective product: the
// lane's A, B and C fragments as 32-bit words in a slot array (f16 pairs
// bitcast, f32 accumulators as bits), D read back from the last four slots;
// the kernel is marked as synchronizing (the emulator runs it as fibers).
// CHECK:       kiln.gpu.kernels = [{barriers = true, {{.*}}name = "kiln_kernel_0"
// CHECK-LABEL: func.func @kiln_kernel_0(
// CHECK-SAME:    %[[STATE:[a-z0-9]+]]: memref<12xi32>)
// CHECK:         %[[SLOTS:.+]] = memref.alloca() : memref<10xi32>
// CHECK:         vector.bitcast %{{.+}} : vector<2xf16> to vector<1xi32>
// CHECK:         arith.bitcast %{{.+}} : f32 to i32
// CHECK:         %[[KIND:.+]] = arith.constant 0 : i32
// CHECK:         call @__kiln_emulator_mma(%[[STATE]], %[[KIND]], %[[SLOTS]]) : (memref<12xi32>, i32, memref<10xi32>) -> ()
// CHECK:         %[[D:.+]] = memref.load %[[SLOTS]][%c6{{.*}}] : memref<10xi32>
// CHECK:         %[[DF:.+]] = arith.bitcast %[[D]] : i32 to f32
// CHECK:         memref.store %[[DF]]
// CHECK-NOT:     nvvm.mma.sync
// CHECK:       func.func private @__kiln_emulator_mma(memref<12xi32>, i32, memref<10xi32>)
module attributes {gpu.container_module, kiln.gpu.kernels = [{barriers = false, name = "kiln_kernel_0", nodes = [], params = 2 : i64, resources = [], shared = 0 : i64}]} {
  gpu.module @kiln_kernels {
    gpu.func @kiln_kernel_0(%a: memref<4xvector<2xf16>>, %out: memref<4xf32>) kernel {
      %c0 = arith.constant 0 : index
      %zero = arith.constant 0.0 : f32
      %a0 = memref.load %a[%c0] : memref<4xvector<2xf16>>
      %d = nvvm.mma.sync A[%a0, %a0, %a0, %a0] B[%a0, %a0] C[%zero, %zero, %zero, %zero]
          {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>,
           shape = #nvvm.shape<m = 16, n = 8, k = 16>}
          : (vector<2xf16>, vector<2xf16>, f32) -> !llvm.struct<(f32, f32, f32, f32)>
      %d0 = llvm.extractvalue %d[0] : !llvm.struct<(f32, f32, f32, f32)>
      memref.store %d0, %out[%c0] : memref<4xf32>
      gpu.return
    }
  }
}
