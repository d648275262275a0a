// RUN: kiln-opt %s -kiln-dynamic-inputs -split-input-file | FileCheck %s

// An entry argument with symbolic dims becomes its data pointer and its
// extents (host memory, `kiln.host`); the body reads the extents and
// rebuilds the memref with row-major strides. Static arguments are unchanged.
// CHECK-LABEL: func.func @main
// CHECK-SAME:    (%[[DATA:.+]]: memref<1xf32>, %[[DIMS:.+]]: memref<3xi64> {kiln.host}, %[[W:.+]]: memref<64xf32>)
// CHECK:       %[[B64:.+]] = memref.load %[[DIMS]][%{{.+}}] : memref<3xi64>
// CHECK:       %[[B:.+]] = arith.index_cast %[[B64]] : i64 to index
// CHECK:       %[[S64:.+]] = memref.load %[[DIMS]][%{{.+}}] : memref<3xi64>
// CHECK:       %[[S:.+]] = arith.index_cast %[[S64]] : i64 to index
// CHECK:       %[[ROW:.+]] = arith.muli %{{.+}}, %[[S]] : index
// CHECK:       %[[X:.+]] = memref.reinterpret_cast %[[DATA]] to offset: [0], sizes: [%[[B]], %[[S]], 64], strides: [%[[ROW]], 64, 1] : memref<1xf32> to memref<?x?x64xf32>
// CHECK:       memref.load %[[X]]
// CHECK:       memref.store %{{.+}}, %[[W]]
func.func @main(%x: memref<?x?x64xf32>, %w: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %v = memref.load %x[%c0, %c0, %c0] : memref<?x?x64xf32>
  memref.store %v, %w[%c0] : memref<64xf32>
  return
}

// -----

// A function without arguments is left alone.
// CHECK-LABEL: func.func @main()
func.func @main() {
  return
}

// -----

// Only the entry function is rewritten.
// CHECK-LABEL: func.func @helper
// CHECK-SAME:    (%{{.+}}: memref<?xf32>)
func.func @helper(%x: memref<?xf32>) {
  return
}
