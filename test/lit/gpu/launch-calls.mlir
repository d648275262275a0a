// RUN: kiln-opt %s -kiln-gpu-launch-calls | FileCheck %s

// Each launch becomes a call of the runtime's launch with the kernel's
// index in @kiln_kernels, the grid and block as i32 and one 64-bit slot per
// argument (a buffer's address, an index, a float's bits). The entry gets
// the runtime argument; the kernel table records each kernel's ONNX nodes
// and parameter count.
// CHECK:       module attributes {{{.*}}kiln.gpu.kernels = [{barriers = false, block = array<i64: 0, 0, 0>, grid = array<i64: 0, 0, 0>, name = "kiln_kernel_0", nodes = ["relu_1"], params = 1 : i64, resources = [], shared = 0 : i64}, {barriers = false, block = array<i64: 0, 0, 0>, grid = array<i64: 0, 0, 0>, name = "kiln_kernel_1", nodes = [], params = 3 : i64, resources = [], shared = 0 : i64}]
// CHECK-LABEL: func.func @main(
// CHECK-SAME:    %[[X:[a-z0-9]+]]: memref<8xf32>, %[[RUNTIME:[a-z0-9]+]]: memref<0xi8> {kiln.runtime})
// CHECK:         %[[SLOTS:.+]] = memref.alloca() : memref<1xi64>
// CHECK:         %[[P:.+]] = memref.extract_aligned_pointer_as_index %[[X]]
// CHECK:         %[[P64:.+]] = arith.index_castui %[[P]] : index to i64
// CHECK:         memref.store %[[P64]], %[[SLOTS]][%{{.+}}] : memref<1xi64>
// CHECK:         %[[K0:.+]] = arith.constant 0 : i32
// CHECK:         %[[ADDR:.+]] = llvm.inttoptr %{{.+}} : i64 to !llvm.ptr
// CHECK:         call @__kiln_gpu_launch(%[[RUNTIME]], %[[K0]], %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[ADDR]]) : (memref<0xi8>, i32, i32, i32, i32, i32, i32, i32, i32, !llvm.ptr) -> i32
// CHECK:         memref.alloca() : memref<3xi64>
// CHECK:         arith.bitcast %{{.+}} : f32 to i32
// CHECK:         arith.extui %{{.+}} : i32 to i64
// CHECK:         arith.constant 1 : i32
// CHECK:         call @__kiln_gpu_launch(
// CHECK-NOT:     gpu.launch_func
// CHECK:       gpu.module @kiln_kernels
// CHECK:       func.func private @__kiln_gpu_launch(memref<0xi8>, i32, i32, i32, i32, i32, i32, i32, i32, !llvm.ptr) -> i32
module attributes {gpu.container_module} {
  func.func @main(%x: memref<8xf32>) {
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %scale = arith.constant 0.5 : f32
    gpu.launch_func @kiln_kernels::@kiln_kernel_0 blocks in (%c1, %c1, %c1) threads in (%c8, %c1, %c1) args(%x : memref<8xf32>)
    gpu.launch_func @kiln_kernels::@kiln_kernel_1 blocks in (%c1, %c1, %c1) threads in (%c8, %c1, %c1) args(%x : memref<8xf32>, %c8 : index, %scale : f32)
    return
  }
  gpu.module @kiln_kernels {
    gpu.func @kiln_kernel_0(%x: memref<8xf32>) kernel attributes {kiln.onnx_nodes = ["relu_1"]} {
      gpu.return
    }
    gpu.func @kiln_kernel_1(%x: memref<8xf32>, %n: index, %s: f32) kernel {
      gpu.return
    }
  }
}
