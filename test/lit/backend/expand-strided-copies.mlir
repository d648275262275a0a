// RUN: kiln-opt %s -kiln-expand-strided-copies | FileCheck %s

// The copy into the padded buffer's interior is strided: it becomes a
// linalg.copy (loops later) instead of a call to the MLIR runtime.
// CHECK-LABEL: func.func @pad_interior(
// CHECK-SAME:    %[[SRC:.+]]: memref<2x5xf32>, %[[DST:.+]]: memref<4x7xf32>)
// CHECK:         %[[SUB:.+]] = memref.subview %[[DST]]
// CHECK-NOT:     memref.copy
// CHECK:         linalg.copy ins(%[[SRC]] : memref<2x5xf32>) outs(%[[SUB]] : memref<2x5xf32, strided<[7, 1], offset: 8>>)
func.func @pad_interior(%src: memref<2x5xf32>, %dst: memref<4x7xf32>) {
  %sub = memref.subview %dst[1, 1] [2, 5] [1, 1] : memref<4x7xf32> to memref<2x5xf32, strided<[7, 1], offset: 8>>
  memref.copy %src, %sub : memref<2x5xf32> to memref<2x5xf32, strided<[7, 1], offset: 8>>
  return
}

// Contiguous copies stay memref.copy (a memcpy), even through a subview
// that selects whole rows.
// CHECK-LABEL: func.func @contiguous(
// CHECK:         memref.copy %{{.+}}, %{{.+}} : memref<4x7xf32> to memref<4x7xf32>
// CHECK:         memref.copy %{{.+}}, %{{.+}} : memref<2x7xf32> to memref<2x7xf32, strided<[7, 1], offset: 7>>
// CHECK-NOT:     linalg.copy
func.func @contiguous(%a: memref<4x7xf32>, %b: memref<4x7xf32>, %c: memref<2x7xf32>) {
  memref.copy %a, %b : memref<4x7xf32> to memref<4x7xf32>
  %rows = memref.subview %b[1, 0] [2, 7] [1, 1] : memref<4x7xf32> to memref<2x7xf32, strided<[7, 1], offset: 7>>
  memref.copy %c, %rows : memref<2x7xf32> to memref<2x7xf32, strided<[7, 1], offset: 7>>
  return
}

// A strided view copied onto itself (a slice written in place) is dropped.
// CHECK-LABEL: func.func @self_copy(
// CHECK-NOT:     memref.copy
// CHECK-NOT:     linalg.copy
// CHECK:         return
func.func @self_copy(%b: memref<4x7xf32>) {
  %cols = memref.subview %b[0, 2] [4, 3] [1, 1] : memref<4x7xf32> to memref<4x3xf32, strided<[7, 1], offset: 2>>
  memref.copy %cols, %cols : memref<4x3xf32, strided<[7, 1], offset: 2>> to memref<4x3xf32, strided<[7, 1], offset: 2>>
  return
}
