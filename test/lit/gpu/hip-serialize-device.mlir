// REQUIRES: rocm
// RUN: env KILN_LOGS=output_code kiln-opt %s -kiln-hip-serialize="archs=gfx942" -o /dev/null 2>&1 | FileCheck %s

// What ROCDL alone gets wrong on the device: a run-time check (cf.assert)
// becomes a printf of its message through the HIP runtime's hostcall
// buffer and a trap, not a call of the host's abort; math.acos becomes
// ROCm's ocml code rather than an LLVM intrinsic the AMDGPU backend cannot
// select ("no libcall available for facos"). KILN_LOGS=output_code prints
// the AMDGCN assembly per arch.
// CHECK:      // AMDGCN for gfx942
// CHECK:      kiln_kernel_0:
// CHECK:        s_trap 2
// CHECK:        .value_kind: hidden_hostcall_buffer
module attributes {gpu.container_module, kiln.gpu.kernels = [{barriers = false, name = "kiln_kernel_0", nodes = ["acos_1"], params = 2 : i64, resources = [], shared = 0 : i64}]} {
  gpu.module @kiln_kernels {
    gpu.func @kiln_kernel_0(%in: memref<256xf32>, %out: memref<256xf32>) kernel attributes {known_block_size = array<i32: 256, 1, 1>} {
      %t = gpu.thread_id x
      %v = memref.load %in[%t] : memref<256xf32>
      %zero = arith.constant 0.0 : f32
      %ok = arith.cmpf oge, %v, %zero : f32
      cf.assert %ok, "node 'acos_1': Acos: 100% of inputs must be >= 0"
      %r = math.acos %v : f32
      memref.store %r, %out[%t] : memref<256xf32>
      gpu.return
    }
  }
}
