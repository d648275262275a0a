// RUN: kiln-opt %s -kiln-dynamic-results -split-input-file | FileCheck %s

// A run-time shaped result becomes an i64 record {pointer, dim 0, dim 1}
// in host memory (`kiln.host`);
// the static result next to it is unchanged.
// CHECK-LABEL: func.func @main
// CHECK-SAME:    (%[[X:.+]]: memref<24xf32>, %[[N:.+]]: index) -> (memref<4xf32>, memref<3xi64> {kiln.host})
// CHECK:       %[[R:.+]] = memref.reinterpret_cast
// CHECK:       %[[REC:.+]] = memref.alloc() : memref<3xi64>
// CHECK:       %[[P:.+]] = memref.extract_aligned_pointer_as_index %[[R]] : memref<?x?xf32> -> index
// CHECK:       %[[P64:.+]] = arith.index_cast %[[P]] : index to i64
// CHECK:       memref.store %[[P64]], %[[REC]][%{{.+}}] : memref<3xi64>
// CHECK:       memref.dim %[[R]], %{{.+}} : memref<?x?xf32>
// CHECK:       memref.store
// CHECK:       memref.dim %[[R]], %{{.+}} : memref<?x?xf32>
// CHECK:       memref.store
// CHECK:       return %{{.+}}, %[[REC]] : memref<4xf32>, memref<3xi64>
func.func @main(%x: memref<24xf32>, %n: index) -> (memref<4xf32>, memref<?x?xf32>) {
  %s = memref.alloc() : memref<4xf32>
  %c4 = arith.constant 4 : index
  %r = memref.reinterpret_cast %x to offset: [0], sizes: [%n, %c4], strides: [%c4, 1] : memref<24xf32> to memref<?x?xf32>
  return %s, %r : memref<4xf32>, memref<?x?xf32>
}

// -----

// Only the entry function is rewritten.
// CHECK-LABEL: func.func @helper
// CHECK-SAME:    -> memref<?xf32>
func.func @helper(%n: index) -> memref<?xf32> {
  %b = memref.alloc(%n) : memref<?xf32>
  return %b : memref<?xf32>
}
