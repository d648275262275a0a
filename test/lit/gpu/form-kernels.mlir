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

// Symbolic dims: the extents (host memory, `kiln.host`) are read and the
// run-time sized buffer allocated by the host; the loop over it is a kernel
// of a run-time grid; the output record is written by the host.
// CHECK-LABEL: func.func @main
// CHECK:         %[[N64:.+]] = memref.load %[[DIMS:.+]][%{{.+}}] : memref<1xi64>
// CHECK:         %[[N:.+]] = arith.index_cast %[[N64]]
// CHECK:         %[[BUF:.+]] = memref.alloc(%[[N]]) : memref<?xf32>
// CHECK:         %[[TRIP:.+]] = arith.ceildivui %{{.+}}, %{{.+}} : index
// CHECK:         %[[BLOCKS:.+]] = arith.ceildivui %[[TRIP]], %{{.+}} : index
// CHECK:         gpu.launch blocks(%{{.+}}, %{{.+}}, %{{.+}}) in (%{{.+}} = %[[BLOCKS]]
// CHECK:           memref.store %{{.+}}, %[[BUF]]
// CHECK:         }
// CHECK:         memref.store %{{.+}}, %[[REC:.+]][%{{.+}}] : memref<2xi64>
// CHECK-NOT:     gpu.launch
// CHECK:         return
func.func @main(%x: memref<1xf32>, %dims: memref<1xi64> {kiln.host},
                %record: memref<2xi64> {kiln.host}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cst = arith.constant 1.0 : f32
  %n64 = memref.load %dims[%c0] : memref<1xi64>
  %n = arith.index_cast %n64 : i64 to index
  %buffer = memref.alloc(%n) : memref<?xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    memref.store %cst, %buffer[%i] : memref<?xf32>
    scf.reduce
  }
  %p = memref.extract_aligned_pointer_as_index %buffer : memref<?xf32> -> index
  %p64 = arith.index_cast %p : index to i64
  memref.store %p64, %record[%c0] : memref<2xi64>
  memref.store %n64, %record[%c1] : memref<2xi64>
  return
}

// -----

// A branch on a symbolic dim (a run-time broadcast) stays on the host with
// the kernel of its branch inside it.
// CHECK-LABEL: func.func @main
// CHECK:         scf.if %{{.+}} -> (memref<?xf32>) {
// CHECK:           %[[COPY:.+]] = memref.alloc
// CHECK:           gpu.launch
// CHECK:           scf.yield %[[COPY]]
// CHECK:         } else {
// CHECK-NEXT:      scf.yield
func.func @main(%x: memref<1xf32>, %dims: memref<1xi64> {kiln.host})
    -> memref<?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n64 = memref.load %dims[%c0] : memref<1xi64>
  %n = arith.index_cast %n64 : i64 to index
  %src = memref.reinterpret_cast %x to offset: [0], sizes: [%n], strides: [1]
      : memref<1xf32> to memref<?xf32>
  %one = arith.cmpi eq, %n, %c1 : index
  %b = scf.if %one -> (memref<?xf32>) {
    %copy = memref.alloc(%n) : memref<?xf32>
    scf.parallel (%i) = (%c0) to (%n) step (%c1) {
      %v = memref.load %src[%c0] : memref<?xf32>
      memref.store %v, %copy[%i] : memref<?xf32>
      scf.reduce
    }
    scf.yield %copy : memref<?xf32>
  } else {
    scf.yield %src : memref<?xf32>
  }
  return %b : memref<?xf32>
}

// -----

// A choice between two views of one buffer (a Reshape over symbolic dims)
// is address arithmetic: it stays on the host, and the loop reading the
// chosen view is a kernel.
// CHECK-LABEL: func.func @main
// CHECK:         %[[VIEW:.+]] = scf.if
// CHECK-NOT:       gpu.launch
// CHECK:         }
// CHECK:         gpu.launch
// CHECK:           memref.load %[[VIEW]]
func.func @main(%x: memref<1xf32>, %dims: memref<1xi64> {kiln.host},
                %y: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %n64 = memref.load %dims[%c0] : memref<1xi64>
  %n = arith.index_cast %n64 : i64 to index
  %one = arith.cmpi eq, %n, %c1 : index
  %v = scf.if %one -> (memref<?xf32>) {
    %a = memref.reinterpret_cast %x to offset: [0], sizes: [%n], strides: [1]
        : memref<1xf32> to memref<?xf32>
    scf.yield %a : memref<?xf32>
  } else {
    %b = memref.reinterpret_cast %x to offset: [0], sizes: [%c8], strides: [1]
        : memref<1xf32> to memref<?xf32>
    scf.yield %b : memref<?xf32>
  }
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    %e = memref.load %v[%c0] : memref<?xf32>
    memref.store %e, %y[%i] : memref<8xf32>
    scf.reduce
  }
  return
}

// -----

// The host cannot read what the device computed into an output record.
func.func @main(%x: memref<8xf32>, %record: memref<2xi64> {kiln.host}) {
  %c0 = arith.constant 0 : index
  %v = memref.load %x[%c0] : memref<8xf32>
  %n = arith.fptosi %v : f32 to i64
  // expected-error @below {{a value computed on the device is needed by the host (a run-time shape or loop bound); not supported on GPU targets yet}}
  memref.store %n, %record[%c0] : memref<2xi64>
  return
}

// -----

func.func private @__kiln_normalize(memref<2xi64>, memref<2xi64>) attributes {kiln.string_kernel = "normalize_strings"}
func.func @main(%x: memref<2xi64>, %y: memref<2xi64>) {
  // expected-error @below {{string operations run on the CPU only; compile this model for a CPU target}}
  call @__kiln_normalize(%x, %y) : (memref<2xi64>, memref<2xi64>) -> ()
  return
}

// -----

// A kernel cannot read the extents in host memory.
func.func @main(%dims: memref<1xi64> {kiln.host}, %y: memref<8xi64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    // expected-error @below {{a kernel would read the extents or a record in host memory; not supported on GPU targets yet}}
    %n = memref.load %dims[%c0] : memref<1xi64>
    memref.store %n, %y[%i] : memref<8xi64>
    scf.reduce
  }
  return
}

// -----

// Nor allocate a buffer of run-time size (per-iteration scratch).
func.func @main(%n: index, %y: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %cst = arith.constant 0.0 : f32
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    // expected-error @below {{a buffer whose size is only known at run time inside a kernel (per-iteration scratch); not supported on GPU targets yet}}
    %scratch = memref.alloc(%n) : memref<?xf32>
    memref.store %cst, %scratch[%c0] : memref<?xf32>
    %v = memref.load %scratch[%c0] : memref<?xf32>
    memref.store %v, %y[%i] : memref<8xf32>
    scf.reduce
  }
  return
}
