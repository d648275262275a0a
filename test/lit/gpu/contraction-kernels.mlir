// RUN: kiln-opt %s --pass-pipeline='builtin.module(func.func(kiln-gpu-contraction-kernels))' -split-input-file | FileCheck %s

// A 100x200x300 matmul with a bias + ReLU consumer: one kernel of 5x2
// blocks of 16x16 threads staging A (transposed, padded rows) and B tiles
// in shared memory, 16 FMAs per K step per pair of 4-vectors, the bias and
// ReLU applied in the store; the generic is gone (the matmul and its fill
// are left dead for the cleanup).
// CHECK-LABEL: func.func @matmul_bias_relu(
// CHECK-SAME:    %[[A:.+]]: tensor<100x200xf32>, %[[B:.+]]: tensor<200x300xf32>, %[[BIAS:.+]]: tensor<300xf32>)
// CHECK-DAG:     %[[AB:.+]] = bufferization.to_buffer %[[A]] read_only : tensor<100x200xf32> to memref<100x200xf32>
// CHECK-DAG:     %[[BB:.+]] = bufferization.to_buffer %[[B]] read_only
// CHECK-DAG:     %[[BIASB:.+]] = bufferization.to_buffer %[[BIAS]] read_only
// CHECK:         %[[OUT:.+]] = memref.alloc() {alignment = 64 : i64} : memref<100x300xf32>
// CHECK:         gpu.launch blocks({{.*}}) in ({{.*}}) threads({{.*}}) in ({{.*}}) workgroup(%[[AS:.+]] : memref<16x65xf32, #gpu.address_space<workgroup>>, %[[BS:.+]] : memref<16x64xf32, #gpu.address_space<workgroup>>)
// CHECK:           scf.for %{{.+}} = %c0{{.*}} to %c200{{.*}} step %c16{{.*}} iter_args(
// CHECK:             memref.load %[[AB]]
// CHECK:             memref.store %{{.+}}, %[[AS]]
// CHECK:             memref.load %[[BB]]
// CHECK:             memref.store %{{.+}}, %[[BS]]
// CHECK:             gpu.barrier
// CHECK:             scf.for
// CHECK-COUNT-16:      math.fma
// CHECK:             gpu.barrier
// CHECK:           memref.load %[[BIASB]]
// CHECK:           arith.addf
// CHECK:           arith.maximumf
// CHECK:           memref.store %{{.+}}, %[[OUT]]
// CHECK:         %[[R:.+]] = bufferization.to_tensor %[[OUT]] restrict writable
// CHECK-NOT:     linalg.generic
// CHECK:         return %[[R]]
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
func.func @matmul_bias_relu(%a: tensor<100x200xf32>, %b: tensor<200x300xf32>, %bias: tensor<300xf32>) -> tensor<100x300xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<100x300xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<100x300xf32>) -> tensor<100x300xf32>
  %c = linalg.matmul ins(%a, %b : tensor<100x200xf32>, tensor<200x300xf32>) outs(%f : tensor<100x300xf32>) -> tensor<100x300xf32>
  %y = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c, %bias : tensor<100x300xf32>, tensor<300xf32>) outs(%e : tensor<100x300xf32>) {
  ^bb0(%x: f32, %bb: f32, %o: f32):
    %s = arith.addf %x, %bb : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<100x300xf32>
  return %y : tensor<100x300xf32>
}

// -----

// A batch matmul whose result has two uses: no epilogue, the batch is grid
// z, the result is stored as it is.
// CHECK-LABEL: func.func @batch_matmul(
// CHECK:         %[[SIX:.+]] = arith.constant 6 : index
// CHECK:         gpu.launch blocks({{.*}}) in (%{{.+}} = %{{.+}}, %{{.+}} = %{{.+}}, %{{.+}} = %[[SIX]])
// CHECK:         %[[R:.+]] = bufferization.to_tensor
// CHECK:         return %[[R]], %[[R]]
func.func @batch_matmul(%a: tensor<6x50x8xf32>, %b: tensor<6x8x50xf32>) -> (tensor<6x50x50xf32>, tensor<6x50x50xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<6x50x50xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<6x50x50xf32>) -> tensor<6x50x50xf32>
  %c = linalg.batch_matmul ins(%a, %b : tensor<6x50x8xf32>, tensor<6x8x50xf32>) outs(%f : tensor<6x50x50xf32>) -> tensor<6x50x50xf32>
  return %c, %c : tensor<6x50x50xf32>, tensor<6x50x50xf32>
}

