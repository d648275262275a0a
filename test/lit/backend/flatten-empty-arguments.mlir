// RUN: kiln-opt %s -kiln-flatten-empty-arguments | FileCheck %s

// A zero-element buffer with several dims becomes memref<0xT>; its uses read
// a zero-byte alloca of the old type. Non-empty and 1-D empty buffers stay.
// CHECK-LABEL: func.func @main(
// CHECK-SAME:    %[[X:.+]]: memref<20x10x5xf32>, %[[Y:.+]]: memref<0xf32>, %[[Z:.+]]: memref<0xi8>)
// CHECK:         %[[STAND:.+]] = memref.alloca() : memref<20x0x5xf32>
// CHECK:         %[[SRC:.+]] = memref.subview %[[X]][0, 0, 0] [20, 0, 5] [1, 1, 1]
// CHECK:         memref.copy %[[SRC]], %[[STAND]]
// CHECK-NOT:     memref<20x0x5xf32> {
func.func @main(%x: memref<20x10x5xf32>, %y: memref<20x0x5xf32>, %z: memref<0xi8>) {
  %s = memref.subview %x[0, 0, 0] [20, 0, 5] [1, 1, 1] : memref<20x10x5xf32> to memref<20x0x5xf32, strided<[50, 5, 1]>>
  memref.copy %s, %y : memref<20x0x5xf32, strided<[50, 5, 1]>> to memref<20x0x5xf32>
  return
}

// Other functions are left alone.
// CHECK-LABEL: func.func private @helper(%{{.+}}: memref<2x0xf32>)
func.func private @helper(%a: memref<2x0xf32>) {
  return
}
