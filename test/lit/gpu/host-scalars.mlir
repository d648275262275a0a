// RUN: kiln-opt %s -kiln-gpu-host-scalars -split-input-file | FileCheck %s

// An Unsqueeze over a symbolic dim: the shape buffer's extents are the
// values stored into it; the reshape becomes a reinterpret_cast with them
// and the buffer goes.
// CHECK-LABEL: func.func @unsqueeze
// CHECK-SAME:    (%[[SRC:.+]]: memref<?xi64>, %[[N:.+]]: index)
// CHECK-NOT:     memref.alloc
// CHECK-NOT:     memref.store
// CHECK:         %[[R:.+]] = memref.reinterpret_cast %[[SRC]] to offset: [0], sizes: [1, %[[N]]], strides: [%{{.+}}, 1] : memref<?xi64> to memref<1x?xi64>
// CHECK:         return %[[R]]
func.func @unsqueeze(%src: memref<?xi64>, %n: index) -> memref<1x?xi64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %shape = memref.alloc() : memref<2xindex>
  memref.store %c1, %shape[%c0] : memref<2xindex>
  memref.store %n, %shape[%c1] : memref<2xindex>
  %r = memref.reshape %src(%shape)
      : (memref<?xi64>, memref<2xindex>) -> memref<1x?xi64>
  return %r : memref<1x?xi64>
}

// -----

// i64 extents (an ONNX shape tensor) are cast to index.
// CHECK-LABEL: func.func @reshape_i64
// CHECK:         %[[A:.+]] = arith.index_cast %{{.+}} : i64 to index
// CHECK:         %[[B:.+]] = arith.index_cast %{{.+}} : i64 to index
// CHECK:         memref.reinterpret_cast %{{.+}} to offset: [0], sizes: [%[[A]], %[[B]]], strides: [%{{.+}}, 1]
func.func @reshape_i64(%src: memref<?xf32>, %a: i64, %b: i64) -> memref<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %shape = memref.alloc() : memref<2xi64>
  memref.store %a, %shape[%c0] : memref<2xi64>
  memref.store %b, %shape[%c1] : memref<2xi64>
  %r = memref.reshape %src(%shape)
      : (memref<?xf32>, memref<2xi64>) -> memref<?x?xf32>
  return %r : memref<?x?xf32>
}

// -----

// A shape buffer that is an argument (its extents unknown here) keeps the
// reshape.
// CHECK-LABEL: func.func @unknown_shape
// CHECK:         memref.reshape
func.func @unknown_shape(%src: memref<?xf32>, %shape: memref<2xindex>)
    -> memref<?x?xf32> {
  %r = memref.reshape %src(%shape)
      : (memref<?xf32>, memref<2xindex>) -> memref<?x?xf32>
  return %r : memref<?x?xf32>
}

// -----

// A run-time check over a value the host computed (a Slice's end against
// the extent of a registered buffer): the 0-d comparison runs on the host
// and the assert reads its result, with no buffer left.
// CHECK-LABEL: func.func @check
// CHECK-SAME:    (%[[END:.+]]: i64)
// CHECK-NOT:     memref.alloc
// CHECK:         %[[OK:.+]] = arith.cmpi sle, %[[END]], %{{.+}} : i64
// CHECK-NEXT:    cf.assert %[[OK]], "node '/Slice': end beyond 512"
// CHECK-NOT:     linalg.generic
func.func @check(%end: i64) {
  %c512 = arith.constant 512 : i64
  %e = memref.alloc() : memref<i64>
  memref.store %end, %e[] : memref<i64>
  %ok = memref.alloc() : memref<i1>
  linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>],
                  iterator_types = []}
      ins(%e : memref<i64>) outs(%ok : memref<i1>) {
  ^bb0(%in: i64, %out: i1):
    %le = arith.cmpi sle, %in, %c512 : i64
    linalg.yield %le : i1
  }
  %v = memref.load %ok[] : memref<i1>
  cf.assert %v, "node '/Slice': end beyond 512"
  return
}

// -----

// A buffer a loop also writes is left alone.
// CHECK-LABEL: func.func @escaped
// CHECK:         memref.store
// CHECK:         scf.for
// CHECK:         }
// CHECK-NEXT:    %[[V:.+]] = memref.load
// CHECK-NEXT:    return %[[V]]
func.func @escaped(%x: i64, %n: index) -> i64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = memref.alloc() : memref<i64>
  memref.store %x, %b[] : memref<i64>
  scf.for %i = %c0 to %n step %c1 {
    %y = memref.load %b[] : memref<i64>
    %z = arith.addi %y, %y : i64
    memref.store %z, %b[] : memref<i64>
  }
  %v = memref.load %b[] : memref<i64>
  return %v : i64
}

// -----

// A value the device computes (a load of device memory) stays in its
// buffer: the kernels that compute and read it keep it there.
// CHECK-LABEL: func.func @device_value
// CHECK:         %[[X:.+]] = memref.load %arg0
// CHECK:         memref.store %[[X]], %[[B:.+]][]
// CHECK:         linalg.generic
// CHECK:         memref.load
func.func @device_value(%x: memref<4xi64>) -> i1 {
  %c0 = arith.constant 0 : index
  %c512 = arith.constant 512 : i64
  %v = memref.load %x[%c0] : memref<4xi64>
  %b = memref.alloc() : memref<i64>
  memref.store %v, %b[] : memref<i64>
  %ok = memref.alloc() : memref<i1>
  linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>],
                  iterator_types = []}
      ins(%b : memref<i64>) outs(%ok : memref<i1>) {
  ^bb0(%in: i64, %out: i1):
    %le = arith.cmpi sle, %in, %c512 : i64
    linalg.yield %le : i1
  }
  %r = memref.load %ok[] : memref<i1>
  return %r : i1
}
