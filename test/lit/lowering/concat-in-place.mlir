// RUN: kiln-opt %s -split-input-file -kiln-concat-in-place | FileCheck %s
// RUN: env KILN_LOGS=+fusion kiln-opt --mlir-disable-threading %s -split-input-file -kiln-concat-in-place -o /dev/null 2>&1 | FileCheck %s --check-prefix=LOG
// RUN: kiln-opt %s -split-input-file -kiln-concat-in-place -eliminate-empty-tensors -one-shot-bufferize="bufferize-function-boundaries" -cse -canonicalize | FileCheck %s --check-prefix=BUF

// Two matmuls concatenated along columns: each is computed straight into its
// slice of the result, in the order of the inserts.
// LOG: [kiln:fusion] concat 'cat': 'mm0' writes its slice in place
// LOG: [kiln:fusion] concat 'cat': 'mm1' writes its slice in place
// CHECK-LABEL: func.func @two_matmuls
// CHECK: %[[R:.+]] = tensor.empty() : tensor<4x7xf32>
// CHECK: %[[S0:.+]] = tensor.extract_slice %[[R]][0, 0] [4, 3] [1, 1]
// CHECK: %[[F0:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%[[S0]] : tensor<4x3xf32>)
// CHECK: %[[M0:.+]] = linalg.matmul ins(%arg0, %arg1 : {{.+}}) outs(%[[F0]] : tensor<4x3xf32>)
// CHECK: %[[I0:.+]] = tensor.insert_slice %[[M0]] into %[[R]][0, 0] [4, 3] [1, 1]
// CHECK: %[[S1:.+]] = tensor.extract_slice %[[I0]][0, 3] [4, 4] [1, 1]
// CHECK: %[[F1:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%[[S1]] : tensor<4x4xf32>)
// CHECK: %[[M1:.+]] = linalg.matmul ins(%arg0, %arg2 : {{.+}}) outs(%[[F1]] : tensor<4x4xf32>)
// CHECK: %[[I1:.+]] = tensor.insert_slice %[[M1]] into %[[I0]][0, 3] [4, 4] [1, 1]
// CHECK: return %[[I1]]
// After bufferization each matmul writes a subview of the one result
// buffer: a single allocation and no copy (one-shot leaves a self-copy per
// matching insert_slice, which CSE + canonicalize erase, as later in the
// CPU pipeline).
// BUF-LABEL: func.func @two_matmuls
// BUF-COUNT-1: memref.alloc
// BUF-NOT: memref.copy
// BUF: return
func.func @two_matmuls(%x: tensor<4x5xf32>, %w0: tensor<5x3xf32>, %w1: tensor<5x4xf32>) -> tensor<4x7xf32> {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<4x3xf32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<4x3xf32>) -> tensor<4x3xf32>
  %m0 = linalg.matmul ins(%x, %w0 : tensor<4x5xf32>, tensor<5x3xf32>) outs(%f0 : tensor<4x3xf32>) -> tensor<4x3xf32> loc(fused<"MatMul">["mm0"])
  %e1 = tensor.empty() : tensor<4x4xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %m1 = linalg.matmul ins(%x, %w1 : tensor<4x5xf32>, tensor<5x4xf32>) outs(%f1 : tensor<4x4xf32>) -> tensor<4x4xf32> loc(fused<"MatMul">["mm1"])
  %r = tensor.empty() : tensor<4x7xf32>
  %i0 = tensor.insert_slice %m0 into %r[0, 0] [4, 3] [1, 1] : tensor<4x3xf32> into tensor<4x7xf32> loc(fused<"Concat">["cat"])
  %i1 = tensor.insert_slice %m1 into %i0[0, 3] [4, 4] [1, 1] : tensor<4x4xf32> into tensor<4x7xf32> loc(fused<"Concat">["cat"])
  return %i1 : tensor<4x7xf32>
}

// -----

