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

// Small loops and loops using a float computed at run time outside them
// stay in @main (also inside another loop); the runtime argument is still
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

// -----

// A loop inside a sequential loop (the static slices of a symbolic batch),
// over a run-time extent: the enclosing induction variable and the trip
// count reach the body through one-element stack slots.
// CHECK-LABEL: func.func private @__kiln_parallel_body_0(
// CHECK-SAME:    %{{.+}}: index, %{{.+}}: index, %[[OUT:[a-z0-9]+]]: memref<64x8x1024xf32>, %{{.+}}: memref<1xindex>, %[[IV:[a-z0-9]+]]: memref<1xindex>, %[[TRIP:[a-z0-9]+]]: memref<1xindex>)
// CHECK:         %[[K:.+]] = memref.load %[[IV]][%{{.+}}] : memref<1xindex>
// CHECK:         %[[T:.+]] = memref.load %[[TRIP]][%{{.+}}] : memref<1xindex>
// CHECK:         arith.remui %{{.+}}, %[[T]] : index
// CHECK:         memref.store %{{.+}}, %[[OUT]][%{{.+}}, %[[K]], %{{.+}}]
// CHECK-LABEL: func.func @main(
// CHECK:         %[[IVSLOT:.+]] = memref.alloca() : memref<1xindex>
// CHECK:         %[[TRIPSLOT:.+]] = memref.alloca() : memref<1xindex>
// CHECK:         scf.for %[[KK:.+]] =
// CHECK:           %[[TRIPS:.+]] = arith.ceildivui
// CHECK-NOT:       scf.parallel
// CHECK:           memref.store %[[KK]], %[[IVSLOT]]
// CHECK:           memref.store %[[TRIPS]], %[[TRIPSLOT]]
// CHECK:           call @__kiln_parallel_for_0(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[IVSLOT]], %[[TRIPSLOT]])
func.func @main(%out: memref<64x8x1024xf32>, %extent: memref<1xindex>) {
  %c0 = arith.constant 0 : index
  %n = memref.load %extent[%c0] : memref<1xindex>
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c1024 = arith.constant 1024 : index
  %f = arith.constant 1.0 : f32
  scf.for %k = %c0 to %c8 step %c1 {
    scf.parallel (%j, %i) = (%c0, %c0) to (%n, %c1024) step (%c1, %c1) {
      memref.store %f, %out[%j, %k, %i] : memref<64x8x1024xf32>
    }
  }
  return
}

// -----

// A buffer of run-time size (a symbolic batch) reaches the body as its base
// (one pointer) with its run-time extent in a slot, viewed again with
// memref.reinterpret_cast.
// CHECK-LABEL: func.func private @__kiln_parallel_body_0(
// CHECK-SAME:    %{{.+}}: memref<1xindex>, %{{.+}}: memref<1xindex>, %[[BASE:[a-z0-9]+]]: memref<f32>)
// CHECK:         %[[ROWS:.+]] = memref.load
// CHECK:         %[[BUF:.+]] = memref.reinterpret_cast %[[BASE]] to offset: [0], sizes: [%[[ROWS]], 512], strides: [512, 1] : memref<f32> to memref<?x512xf32>
// CHECK:         memref.store %{{.+}}, %[[BUF]]
// CHECK-LABEL: func.func @main(
// CHECK:         %[[ALLOC:.+]] = memref.alloc(%{{.+}}) : memref<?x512xf32>
// CHECK:         %[[B:.+]], %{{.+}}, %[[SIZES:.+]]:2, %{{.+}}:2 = memref.extract_strided_metadata %[[ALLOC]]
// CHECK:         memref.store %[[SIZES]]#0
// CHECK:         call @__kiln_parallel_for_0({{.*}}, %[[B]])
func.func @main(%in: memref<?x512xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c512 = arith.constant 512 : index
  %n = memref.dim %in, %c0 : memref<?x512xf32>
  %buf = memref.alloc(%n) : memref<?x512xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%n, %c512) step (%c1, %c1) {
    %v = memref.load %in[%i, %j] : memref<?x512xf32>
    %d = arith.addf %v, %v : f32
    memref.store %d, %buf[%i, %j] : memref<?x512xf32>
    scf.reduce
  }
  "test.use"(%buf) : (memref<?x512xf32>) -> ()
  return
}

// -----

// A loop in the steps of an scf.while (a run-time recurrence) is outlined
// too; the state buffer the while carries reaches the body by its base
// pointer, like a buffer of run-time size.
// CHECK-LABEL: func.func private @__kiln_parallel_body_0(
// CHECK-SAME:    %[[BASE:[a-z0-9]+]]: memref<f32>, %[[NEXT:[a-z0-9]+]]: memref<f32>)
// CHECK:         %[[STATE:.+]] = memref.reinterpret_cast %[[BASE]] to offset: [0], sizes: [64, 512], strides: [512, 1] : memref<f32> to memref<64x512xf32>
// CHECK:         memref.load %[[STATE]]
// CHECK-LABEL: func.func @main(
// CHECK:         scf.while
// CHECK:         } do {
// CHECK:         ^bb0(%{{.+}}: index, %[[CARRIED:.+]]: memref<64x512xf32>):
// CHECK:         %[[B:.+]], %{{.+}}, %{{.+}}:2, %{{.+}}:2 = memref.extract_strided_metadata %[[CARRIED]]
// CHECK:         call @__kiln_parallel_for_0({{.*}}, %[[B]], %{{.+}})
// CHECK-NOT:     scf.parallel
func.func @main(%state: memref<64x512xf32>, %steps: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c512 = arith.constant 512 : index
  %r:2 = scf.while (%i = %c0, %s = %state) : (index, memref<64x512xf32>) -> (index, memref<64x512xf32>) {
    %go = arith.cmpi slt, %i, %steps : index
    scf.condition(%go) %i, %s : index, memref<64x512xf32>
  } do {
  ^bb0(%i: index, %s: memref<64x512xf32>):
    %next = memref.alloc() : memref<64x512xf32>
    scf.parallel (%a, %b) = (%c0, %c0) to (%c64, %c512) step (%c1, %c1) {
      %v = memref.load %s[%a, %b] : memref<64x512xf32>
      %d = arith.addf %v, %v : f32
      memref.store %d, %next[%a, %b] : memref<64x512xf32>
      scf.reduce
    }
    %j = arith.addi %i, %c1 : index
    scf.yield %j, %next : index, memref<64x512xf32>
  }
  "test.use"(%r#1) : (memref<64x512xf32>) -> ()
  return
}
