// RUN: kiln-opt %s -kiln-copy-duplicate-results -allow-unregistered-dialect | FileCheck %s
// RUN: kiln-opt %s -kiln-copy-duplicate-results -allow-unregistered-dialect \
// RUN:   -buffer-results-to-out-params="hoist-static-allocs modify-public-functions" \
// RUN:   | FileCheck %s --check-prefix=OUT

// CHECK-LABEL: func.func @twice(
// CHECK:         %[[A:.+]] = memref.alloc() : memref<4xf32>
// CHECK:         %[[COPY:.+]] = memref.alloc() : memref<4xf32>
// CHECK:         memref.copy %[[A]], %[[COPY]]
// CHECK:         %[[COPY2:.+]] = memref.alloc() : memref<4xf32>
// CHECK:         memref.copy %[[A]], %[[COPY2]]
// CHECK:         return %[[A]], %[[COPY]], %[[COPY2]]
// CHECK-NOT:     memref.copy
// Each result becomes its own out-param, the first one written in place.
// OUT-LABEL: func.func @twice(
// OUT-SAME:    %[[O0:[a-z0-9]+]]: memref<4xf32>, %[[O1:[a-z0-9]+]]: memref<4xf32>, %[[O2:[a-z0-9]+]]: memref<4xf32>)
// OUT-NOT:     memref.alloc
// OUT:         "test.fill"(%[[O0]])
// OUT:         memref.copy %[[O0]], %[[O1]]
// OUT:         memref.copy %[[O0]], %[[O2]]
// OUT:         return{{$}}
func.func @twice() -> (memref<4xf32>, memref<4xf32>, memref<4xf32>) {
  %a = memref.alloc() : memref<4xf32>
  "test.fill"(%a) : (memref<4xf32>) -> ()
  return %a, %a, %a : memref<4xf32>, memref<4xf32>, memref<4xf32>
}

// Distinct results and non-memref values are left alone.
// CHECK-LABEL: func.func @distinct(
// CHECK-NOT:     memref.alloc
// CHECK:         return %arg0, %arg1, %arg2, %arg2 : memref<4xf32>, memref<4xf32>, f32, f32
func.func @distinct(%x: memref<4xf32>, %y: memref<4xf32>, %s: f32) -> (memref<4xf32>, memref<4xf32>, f32, f32) {
  return %x, %y, %s, %s : memref<4xf32>, memref<4xf32>, f32, f32
}
