// RUN: kiln-opt %s -kiln-gpu-form-kernels -split-input-file -verify-diagnostics | FileCheck %s

// A 4x300 parallel nest is one kernel of 1200 threads, 256 per block, its
// iteration linearized with the innermost dimension fastest; the tail block
// is guarded.
// CHECK-LABEL: func.func @main(
// CHECK-NOT:     scf.parallel
// CHECK:         gpu.launch blocks(%[[BX:.+]], %{{.+}}, %{{.+}}) in (%{{.+}} = %c5, %{{.+}} = %[[ONE:.+]], %{{.+}} = %[[ONE]]) threads(%[[TX:.+]], %{{.+}}, %{{.+}}) in (%{{.+}} = %c256{{.*}}, %{{.+}} = %[[ONE]], %{{.+}} = %[[ONE]]) {
// CHECK:           %[[BASE:.+]] = arith.muli %[[BX]], %c256 : index
// CHECK:           %[[LIN:.+]] = arith.addi %[[BASE]], %[[TX]] : index
// CHECK:           %[[OK:.+]] = arith.cmpi ult, %[[LIN]], %c1200 : index
// CHECK:           scf.if %[[OK]] {
// CHECK:             %[[J:.+]] = arith.remui %[[LIN]], %c300{{.*}} : index
// CHECK:             %[[I:.+]] = arith.divui %[[LIN]], %c300{{.*}} : index
// CHECK:             %[[V:.+]] = memref.load %arg0[%[[I]], %[[J]]]
// CHECK:             %[[E:.+]] = math.exp %[[V]]
// CHECK:             memref.store %[[E]], %arg1[%[[I]], %[[J]]]
// CHECK:           gpu.terminator
// CHECK:         return
func.func @main(%in: memref<4x300xf32>, %out: memref<4x300xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c300 = arith.constant 300 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c300) step (%c1, %c1) {
    %v = memref.load %in[%i, %j] : memref<4x300xf32>
    %e = math.exp %v : f32
    memref.store %e, %out[%i, %j] : memref<4x300xf32>
    scf.reduce
  }
  return
}

// -----

// A small loop gets one block of whole warps (20 iterations: 32 threads).
// CHECK-LABEL: func.func @main(
// CHECK:         gpu.launch blocks({{.*}}) in (%{{.+}} = %c1{{[_0-9]*}}, {{.*}}) threads({{.*}}) in (%{{.+}} = %c32{{[_0-9]*}},
func.func @main(%in: memref<20xf32>, %out: memref<20xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c20 = arith.constant 20 : index
  scf.parallel (%i) = (%c0) to (%c20) step (%c1) {
    %v = memref.load %in[%i] : memref<20xf32>
    memref.store %v, %out[%i] : memref<20xf32>
    scf.reduce
  }
  return
}

// -----

// A reduction to one value (a sequential loop) and the store after it run
// as one single-thread kernel; the view between them stays on the host.
// CHECK-LABEL: func.func @main(
// CHECK:         %[[VIEW:.+]] = memref.subview
// CHECK:         %[[ONE:.+]] = arith.constant 1 : index
// CHECK:         %[[ONE2:.+]] = arith.constant 1 : index
// CHECK:         %[[ONE3:.+]] = arith.constant 1 : index
// CHECK:         gpu.launch blocks({{.*}}) in (%{{.+}} = %[[ONE]], %{{.+}} = %[[ONE2]], %{{.+}} = %[[ONE2]]) threads({{.*}}) in (%{{.+}} = %[[ONE3]], %{{.+}} = %[[ONE2]], %{{.+}} = %[[ONE2]])
// CHECK:           scf.for
// CHECK:           memref.store %{{.+}}, %[[VIEW]][]
// CHECK:           gpu.terminator
// CHECK-NOT:     gpu.launch
func.func @main(%in: memref<64xf32>, %out: memref<2xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  %sum = scf.for %i = %c0 to %c64 step %c1 iter_args(%acc = %zero) -> f32 {
    %v = memref.load %in[%i] : memref<64xf32>
    %s = arith.addf %acc, %v : f32
    scf.yield %s : f32
  }
  %view = memref.subview %out[1] [1] [1] : memref<2xf32> to memref<f32, strided<[], offset: 1>>
  memref.store %sum, %view[] : memref<f32, strided<[], offset: 1>>
  return
}

// -----

// A scalar read hoisted out of the loop that uses it (Trilu's k) moves back
// into the loop: one parallel kernel, each thread reads it.
// CHECK-LABEL: func.func @main(
// CHECK-COUNT-1: gpu.launch
// CHECK:           scf.if
// CHECK:             memref.load %arg1[] : memref<i64>
// CHECK:             memref.load %arg0
func.func @main(%x: memref<4x5xi64>, %k: memref<i64>, %y: memref<4x5xi64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %zero = arith.constant 0 : i64
  %kv = memref.load %k[] : memref<i64>
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c5) step (%c1, %c1) {
    %v = memref.load %x[%i, %j] : memref<4x5xi64>
    %d = arith.subi %j, %i : index
    %d64 = arith.index_cast %d : index to i64
    %keep = arith.cmpi sle, %d64, %kv : i64
    %r = arith.select %keep, %v, %zero : i64
    memref.store %r, %y[%i, %j] : memref<4x5xi64>
    scf.reduce
  }
  return
}

// -----

// A loop whose bounds the device computes runs in the serial kernel that
// computes them.
// CHECK-LABEL: func.func @main(
// CHECK-COUNT-1: gpu.launch
// CHECK:           memref.load %arg1[]
// CHECK:           scf.parallel
func.func @main(%x: memref<8xf32>, %n: memref<index>, %y: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %nv = memref.load %n[] : memref<index>
  scf.parallel (%i) = (%c0) to (%nv) step (%c1) {
    %v = memref.load %x[%i] : memref<8xf32>
    memref.store %v, %y[%i] : memref<8xf32>
    scf.reduce
  }
  return
}

// -----

func.func @main(%n: index, %y: memref<8xf32>) {
  // expected-error @below {{a buffer whose size is only known at run time is not supported on GPU targets yet}}
  %buffer = memref.alloc(%n) : memref<?xf32>
  return
}

// -----

func.func private @__kiln_normalize(memref<2xi64>, memref<2xi64>) attributes {kiln.string_kernel = "normalize_strings"}
func.func @main(%x: memref<2xi64>, %y: memref<2xi64>) {
  // expected-error @below {{string operations run on the CPU only; compile this model for a CPU target}}
  call @__kiln_normalize(%x, %y) : (memref<2xi64>, memref<2xi64>) -> ()
  return
}
