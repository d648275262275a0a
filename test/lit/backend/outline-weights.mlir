// RUN: kiln-opt %s -kiln-outline-weights -split-input-file -allow-unregistered-dialect \
// RUN:   | FileCheck %s

// Non-splat constants, dense and dense_resource, are laid out at 64-byte
// aligned offsets (their values kept as they are, nothing copied);
// get_global becomes a view of the new weights argument. Bytes: w0 (8 x f32
// = 32) at 0, pad to 64, b (3 x i64 = 24) at 64, mask (4 x i1, one byte
// each) at 128; total rounded up to 192.
// CHECK: module attributes {kiln.weights = {offsets = array<i64: 0, 64, 128>, size = 192 : i64, values = [dense_resource<w0> : tensor<2x4xf32>, dense<[7, -1, 3]> : tensor<3xi64>, dense<[true, false, true, true]> : tensor<4xi1>]}}
// CHECK-NOT:   memref.global "private" constant @w0
// CHECK-NOT:   memref.global "private" constant @b
// CHECK-NOT:   memref.global "private" constant @mask
// CHECK:       memref.global "private" constant @splat : memref<4xf32> = dense<1.000000e+00>
// CHECK-LABEL: func.func @main(
// CHECK-SAME:    %[[OUT:[a-z0-9_]+]]: memref<4xf32>, %[[W:[a-z0-9_]+]]: memref<192xi8> {kiln.weights})
// CHECK:       %[[C0:.+]] = arith.constant 0 : index
// CHECK:       memref.view %[[W]][%[[C0]]][] : memref<192xi8> to memref<2x4xf32>
// CHECK:       %[[C64:.+]] = arith.constant 64 : index
// CHECK:       memref.view %[[W]][%[[C64]]][] : memref<192xi8> to memref<3xi64>
// CHECK:       %[[C128:.+]] = arith.constant 128 : index
// CHECK:       memref.view %[[W]][%[[C128]]][] : memref<192xi8> to memref<4xi1>
// CHECK:       memref.get_global @splat
// The resource's bytes stay where they were, for the artifact writer.
// CHECK: w0: "0x040000000000803F0000004000004040000080400000A0400000C0400000E04000000041"
memref.global "private" constant @w0 : memref<2x4xf32> = dense_resource<w0>
memref.global "private" constant @b : memref<3xi64> = dense<[7, -1, 3]>
memref.global "private" constant @mask : memref<4xi1> = dense<[true, false, true, true]>
memref.global "private" constant @splat : memref<4xf32> = dense<1.0>
func.func @main(%out: memref<4xf32>) {
  %0 = memref.get_global @w0 : memref<2x4xf32>
  %1 = memref.get_global @b : memref<3xi64>
  %2 = memref.get_global @mask : memref<4xi1>
  %3 = memref.get_global @splat : memref<4xf32>
  "test.use"(%0, %1, %2, %3) : (memref<2x4xf32>, memref<3xi64>, memref<4xi1>, memref<4xf32>) -> ()
  return
}
{-#
  dialect_resources: {
    builtin: {
      w0: "0x040000000000803F0000004000004040000080400000A0400000C0400000E04000000041"
    }
  }
#-}

// -----

// Negative cases: globals that are not constant, are used outside @main or
// are splats stay. With nothing to outline the argument is empty and no blob
// is attached.
// CHECK-NOT: kiln.weights =
// CHECK:       memref.global "private" @state : memref<2xf32> = dense<[1.000000e+00, 2.000000e+00]>
// CHECK:       memref.global "private" constant @shared : memref<2xf32> = dense<[3.000000e+00, 4.000000e+00]>
// CHECK-LABEL: func.func @main(
// CHECK-SAME:    %{{.+}}: memref<0xi8> {kiln.weights})
// CHECK-NOT:   memref.view
// CHECK-LABEL: func.func private @helper(
// CHECK:         memref.get_global @shared
memref.global "private" @state : memref<2xf32> = dense<[1.0, 2.0]>
memref.global "private" constant @shared : memref<2xf32> = dense<[3.0, 4.0]>
func.func @main() {
  %0 = memref.get_global @state : memref<2xf32>
  %1 = memref.get_global @shared : memref<2xf32>
  "test.use"(%0, %1) : (memref<2xf32>, memref<2xf32>) -> ()
  return
}
func.func private @helper() {
  %0 = memref.get_global @shared : memref<2xf32>
  "test.use"(%0) : (memref<2xf32>) -> ()
  return
}