// -----

// Integer matmuls keep the generic path.
// CHECK-LABEL: func.func @integer(
// CHECK-NOT:     gpu.launch
// CHECK:         linalg.matmul
func.func @integer(%a: tensor<4x4xi32>, %b: tensor<4x4xi32>, %c: tensor<4x4xi32>) -> tensor<4x4xi32> {
  %r = linalg.matmul ins(%a, %b : tensor<4x4xi32>, tensor<4x4xi32>) outs(%c : tensor<4x4xi32>) -> tensor<4x4xi32>
  return %r : tensor<4x4xi32>
}

// -----

// An NHWC convolution is an implicit GEMM: rows are the output pixels
// (n, oh, ow), columns the filters, the reduction runs over (kh, kw, c); the
// input is read through its strided window map (2 * oh + kh).
// CHECK-LABEL: func.func @conv_nhwc(
// CHECK:         %[[IN:.+]] = bufferization.to_buffer %arg0 read_only : tensor<1x9x9x8xf32> to memref<1x9x9x8xf32>
// CHECK:         gpu.launch
// CHECK:           scf.for %{{.+}} = %c0{{.*}} to %c72{{.*}} step %c16
// CHECK:             arith.muli %{{.+}}, %c2{{.*}} : index
// CHECK:             memref.load %[[IN]]
// CHECK:             gpu.barrier
func.func @conv_nhwc(%x: tensor<1x9x9x8xf32>, %w: tensor<3x3x8x16xf32>) -> tensor<1x4x4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4x4x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4x4x16xf32>) -> tensor<1x4x4x16xf32>
  %c = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%x, %w : tensor<1x9x9x8xf32>, tensor<3x3x8x16xf32>) outs(%f : tensor<1x4x4x16xf32>) -> tensor<1x4x4x16xf32>
  return %c : tensor<1x4x4x16xf32>
}

// -----

// Split K: 49x512 outputs are 8 tiles for a GPU of 100+ SMs, so K = 4608
// is cut into 16 slices of 288, one block per tile and slice (grid z);
// each block stores its partial product into a [16, batch, M, N]
// workspace, then one thread per output sums the 16 slices, adds the fill
// and applies the epilogue.
// CHECK-LABEL: func.func @split_k(
// CHECK:         %[[WS:.+]] = memref.alloc() {alignment = 64 : i64} : memref<16x1x49x512xf32>
// CHECK:         gpu.launch blocks(%{{.+}}, %{{.+}}, %[[BZ:.+]]) in (%{{.+}} = %c8{{.*}}, %{{.+}} = %c1{{.*}}, %{{.+}} = %c16{{.*}})
// CHECK:           %[[SLICE:.+]] = arith.remui %[[BZ]], %c16
// CHECK:           %[[BEGIN:.+]] = arith.muli %[[SLICE]], %c288
// CHECK:           %[[END:.+]] = arith.minui %{{.+}}, %c4608
// CHECK:           scf.for %{{.+}} = %[[BEGIN]] to %[[END]] step %c16
// CHECK:           memref.store %{{.+}}, %[[WS]][%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}] : memref<16x1x49x512xf32>
// CHECK:         gpu.launch blocks(%{{.+}}, %{{.+}}, %{{.+}}) in (%{{.+}} = %c98{{.*}}, {{.*}}) threads({{.*}}) in (%{{.+}} = %c256{{.*}}, {{.*}})
// CHECK-COUNT-16:  memref.load %[[WS]]
// CHECK:           arith.maximumf
// CHECK:           memref.store
func.func @split_k(%a: tensor<49x4608xf32>, %b: tensor<4608x512xf32>) -> tensor<49x512xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<49x512xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<49x512xf32>) -> tensor<49x512xf32>
  %c = linalg.matmul ins(%a, %b : tensor<49x4608xf32>, tensor<4608x512xf32>) outs(%f : tensor<49x512xf32>) -> tensor<49x512xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%c : tensor<49x512xf32>) outs(%e : tensor<49x512xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<49x512xf32>
  return %r : tensor<49x512xf32>
}

