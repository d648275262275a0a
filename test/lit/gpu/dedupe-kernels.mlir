// RUN: kiln-opt %s -kiln-gpu-dedupe-kernels | FileCheck %s

// kiln_kernel_0 and kiln_kernel_1 differ only in the byte offsets of the
// views they take of the arena and the weights: they become one kernel
// (the first), which takes the offsets as index arguments in walk order and
// runs both kernels' nodes; each launch passes its own. kiln_kernel_2 (a
// different op) has no twin and keeps its body and arguments; the two
// scalings differ in a constant that is not an offset, so they stay apart
// too. The kernels are numbered again in table order (2 -> 1, 3 -> 2, 4 ->
// 3) and their launches follow.
// CHECK-LABEL: func.func @main(
// CHECK-SAME:    %[[ARENA:[^:]+]]: memref<256xi8>, %[[W:[^:]+]]: memref<128xi8>
// CHECK:         %[[X0:.+]] = arith.constant 0 : index
// CHECK:         %[[Y0:.+]] = arith.constant 0 : index
// CHECK:         %[[Z0:.+]] = arith.constant 64 : index
// CHECK:         gpu.launch_func @kiln_kernels::@kiln_kernel_0 {{.*}} args(%[[ARENA]] : memref<256xi8>, %[[W]] : memref<128xi8>, %[[X0]] : index, %[[Y0]] : index, %[[Z0]] : index)
// CHECK:         %[[X1:.+]] = arith.constant 96 : index
// CHECK:         %[[Y1:.+]] = arith.constant 32 : index
// CHECK:         %[[Z1:.+]] = arith.constant 128 : index
// CHECK:         gpu.launch_func @kiln_kernels::@kiln_kernel_0 {{.*}} args(%[[ARENA]] : memref<256xi8>, %[[W]] : memref<128xi8>, %[[X1]] : index, %[[Y1]] : index, %[[Z1]] : index)
// CHECK:         gpu.launch_func @kiln_kernels::@kiln_kernel_1 {{.*}} args(%[[ARENA]] : memref<256xi8>)
// CHECK:         gpu.launch_func @kiln_kernels::@kiln_kernel_2 {{.*}} args(%[[ARENA]] : memref<256xi8>)
// CHECK:         gpu.launch_func @kiln_kernels::@kiln_kernel_3 {{.*}} args(%[[ARENA]] : memref<256xi8>)
// CHECK:       gpu.module @kiln_kernels {
// CHECK:         gpu.func @kiln_kernel_0(%[[A:.+]]: memref<256xi8>, %[[B:.+]]: memref<128xi8>, %[[S0:.+]]: index, %[[S1:.+]]: index, %[[S2:.+]]: index) kernel attributes {kiln.onnx_nodes = ["add_1", "add_3"]} {
// CHECK-NOT:       arith.constant {{[0-9]+}} : index
// CHECK:           memref.view %[[A]][%[[S0]]][] : memref<256xi8> to memref<8xf32>
// CHECK:           memref.view %[[B]][%[[S1]]][] : memref<128xi8> to memref<8xf32>
// CHECK:           memref.view %[[A]][%[[S2]]][] : memref<256xi8> to memref<8xf32>
// CHECK:           arith.addf
// CHECK:         gpu.func @kiln_kernel_1(%[[A1:[^:]+]]: memref<256xi8>) kernel attributes {kiln.onnx_nodes = ["mul_2"]} {
// CHECK:           %[[C:.+]] = arith.constant 32 : index
// CHECK:           memref.view %[[A1]][%[[C]]][] : memref<256xi8> to memref<8xf32>
// CHECK:           arith.mulf
// CHECK:         gpu.func @kiln_kernel_2({{.*}}) kernel attributes {kiln.onnx_nodes = ["scale_4"]} {
// CHECK:           arith.constant 2.000000e+00 : f32
// CHECK:         gpu.func @kiln_kernel_3({{.*}}) kernel attributes {kiln.onnx_nodes = ["scale_5"]} {
// CHECK:           arith.constant 3.000000e+00 : f32
// CHECK-NOT:     gpu.func
module attributes {gpu.container_module} {
  func.func @main(%arena: memref<256xi8>, %w: memref<128xi8>) {
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    gpu.launch_func @kiln_kernels::@kiln_kernel_0 blocks in (%c1, %c1, %c1) threads in (%c8, %c1, %c1) args(%arena : memref<256xi8>, %w : memref<128xi8>)
    gpu.launch_func @kiln_kernels::@kiln_kernel_1 blocks in (%c1, %c1, %c1) threads in (%c8, %c1, %c1) args(%arena : memref<256xi8>, %w : memref<128xi8>)
    gpu.launch_func @kiln_kernels::@kiln_kernel_2 blocks in (%c1, %c1, %c1) threads in (%c8, %c1, %c1) args(%arena : memref<256xi8>)
    gpu.launch_func @kiln_kernels::@kiln_kernel_3 blocks in (%c1, %c1, %c1) threads in (%c8, %c1, %c1) args(%arena : memref<256xi8>)
    gpu.launch_func @kiln_kernels::@kiln_kernel_4 blocks in (%c1, %c1, %c1) threads in (%c8, %c1, %c1) args(%arena : memref<256xi8>)
    return
  }
  gpu.module @kiln_kernels {
    gpu.func @kiln_kernel_0(%a: memref<256xi8>, %b: memref<128xi8>) kernel attributes {kiln.onnx_nodes = ["add_1"]} {
      %c0 = arith.constant 0 : index
      %c64 = arith.constant 64 : index
      %x = memref.view %a[%c0][] : memref<256xi8> to memref<8xf32>
      %y = memref.view %b[%c0][] : memref<128xi8> to memref<8xf32>
      %z = memref.view %a[%c64][] : memref<256xi8> to memref<8xf32>
      %t = gpu.thread_id x
      %u = memref.load %x[%t] : memref<8xf32>
      %v = memref.load %y[%t] : memref<8xf32>
      %s = arith.addf %u, %v : f32
      memref.store %s, %z[%t] : memref<8xf32>
      gpu.return
    }
    gpu.func @kiln_kernel_1(%a: memref<256xi8>, %b: memref<128xi8>) kernel attributes {kiln.onnx_nodes = ["add_3"]} {
      %c128 = arith.constant 128 : index
      %c96 = arith.constant 96 : index
      %c32 = arith.constant 32 : index
      %x = memref.view %a[%c96][] : memref<256xi8> to memref<8xf32>
      %y = memref.view %b[%c32][] : memref<128xi8> to memref<8xf32>
      %z = memref.view %a[%c128][] : memref<256xi8> to memref<8xf32>
      %t = gpu.thread_id x
      %u = memref.load %x[%t] : memref<8xf32>
      %v = memref.load %y[%t] : memref<8xf32>
      %s = arith.addf %u, %v : f32
      memref.store %s, %z[%t] : memref<8xf32>
      gpu.return
    }
    gpu.func @kiln_kernel_2(%a: memref<256xi8>) kernel attributes {kiln.onnx_nodes = ["mul_2"]} {
      %c32 = arith.constant 32 : index
      %x = memref.view %a[%c32][] : memref<256xi8> to memref<8xf32>
      %t = gpu.thread_id x
      %u = memref.load %x[%t] : memref<8xf32>
      %s = arith.mulf %u, %u : f32
      memref.store %s, %x[%t] : memref<8xf32>
      gpu.return
    }
    gpu.func @kiln_kernel_3(%a: memref<256xi8>) kernel attributes {kiln.onnx_nodes = ["scale_4"]} {
      %c0 = arith.constant 0 : index
      %two = arith.constant 2.0 : f32
      %x = memref.view %a[%c0][] : memref<256xi8> to memref<8xf32>
      %t = gpu.thread_id x
      %u = memref.load %x[%t] : memref<8xf32>
      %s = arith.mulf %u, %two : f32
      memref.store %s, %x[%t] : memref<8xf32>
      gpu.return
    }
    gpu.func @kiln_kernel_4(%a: memref<256xi8>) kernel attributes {kiln.onnx_nodes = ["scale_5"]} {
      %c64 = arith.constant 64 : index
      %three = arith.constant 3.0 : f32
      %x = memref.view %a[%c64][] : memref<256xi8> to memref<8xf32>
      %t = gpu.thread_id x
      %u = memref.load %x[%t] : memref<8xf32>
      %s = arith.mulf %u, %three : f32
      memref.store %s, %x[%t] : memref<8xf32>
      gpu.return
    }
  }
}
