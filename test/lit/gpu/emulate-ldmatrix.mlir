// RUN: kiln-opt %s -kiln-gpu-emulate-kernels | FileCheck %s

// An ldmatrix.x4 becomes a call of the emulator's warp-collective: the
// lane's row address (the integer the kernel made the pointer from) as two
// 32-bit words in slots 0 and 1, kind 7 (8 when transposed), the four
// registers read back from slots 6..9; the pointer cast goes.
// CHECK-LABEL: func.func @kiln_kernel_0(
// CHECK-SAME:    %[[STATE:[a-z0-9]+]]: memref<12xi32>)
// CHECK:         %[[ADDR:.+]] = arith.index_cast %{{.+}} : index to i64
// CHECK:         %[[SLOTS:.+]] = memref.alloca() : memref<10xi32>
// CHECK:         %[[LO:.+]] = arith.trunci %[[ADDR]] : i64 to i32
// CHECK:         memref.store %[[LO]], %[[SLOTS]][%c0{{.*}}]
// CHECK:         %[[SHIFT:.+]] = arith.shrui %[[ADDR]], %c32_i64 : i64
// CHECK:         %[[HI:.+]] = arith.trunci %[[SHIFT]] : i64 to i32
// CHECK:         memref.store %[[HI]], %[[SLOTS]][%c1{{.*}}]
// CHECK:         %[[KIND:.+]] = arith.constant 8 : i32
// CHECK:         call @__kiln_emulator_mma(%[[STATE]], %[[KIND]], %[[SLOTS]])
// CHECK:         %[[R2:.+]] = memref.load %[[SLOTS]][%c8{{.*}}] : memref<10xi32>
// CHECK:         memref.store %[[R2]]
// CHECK-NOT:     nvvm.ldmatrix
// CHECK-NOT:     llvm.inttoptr
module attributes {gpu.container_module, kiln.gpu.kernels = [{barriers = false, name = "kiln_kernel_0", nodes = [], params = 1 : i64, resources = [], shared = 512 : i64}]} {
  gpu.module @kiln_kernels {
    gpu.func @kiln_kernel_0(%out: memref<4xi32>) workgroup(%stage: memref<16x16xbf16, #gpu.address_space<workgroup>>) kernel {
      %c0 = arith.constant 0 : index
      %base = memref.extract_aligned_pointer_as_index %stage : memref<16x16xbf16, #gpu.address_space<workgroup>> -> index
      %i = arith.index_cast %base : index to i64
      %p = llvm.inttoptr %i : i64 to !llvm.ptr<3>
      %m = nvvm.ldmatrix %p {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<col>, num = 4 : i32, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>} : (!llvm.ptr<3>) -> !llvm.struct<(i32, i32, i32, i32)>
      %r2 = llvm.extractvalue %m[2] : !llvm.struct<(i32, i32, i32, i32)>
      memref.store %r2, %out[%c0] : memref<4xi32>
      gpu.return
    }
  }
}
