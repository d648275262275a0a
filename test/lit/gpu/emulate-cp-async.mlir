// RUN: kiln-opt %s -kiln-gpu-emulate-kernels | FileCheck %s

// A cp.async becomes the copy itself, done at once: 16 bytes loaded from
// the integer address the kernel made the global pointer from (through its
// address-space cast), the bytes at and past the source size zeroed, and
// stored at the shared address; the commit and wait go, and so do the
// pointer casts.
// CHECK-LABEL: func.func @kiln_kernel_0(
// CHECK:         %[[DST:.+]] = arith.index_cast %{{.+}} : index to i64
// CHECK:         %[[SRC:.+]] = arith.index_cast %{{.+}} : index to i64
// CHECK:         %[[SP:.+]] = llvm.inttoptr %[[SRC]] : i64 to !llvm.ptr
// CHECK:         %[[DP:.+]] = llvm.inttoptr %[[DST]] : i64 to !llvm.ptr
// CHECK:         %[[BYTES:.+]] = llvm.load %[[SP]] {alignment = 1 : i64} : !llvm.ptr -> vector<16xi8>
// CHECK:         %[[SIZE:.+]] = vector.broadcast %{{.+}} : i32 to vector<16xi32>
// CHECK:         %[[IN:.+]] = arith.cmpi ult, %{{.+}}, %[[SIZE]] : vector<16xi32>
// CHECK:         %[[KEPT:.+]] = arith.select %[[IN]], %[[BYTES]], %{{.+}} : vector<16xi1>, vector<16xi8>
// CHECK:         llvm.store %[[KEPT]], %[[DP]] {alignment = 1 : i64} : vector<16xi8>, !llvm.ptr
// CHECK-NOT:     nvvm.cp.async
// CHECK-NOT:     llvm.addrspacecast
// CHECK:         return
module attributes {gpu.container_module, kiln.gpu.kernels = [{barriers = true, name = "kiln_kernel_0", nodes = [], params = 2 : i64, resources = [], shared = 512 : i64}]} {
  gpu.module @kiln_kernels {
    gpu.func @kiln_kernel_0(%in: memref<64xbf16>, %size: i32) workgroup(%stage: memref<16x16xbf16, #gpu.address_space<workgroup>>) kernel {
      %s = memref.extract_aligned_pointer_as_index %stage : memref<16x16xbf16, #gpu.address_space<workgroup>> -> index
      %si = arith.index_cast %s : index to i64
      %dst = llvm.inttoptr %si : i64 to !llvm.ptr<3>
      %g = memref.extract_aligned_pointer_as_index %in : memref<64xbf16> -> index
      %gi = arith.index_cast %g : index to i64
      %generic = llvm.inttoptr %gi : i64 to !llvm.ptr
      %src = llvm.addrspacecast %generic : !llvm.ptr to !llvm.ptr<1>
      nvvm.cp.async.shared.global %dst, %src, 16, cache = cg, %size : !llvm.ptr<3>, !llvm.ptr<1>, i32
      nvvm.cp.async.commit.group
      nvvm.cp.async.wait.group 0
      gpu.barrier
      gpu.return
    }
  }
}
