// RUN: kiln-opt %s -kiln-gpu-outline-kernels | FileCheck %s

// Two launches become kiln_kernel_0 and kiln_kernel_1 of one gpu.module,
// in program order. The view and the constants each launch reads are cloned
// into it, so the kernels take only the entry's buffers; a splat constant
// global a kernel reads is copied into the device module. Each kernel lists
// the ONNX nodes of its ops.
// CHECK:       module attributes {gpu.container_module}
// CHECK-LABEL: func.func @main(
// CHECK-SAME:    %[[IN:.+]]: memref<8xf32>, %[[OUT:.+]]: memref<8xf32>, %[[ARENA:.+]]: memref<64xi8>)
// CHECK:         gpu.launch_func @kiln_kernels::@kiln_kernel_0 blocks in ({{.*}}) threads in ({{.*}}) args(%[[ARENA]] : memref<64xi8>, %[[IN]] : memref<8xf32>)
// CHECK:         gpu.launch_func @kiln_kernels::@kiln_kernel_1 blocks in ({{.*}}) threads in ({{.*}}) args(%[[ARENA]] : memref<64xi8>, %[[OUT]] : memref<8xf32>)
// CHECK:       gpu.module @kiln_kernels {
// CHECK:         memref.global "private" constant @ones : memref<8xf32> = dense<1.000000e+00>
// CHECK:         gpu.func @kiln_kernel_0(%{{.+}}: memref<64xi8>, %{{.+}}: memref<8xf32>) kernel attributes {{{.*}}kiln.onnx_nodes = ["exp_1"]{{.*}}} {
// CHECK:           memref.view
// CHECK:           math.exp
// CHECK:         gpu.func @kiln_kernel_1(%{{.+}}: memref<64xi8>, %{{.+}}: memref<8xf32>) kernel attributes {{{.*}}kiln.onnx_nodes = ["add_2", "mul_3"]{{.*}}} {
// CHECK:           memref.get_global @ones
memref.global "private" constant @ones : memref<8xf32> = dense<1.0>
func.func @main(%in: memref<8xf32>, %out: memref<8xf32>, %arena: memref<64xi8>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %tmp = memref.view %arena[%c0][] : memref<64xi8> to memref<8xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c8, %sy = %c1, %sz = %c1) {
    %v = memref.load %in[%tx] : memref<8xf32>
    %e = math.exp %v : f32 loc(fused<"Exp">["exp_1"])
    memref.store %e, %tmp[%tx] : memref<8xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c8, %sy = %c1, %sz = %c1) {
    %ones = memref.get_global @ones : memref<8xf32>
    %v = memref.load %tmp[%tx] : memref<8xf32>
    %o = memref.load %ones[%tx] : memref<8xf32>
    %s = arith.addf %v, %o : f32 loc(fused<"Add">["add_2"])
    %m = arith.mulf %s, %s : f32 loc(fused<"Mul">["mul_3"])
    memref.store %m, %out[%tx] : memref<8xf32>
    gpu.terminator
  }
  return
}