// -----

// Run-time rows (a Linear over a symbolic batch and sequence, M = B x S):
// the same tiled kernel, its grid's row tiles ceil(M / 64) counted at run
// time from the operand's extents, the rows guarded against M, the result
// allocated at the run's size; split K is not planned (how many tiles
// there are is known only at run time).
// CHECK-LABEL: func.func @linear_run_time_rows(
// CHECK-SAME:    %[[X:.+]]: tensor<?x?x64xf32>, %[[W:.+]]: tensor<64x128xf32>
// CHECK:         bufferization.to_buffer %[[X]] read_only : tensor<?x?x64xf32> to memref<?x?x64xf32>
// CHECK:         %[[B:.+]] = tensor.dim %[[X]], %c0
// CHECK:         %[[S:.+]] = tensor.dim %[[X]], %c1
// CHECK:         %[[BS:.+]] = arith.muli %{{.+}}, %[[B]]
// CHECK:         %[[M:.+]] = arith.muli %[[BS]], %[[S]]
// CHECK:         %[[OUT:.+]] = memref.alloc(%{{.+}}, %{{.+}}) {alignment = 64 : i64} : memref<?x?x128xf32>
// CHECK:         %[[TILES:.+]] = arith.ceildivui %[[M]], %c64
// CHECK:         gpu.launch blocks({{.*}}) in (%{{.+}} = %c2{{.*}}, %{{.+}} = %[[TILES]], %{{.+}} = %c1{{.*}}) threads
// CHECK:           arith.cmpi ult, %{{.+}}, %[[M]]
// CHECK:           memref.store %{{.+}}, %[[OUT]]
// CHECK-NOT:     gpu.launch
// CHECK:         return
func.func @linear_run_time_rows(%x: tensor<?x?x64xf32>, %w: tensor<64x128xf32>) -> tensor<?x?x128xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cst = arith.constant 0.0 : f32
  %b = tensor.dim %x, %c0 : tensor<?x?x64xf32>
  %s = tensor.dim %x, %c1 : tensor<?x?x64xf32>
  %e = tensor.empty(%b, %s) : tensor<?x?x128xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<?x?x128xf32>) -> tensor<?x?x128xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(b, s, n, k) -> (b, s, k)>, affine_map<(b, s, n, k) -> (k, n)>, affine_map<(b, s, n, k) -> (b, s, n)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%x, %w : tensor<?x?x64xf32>, tensor<64x128xf32>) outs(%f : tensor<?x?x128xf32>) {
  ^bb0(%a: f32, %bb: f32, %acc: f32):
    %p = arith.mulf %a, %bb : f32
    %sum = arith.addf %acc, %p : f32
    linalg.yield %sum : f32
  } -> tensor<?x?x128xf32>
  return %r : tensor<?x?x128xf32>
}

// -----

// A run-time K (or N, or batch) keeps the generic lowering.
// CHECK-LABEL: func.func @run_time_depth(
// CHECK-NOT:     gpu.launch
// CHECK:         linalg.matmul
func.func @run_time_depth(%a: tensor<32x?xf32>, %b: tensor<?x32xf32>) -> tensor<32x32xf32> {
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x32xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<32x32xf32>) -> tensor<32x32xf32>
  %r = linalg.matmul ins(%a, %b : tensor<32x?xf32>, tensor<?x32xf32>) outs(%f : tensor<32x32xf32>) -> tensor<32x32xf32>
  return %r : tensor<32x32xf32>
}
