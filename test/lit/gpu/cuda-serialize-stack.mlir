// REQUIRES: ptxas
// RUN: kiln-opt %s -kiln-cuda-serialize="archs=sm_80" -verify-diagnostics

// A kernel whose per-thread scratch (here 1 MiB) exceeds CUDA's 512 KiB of
// local memory per thread is refused at compile time, naming its nodes.
// expected-error @below {{kernel kiln_kernel_0 (big_scratch) needs 1048576 bytes of stack per thread on sm_80; CUDA allows 524288}}
module attributes {gpu.container_module, kiln.gpu.kernels = [{barriers = false, name = "kiln_kernel_0", nodes = ["big_scratch"], params = 1 : i64, resources = [], shared = 0 : i64}]} {
  gpu.module @kiln_kernels {
    llvm.func @kiln_kernel_0(%out: !llvm.ptr) attributes {gpu.kernel, nvvm.kernel} {
      %n = llvm.mlir.constant(262144 : i64) : i64
      %scratch = llvm.alloca %n x f32 : (i64) -> !llvm.ptr
      %t = nvvm.read.ptx.sreg.tid.x : i32
      %p = llvm.getelementptr %scratch[%t] : (!llvm.ptr, i32) -> !llvm.ptr, f32
      %one = llvm.mlir.constant(1.0 : f32) : f32
      llvm.store volatile %one, %p : f32, !llvm.ptr
      %v = llvm.load volatile %p : !llvm.ptr -> f32
      %q = llvm.getelementptr %out[%t] : (!llvm.ptr, i32) -> !llvm.ptr, f32
      llvm.store %v, %q : f32, !llvm.ptr
      llvm.return
    }
  }
}