// A concat of concats: the inner concat's whole chain writes into its slice
// of the outer result.
// LOG: concat 'outer': 'inner' writes its slice in place
// CHECK-LABEL: func.func @nested
// CHECK: %[[R:.+]] = tensor.empty() : tensor<2x6xf32>
// CHECK: %[[S:.+]] = tensor.extract_slice %[[R]][0, 0] [2, 4] [1, 1]
// CHECK: %[[SA:.+]] = tensor.extract_slice %[[S]][0, 0] [2, 2] [1, 1]
// CHECK: linalg.generic {{.+}} outs(%[[SA]] : tensor<2x2xf32>)
// CHECK: %[[IA:.+]] = tensor.insert_slice %{{.+}} into %[[S]][0, 0] [2, 2] [1, 1]
// CHECK: %[[SB:.+]] = tensor.extract_slice %[[IA]][0, 2] [2, 2] [1, 1]
// CHECK: linalg.generic {{.+}} outs(%[[SB]] : tensor<2x2xf32>)
// CHECK: %[[IB:.+]] = tensor.insert_slice %{{.+}} into %[[IA]][0, 2] [2, 2] [1, 1]
// CHECK: %[[O0:.+]] = tensor.insert_slice %[[IB]] into %[[R]][0, 0] [2, 4] [1, 1]
// CHECK: %[[SC:.+]] = tensor.extract_slice %[[O0]][0, 4] [2, 2] [1, 1]
// CHECK: linalg.generic {{.+}} outs(%[[SC]] : tensor<2x2xf32>)
// CHECK: tensor.insert_slice %{{.+}} into %[[O0]][0, 4] [2, 2] [1, 1]
// BUF-LABEL: func.func @nested
// BUF-COUNT-1: memref.alloc
// BUF-NOT: memref.copy
// BUF: return
#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @nested(%x: tensor<2x2xf32>) -> tensor<2x6xf32> {
  %ea = tensor.empty() : tensor<2x2xf32>
  %a = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<2x2xf32>) outs(%ea : tensor<2x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %in : f32
    linalg.yield %0 : f32
  } -> tensor<2x2xf32>
  %eb = tensor.empty() : tensor<2x2xf32>
  %b = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<2x2xf32>) outs(%eb : tensor<2x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.mulf %in, %in : f32
    linalg.yield %0 : f32
  } -> tensor<2x2xf32>
  %ec = tensor.empty() : tensor<2x2xf32>
  %c = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<2x2xf32>) outs(%ec : tensor<2x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.subf %in, %in : f32
    linalg.yield %0 : f32
  } -> tensor<2x2xf32>
  %inner = tensor.empty() : tensor<2x4xf32>
  %ia = tensor.insert_slice %a into %inner[0, 0] [2, 2] [1, 1] : tensor<2x2xf32> into tensor<2x4xf32> loc(fused<"Concat">["inner"])
  %ib = tensor.insert_slice %b into %ia[0, 2] [2, 2] [1, 1] : tensor<2x2xf32> into tensor<2x4xf32> loc(fused<"Concat">["inner"])
  %outer = tensor.empty() : tensor<2x6xf32>
  %o0 = tensor.insert_slice %ib into %outer[0, 0] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<2x6xf32> loc(fused<"Concat">["outer"])
  %o1 = tensor.insert_slice %c into %o0[0, 4] [2, 2] [1, 1] : tensor<2x2xf32> into tensor<2x6xf32> loc(fused<"Concat">["outer"])
  return %o1 : tensor<2x6xf32>
}

// -----

