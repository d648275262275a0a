// RUN: kiln-opt %s -kiln-mark-inputs-readonly -split-input-file | FileCheck %s
// RUN: kiln-opt %s -kiln-mark-inputs-readonly -one-shot-bufferize="bufferize-function-boundaries" \
// RUN:   -split-input-file | FileCheck %s --check-prefix=BUF

// CHECK-LABEL: func.func @main(
// CHECK-SAME:    %{{.+}}: tensor<4xf32> {bufferization.writable = false}
// CHECK-SAME:    %{{.+}}: index)
// An in-place update of the input must become a copy.
// BUF-LABEL: func.func @main(
// BUF:         memref.alloc
// BUF:         memref.copy
// BUF:         memref.store
func.func @main(%x: tensor<4xf32>, %i: index) -> tensor<4xf32> {
  %c = arith.constant 1.0 : f32
  %0 = tensor.insert %c into %x[%i] : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Other functions are not entries; they keep their default.
// CHECK-LABEL: func.func @helper(
// CHECK-SAME:    %{{.+}}: tensor<4xf32>) -> tensor<4xf32>
func.func @helper(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
func.func @main() {
  return
}
