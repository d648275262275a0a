// RUN: kiln-opt %s -kiln-expand-dynamic-shapes | FileCheck %s

// [batch * seq, 64] -> [batch, seq, 64]: two run-time dims from one, written
// as a reinterpret_cast with row-major strides.
// CHECK-LABEL: func.func @split_rows
// CHECK-SAME:    (%[[A:.+]]: memref<?x64xf32>, %[[B:.+]]: index, %[[S:.+]]: index)
// CHECK:       %[[ROW:.+]] = arith.muli %{{.+}}, %[[S]] : index
// CHECK:       memref.reinterpret_cast %[[A]] to offset: [0], sizes: [%[[B]], %[[S]], 64], strides: [%[[ROW]], 64, 1] : memref<?x64xf32> to memref<?x?x64xf32>
// CHECK-NOT:   memref.expand_shape
func.func @split_rows(%a: memref<?x64xf32>, %b: index, %s: index) -> memref<?x?x64xf32> {
  %e = memref.expand_shape %a [[0, 1], [2]] output_shape [%b, %s, 64] : memref<?x64xf32> into memref<?x?x64xf32>
  return %e : memref<?x?x64xf32>
}

// One run-time dim per group: expand-strided-metadata handles it; unchanged.
// CHECK-LABEL: func.func @split_static
// CHECK:       memref.expand_shape %{{.+}} {{\[\[}}0], [1, 2]] output_shape
func.func @split_static(%a: memref<?x64xf32>, %b: index) -> memref<?x4x16xf32> {
  %e = memref.expand_shape %a [[0], [1, 2]] output_shape [%b, 4, 16] : memref<?x64xf32> into memref<?x4x16xf32>
  return %e : memref<?x4x16xf32>
}