// Negative: a function argument cannot be computed in place, a producer with
// another user keeps its own buffer, and an insert that is not an ONNX
// Concat is left alone.
// LOG: [kiln:fusion:debug] concat 'cat': input from 'a function argument' is copied
// LOG: [kiln:fusion:debug] concat 'cat': input from 'g' is copied
// LOG: [kiln:fusion:debug] concat 'cat': input from 'a function argument' is copied
// LOG-NOT: 'pad'
// CHECK-LABEL: func.func @copies
// CHECK-NOT: tensor.extract_slice
// CHECK: return
#map1 = affine_map<(d0, d1) -> (d0, d1)>
func.func @copies(%x: tensor<2x2xf32>) -> (tensor<2x6xf32>, tensor<2x2xf32>, tensor<2x4xf32>) {
  %e = tensor.empty() : tensor<2x2xf32>
  %g = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<2x2xf32>) outs(%e : tensor<2x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %in : f32
    linalg.yield %0 : f32
  } -> tensor<2x2xf32> loc(fused<"Add">["g"])
  %r = tensor.empty() : tensor<2x6xf32>
  %i0 = tensor.insert_slice %x into %r[0, 0] [2, 2] [1, 1] : tensor<2x2xf32> into tensor<2x6xf32> loc(fused<"Concat">["cat"])
  %i1 = tensor.insert_slice %g into %i0[0, 2] [2, 2] [1, 1] : tensor<2x2xf32> into tensor<2x6xf32> loc(fused<"Concat">["cat"])
  %i2 = tensor.insert_slice %x into %i1[0, 4] [2, 2] [1, 1] : tensor<2x2xf32> into tensor<2x6xf32> loc(fused<"Concat">["cat"])
  %eh = tensor.empty() : tensor<2x2xf32>
  %h = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<2x2xf32>) outs(%eh : tensor<2x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.mulf %in, %in : f32
    linalg.yield %0 : f32
  } -> tensor<2x2xf32>
  %p = tensor.empty() : tensor<2x4xf32>
  %j = tensor.insert_slice %h into %p[0, 0] [2, 2] [1, 1] : tensor<2x2xf32> into tensor<2x4xf32> loc(fused<"Pad">["pad"])
  return %i2, %g, %j : tensor<2x6xf32>, tensor<2x2xf32>, tensor<2x4xf32>
}

// -----

// A 3-D matmul is a 2-D one between reshapes: it writes a collapsed view of
// its slice.
// CHECK-LABEL: func.func @reshaped
// CHECK: %[[R:.+]] = tensor.empty() : tensor<1x4x7xf32>
// CHECK: %[[S:.+]] = tensor.extract_slice %[[R]][0, 0, 0] [1, 4, 3] [1, 1, 1]
// CHECK: %[[C:.+]] = tensor.collapse_shape %[[S]] {{\[}}[0, 1], [2]] : tensor<1x4x3xf32> into tensor<4x3xf32>
// CHECK: %[[F:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%[[C]] : tensor<4x3xf32>)
// CHECK: linalg.matmul {{.+}} outs(%[[F]] : tensor<4x3xf32>)
// Only the function argument is copied.
// BUF-LABEL: func.func @reshaped
// BUF-COUNT-1: memref.alloc
// BUF: %[[V:.+]] = memref.collapse_shape
// BUF: linalg.matmul {{.+}} outs(%[[V]] :
// BUF: memref.copy %arg2
// BUF-NOT: memref.copy
// BUF: return
func.func @reshaped(%x: tensor<4x5xf32>, %w0: tensor<5x3xf32>, %y: tensor<1x4x4xf32>) -> tensor<1x4x7xf32> {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<4x3xf32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<4x3xf32>) -> tensor<4x3xf32>
  %m0 = linalg.matmul ins(%x, %w0 : tensor<4x5xf32>, tensor<5x3xf32>) outs(%f0 : tensor<4x3xf32>) -> tensor<4x3xf32>
  %m0e = tensor.expand_shape %m0 [[0, 1], [2]] output_shape [1, 4, 3] : tensor<4x3xf32> into tensor<1x4x3xf32>
  %r = tensor.empty() : tensor<1x4x7xf32>
  %i0 = tensor.insert_slice %m0e into %r[0, 0, 0] [1, 4, 3] [1, 1, 1] : tensor<1x4x3xf32> into tensor<1x4x7xf32> loc(fused<"Concat">["cat"])
  %i1 = tensor.insert_slice %y into %i0[0, 0, 3] [1, 4, 4] [1, 1, 1] : tensor<1x4x4xf32> into tensor<1x4x7xf32> loc(fused<"Concat">["cat"])
  return %i1 : tensor<1x4x7xf32>
}
