// REQUIRES: rocm
// RUN: kiln-opt %s -kiln-hip-serialize="archs=gfx90a,gfx942" | FileCheck %s

// One kernel (with math through ocml) built for two AMD archs: the image is
// a clang offload bundle, the kernel table carries each code object's
// report (VGPRs, SGPRs, LDS, scratch, occupancy), the device module is gone.
// CHECK:      module attributes {
// CHECK-SAME:   kiln.gpu.archs = "gfx90a,gfx942"
// CHECK-SAME:   kiln.gpu.image = dense_resource<kiln_gpu_image> : tensor<{{[0-9]+}}xi8>
// CHECK-SAME:   kiln.gpu.kernels = [{barriers = false, {{.*}}name = "kiln_kernel_0", nodes = ["tanh_1"], params = 2 : i64, resources = [{arch = "gfx90a", local = 0 : i64, occupancy = 8 : i64, registers = {{[0-9]+}} : i64, sgprs = {{[0-9]+}} : i64, shared = 0 : i64, spill_loads = 0 : i64, spill_stores = 0 : i64}, {arch = "gfx942", local = 0 : i64, occupancy = 8 : i64, registers = {{[0-9]+}} : i64, sgprs = {{[0-9]+}} : i64, shared = 0 : i64, spill_loads = 0 : i64, spill_stores = 0 : i64}], shared = 0 : i64}]
// CHECK-SAME:   kiln.gpu.platform = "hip"
// CHECK-NOT:  gpu.module
// The bundle's magic: "__CLANG_OFFLOAD_BUNDLE__".
// CHECK:      kiln_gpu_image: "0x{{[0-9A-F]+}}5F5F434C414E475F4F46464C4F41445F42554E444C455F5F
module attributes {gpu.container_module, kiln.gpu.kernels = [{barriers = false, name = "kiln_kernel_0", nodes = ["tanh_1"], params = 2 : i64, resources = [], shared = 0 : i64}]} {
  gpu.module @kiln_kernels {
    gpu.func @kiln_kernel_0(%in: memref<256xf32>, %out: memref<256xf32>) kernel attributes {known_block_size = array<i32: 256, 1, 1>} {
      %t = gpu.thread_id x
      %v = memref.load %in[%t] : memref<256xf32>
      %r = math.tanh %v : f32
      memref.store %r, %out[%t] : memref<256xf32>
      gpu.return
    }
  }
}
