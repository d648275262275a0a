// REQUIRES: ptxas
// RUN: kiln-opt %s -kiln-cuda-serialize="archs=sm_80,sm_90a" | FileCheck %s

// One NVVM kernel assembled for two architectures: the fatbin is the
// module's image blob (its magic 0xBA55ED50 first), ptxas's report per arch
// lands in the kernel table, the device module is gone.
// CHECK:      module attributes {
// CHECK-SAME:   kiln.gpu.archs = "sm_80,sm_90a"
// CHECK-SAME:   kiln.gpu.image = dense_resource<kiln_gpu_image> : tensor<{{[0-9]+}}xi8>
// CHECK-SAME:   kiln.gpu.kernels = [{barriers = false, {{.*}}name = "kiln_kernel_0", nodes = ["relu_1"], params = 2 : i64, resources = [{arch = "sm_80", local = 0 : i64, registers = {{[0-9]+}} : i64, shared = 0 : i64, spill_loads = 0 : i64, spill_stores = 0 : i64}, {arch = "sm_90a", local = 0 : i64, registers = {{[0-9]+}} : i64, shared = 0 : i64, spill_loads = 0 : i64, spill_stores = 0 : i64}], shared = 0 : i64}]
// CHECK-SAME:   kiln.gpu.platform = "cuda"
// CHECK-NOT:  gpu.module
// CHECK:      kiln_gpu_image: "0x{{[0-9A-F]*}}50ED55BA
module attributes {gpu.container_module, kiln.gpu.kernels = [{barriers = false, name = "kiln_kernel_0", nodes = ["relu_1"], params = 2 : i64, resources = [], shared = 0 : i64}]} {
  gpu.module @kiln_kernels {
    llvm.func @kiln_kernel_0(%in: !llvm.ptr, %out: !llvm.ptr) attributes {gpu.kernel, nvvm.kernel} {
      %t = nvvm.read.ptx.sreg.tid.x : i32
      %p = llvm.getelementptr %in[%t] : (!llvm.ptr, i32) -> !llvm.ptr, f32
      %v = llvm.load %p : !llvm.ptr -> f32
      %zero = llvm.mlir.constant(0.0 : f32) : f32
      %r = llvm.intr.maxnum(%v, %zero) : (f32, f32) -> f32
      %q = llvm.getelementptr %out[%t] : (!llvm.ptr, i32) -> !llvm.ptr, f32
      llvm.store %r, %q : f32, !llvm.ptr
      llvm.return
    }
  }
}

