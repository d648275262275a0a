// RUN: kiln-opt %s -kiln-outline-parallel-loops -split-input-file -allow-unregistered-dialect | FileCheck %s

// A big loop: the leading dimension (64 items) is distributed, the other
// stays an inner scf.parallel. Views are rebuilt inside the body.
// CHECK-LABEL: func.func private @__kiln_parallel_body_0(
// CHECK-SAME:    %[[BEGIN:[a-z0-9]+]]: index, %[[END:[a-z0-9]+]]: index, %[[IN:[a-z0-9]+]]: memref<64x512xf32>, %[[ARENA:[a-z0-9]+]]: memref<131072xi8>)
// CHECK:         %[[VIEW:.+]] = memref.view %[[ARENA]]
// CHECK:         scf.for %[[I:.+]] = %[[BEGIN]] to %[[END]]
// CHECK:           %[[ROW:.+]] = arith.remui %[[I]], %{{.+}} : index
// CHECK:           scf.parallel (%[[J:.+]]) =
// CHECK:             memref.load %[[IN]][%{{.+}}, %[[J]]]
// CHECK:             memref.store %{{.+}}, %[[VIEW]][%{{.+}}, %[[J]]]
// CHECK:         return
// CHECK:       func.func private @__kiln_parallel_for_0(index, memref<0xi8>, memref<64x512xf32>, memref<131072xi8>)
// CHECK-LABEL: func.func @main(
// CHECK-SAME:    %[[RUNTIME:[a-z0-9]+]]: memref<0xi8> {kiln.runtime})
// CHECK-NOT:     scf.parallel
// CHECK:         memref.view
// CHECK:         %[[N:.+]] = arith.constant 64 : index
// CHECK-NEXT:    call @__kiln_parallel_for_0(%[[N]], %[[RUNTIME]], %arg0, %arg1)
func.func @main(%in: memref<64x512xf32>, %arena: memref<131072xi8>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c512 = arith.constant 512 : index
  %view = memref.view %arena[%c0][] : memref<131072xi8> to memref<64x512xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%c64, %c512) step (%c1, %c1) {
    %v = memref.load %in[%i, %j] : memref<64x512xf32>
    %d = arith.addf %v, %v : f32
    memref.store %d, %view[%i, %j] : memref<64x512xf32>
  }
  return
}

// -----

// Small loops, loops using a value computed at run time outside them, and
// loops nested in other loops stay in @main; the runtime argument is still
// added.
// CHECK-NOT:   __kiln_parallel
// CHECK-LABEL: func.func @main(
// CHECK-SAME:    %{{.+}}: memref<0xi8> {kiln.runtime})
// CHECK-COUNT-3: scf.parallel
func.func @main(%in: memref<4x4xf32>, %big: memref<256x256xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c256 = arith.constant 256 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c4) step (%c1, %c1) {
    %v = memref.load %in[%i, %j] : memref<4x4xf32>
    memref.store %v, %in[%j, %i] : memref<4x4xf32>
  }
  %s = memref.load %in[%c0, %c0] : memref<4x4xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%c256, %c256) step (%c1, %c1) {
    memref.store %s, %big[%i, %j] : memref<256x256xf32>
  }
  scf.for %k = %c0 to %c4 step %c1 {
    scf.parallel (%i, %j) = (%c0, %c0) to (%c256, %c256) step (%c1, %c1) {
      memref.store %s, %big[%i, %j] : memref<256x256xf32>
    }
  }
  return
}
