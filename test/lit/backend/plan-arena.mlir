// RUN: kiln-opt %s -kiln-plan-arena -split-input-file -allow-unregistered-dialect \
// RUN:   | FileCheck %s

// Two buffers whose live ranges do not overlap share offset 0; the arena is
// as big as the larger one.
// CHECK: module attributes {kiln.arena_size = 128 : i64}
// CHECK-LABEL: func.func @main(
// CHECK-SAME:    %[[IN:[a-z0-9_]+]]: memref<16xf32>, %[[OUT:[a-z0-9_]+]]: memref<16xf32>,
// CHECK-SAME:    %[[ARENA:[a-z0-9_]+]]: memref<128xi8> {kiln.arena})
// CHECK-NOT:   memref.alloc
// CHECK:       %[[C0:.+]] = arith.constant 0 : index
// CHECK:       %[[A:.+]] = memref.view %[[ARENA]][%[[C0]]][] : memref<128xi8> to memref<16xf32>
// CHECK:       memref.copy %[[IN]], %[[A]]
// CHECK:       memref.copy %[[A]], %[[OUT]]
// CHECK:       %[[C0B:.+]] = arith.constant 0 : index
// CHECK:       %[[B:.+]] = memref.view %[[ARENA]][%[[C0B]]][] : memref<128xi8> to memref<32xf32>
// CHECK-NOT:   memref.dealloc
func.func @main(%in: memref<16xf32>, %out: memref<16xf32>) {
  %a = memref.alloc() : memref<16xf32>
  memref.copy %in, %a : memref<16xf32> to memref<16xf32>
  memref.copy %a, %out : memref<16xf32> to memref<16xf32>
  memref.dealloc %a : memref<16xf32>
  %cst = arith.constant 0.0 : f32
  %b = memref.alloc() : memref<32xf32>
  linalg.fill ins(%cst : f32) outs(%b : memref<32xf32>)
  return
}

// -----

// Overlapping live ranges get disjoint, 64-byte aligned slots, largest
// buffer first (i1 takes a byte per element). A use through a subview keeps
// %a live until the last copy.
// CHECK: module attributes {kiln.arena_size = 256 : i64}
// CHECK-LABEL: func.func @main(
// CHECK-SAME:    %[[ARENA:[a-z0-9_]+]]: memref<256xi8> {kiln.arena})
// CHECK:       %[[C192:.+]] = arith.constant 192 : index
// CHECK:       memref.view %[[ARENA]][%[[C192]]][] : memref<256xi8> to memref<3xf32>
// CHECK:       %[[C0:.+]] = arith.constant 0 : index
// CHECK:       memref.view %[[ARENA]][%[[C0]]][] : memref<256xi8> to memref<100xi1>
// CHECK:       %[[C128:.+]] = arith.constant 128 : index
// CHECK:       memref.view %[[ARENA]][%[[C128]]][] : memref<256xi8> to memref<2xi64>
func.func @main(%out: memref<2xf32>) {
  %a = memref.alloc() : memref<3xf32>
  %b = memref.alloc() : memref<100xi1>
  %c = memref.alloc() : memref<2xi64>
  %s = memref.subview %a[1] [2] [1] : memref<3xf32> to memref<2xf32, strided<[1], offset: 1>>
  "test.use"(%b, %c) : (memref<100xi1>, memref<2xi64>) -> ()
  memref.copy %s, %out : memref<2xf32, strided<[1], offset: 1>> to memref<2xf32>
  return
}

// -----

// A buffer used inside a loop is live for the whole loop, so the buffer
// allocated in the loop body cannot share its slot.
// CHECK: module attributes {kiln.arena_size = 128 : i64}
// CHECK-LABEL: func.func @main(
// CHECK:         arith.constant 0 : index
// CHECK:         memref.view
// CHECK:         scf.for
// CHECK:           %[[C64:.+]] = arith.constant 64 : index
// CHECK:           memref.view %{{.+}}[%[[C64]]][] : memref<128xi8> to memref<4xf32>
func.func @main(%out: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %acc = memref.alloc() : memref<4xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    %tmp = memref.alloc() : memref<4xf32>
    memref.copy %acc, %tmp : memref<4xf32> to memref<4xf32>
    memref.copy %tmp, %acc : memref<4xf32> to memref<4xf32>
  }
  memref.copy %acc, %out : memref<4xf32> to memref<4xf32>
  return
}

// -----

// A buffer made in an scf.if branch and yielded out of it (the shape of a
// reshape chosen as the model runs) lives on in the if's results: it gets
// a slot, kept until their last use.
// CHECK: module attributes {kiln.arena_size = 64 : i64}
// CHECK-LABEL: func.func @main(
// CHECK:         scf.if
// CHECK:         } else {
// CHECK-NOT:       memref.alloc
// CHECK:           memref.view %{{.+}}[%{{.+}}][] : memref<64xi8> to memref<3xindex>
func.func @main(%c: i1, %in: memref<3xindex>, %out: memref<3xindex>) {
  %r = scf.if %c -> (memref<3xindex>) {
    scf.yield %in : memref<3xindex>
  } else {
    %shape = memref.alloc() {alignment = 64 : i64} : memref<3xindex>
    memref.copy %in, %shape : memref<3xindex> to memref<3xindex>
    scf.yield %shape : memref<3xindex>
  }
  memref.copy %r, %out : memref<3xindex> to memref<3xindex>
  return
}

// -----

// But made in an scf.if inside a loop and carried out of the loop, it
// would share its slot with the next iteration's: it stays a heap buffer.
// CHECK: module attributes {kiln.arena_size = 0 : i64}
// CHECK-LABEL: func.func @main(
// CHECK:         scf.for
// CHECK:           memref.alloc() {alignment = 64 : i64} : memref<3xindex>
func.func @main(%c: i1, %in: memref<3xindex>, %out: memref<3xindex>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %in) -> (memref<3xindex>) {
    %next = scf.if %c -> (memref<3xindex>) {
      scf.yield %acc : memref<3xindex>
    } else {
      %shape = memref.alloc() {alignment = 64 : i64} : memref<3xindex>
      memref.copy %acc, %shape : memref<3xindex> to memref<3xindex>
      scf.yield %shape : memref<3xindex>
    }
    scf.yield %next : memref<3xindex>
  }
  memref.copy %r, %out : memref<3xindex> to memref<3xindex>
  return
}

// -----

// Negative cases: dynamic shapes, returned buffers, buffers aligned beyond the
// arena's 64 bytes and allocas stay as they are. The arena is still added.
// CHECK: module attributes {kiln.arena_size = 0 : i64}
// CHECK-LABEL: func.func @main(
// CHECK-SAME:    %{{.+}}: memref<0xi8> {kiln.arena}) -> memref<8xf32>
// CHECK:         memref.alloc(%{{.+}}) : memref<?xf32>
// CHECK:         memref.alloc() : memref<8xf32>
// CHECK:         memref.alloc() {alignment = 128 : i64} : memref<8xf32>
// CHECK:         memref.alloca() : memref<8xf32>
// CHECK-NOT:     memref.view
func.func @main(%n: index) -> memref<8xf32> {
  %d = memref.alloc(%n) : memref<?xf32>
  %r = memref.alloc() : memref<8xf32>
  %big = memref.alloc() {alignment = 128 : i64} : memref<8xf32>
  %s = memref.alloca() : memref<8xf32>
  "test.use"(%d, %big, %s) : (memref<?xf32>, memref<8xf32>, memref<8xf32>) -> ()
  return %r : memref<8xf32>
}

// -----

// A buffer passed to one of the runtime's string kernels is only used during
// the call: it gets an arena slot (it was left a heap buffer, leaked on every
// run). A buffer passed to any other call escapes and stays.
// CHECK: module attributes {kiln.arena_size = 64 : i64}
// CHECK-LABEL: func.func @main(
// CHECK:         %[[SLOT:.+]] = memref.view %{{.+}}[%{{.+}}][] : memref<64xi8> to memref<12xf32>
// CHECK:         call @__kiln_string_call_0(%{{.+}}, %[[SLOT]])
// CHECK:         %[[HEAP:.+]] = memref.alloc() : memref<4xf32>
// CHECK:         call @other(%[[HEAP]])
func.func private @__kiln_string_call_0(memref<12xi64>, memref<12xf32>) -> i32 attributes {kiln.string_kernel = "strings_to_numbers"}
func.func private @other(memref<4xf32>)
func.func @main(%in: memref<12xi64>, %out: memref<12xf32>) {
  %numbers = memref.alloc() : memref<12xf32>
  %status = call @__kiln_string_call_0(%in, %numbers) : (memref<12xi64>, memref<12xf32>) -> i32
  memref.copy %numbers, %out : memref<12xf32> to memref<12xf32>
  %kept = memref.alloc() : memref<4xf32>
  call @other(%kept) : (memref<4xf32>) -> ()
  return
}

// -----

// Buffers of run-time size whose one run-time extent is the same value %n
// (a symbolic batch) share a scaled arena allocated once after %n: %b and
// %a (128 and 64 bytes per unit, live together; largest first) at offsets
// 0 and 128 units, %c (192 bytes per unit, after both) at 0 again; the arena is
// 192 * %n. A buffer of another extent, and one of 16 bytes per unit (not
// a whole alignment unit), keep their own allocations.
// CHECK-LABEL: func.func @main(
// CHECK:       %[[N:.+]] = memref.dim
// CHECK:       %[[C192:.+]] = arith.constant 192 : index
// CHECK:       %[[SIZE:.+]] = arith.muli %[[C192]], %[[N]]
// CHECK:       %[[GROUP:.+]] = memref.alloc(%[[SIZE]]) {alignment = 64 : i64} : memref<?xi8>
// CHECK:       %[[C128:.+]] = arith.constant 128 : index
// CHECK:       %[[OA:.+]] = arith.muli %[[C128]], %[[N]]
// CHECK:       memref.view %[[GROUP]][%[[OA]]][%[[N]]] : memref<?xi8> to memref<?x16xf32>
// CHECK:       %[[C0:.+]] = arith.constant 0 : index
// CHECK:       %[[OB:.+]] = arith.muli %[[C0]], %[[N]]
// CHECK:       memref.view %[[GROUP]][%[[OB]]][%[[N]]] : memref<?xi8> to memref<?x32xf32>
// CHECK:       memref.alloc(%[[N]]) : memref<?x4xf32>
// CHECK:       %[[C0C:.+]] = arith.constant 0 : index
// CHECK:       %[[OC:.+]] = arith.muli %[[C0C]], %[[N]]
// CHECK:       memref.view %[[GROUP]][%[[OC]]][%[[N]]] : memref<?xi8> to memref<?x48xf32>
// CHECK:       memref.alloc(%{{.+}}) : memref<?x48xf32>
func.func @main(%in: memref<?x16xf32>, %out: memref<?x48xf32>, %m: index) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %in, %c0 : memref<?x16xf32>
  %a = memref.alloc(%n) : memref<?x16xf32>
  %b = memref.alloc(%n) : memref<?x32xf32>
  %small = memref.alloc(%n) : memref<?x4xf32>
  "test.use"(%in, %a, %b, %small) : (memref<?x16xf32>, memref<?x16xf32>, memref<?x32xf32>, memref<?x4xf32>) -> ()
  %c = memref.alloc(%n) : memref<?x48xf32>
  "test.use"(%c, %out) : (memref<?x48xf32>, memref<?x48xf32>) -> ()
  %d = memref.alloc(%m) : memref<?x48xf32>
  "test.use"(%d) : (memref<?x48xf32>) -> ()
  return
}

// -----

// Buffers of run-time size allocated in a parallel loop's iterations are
// each thread's scratch: no shared slot, they keep their allocations.
// CHECK-LABEL: func.func @main(
// CHECK:       scf.forall
// CHECK:       memref.alloc(%{{.+}}) : memref<?x16xf32>
// CHECK:       memref.alloc(%{{.+}}) : memref<?x16xf32>
// CHECK-NOT:   memref.view
func.func @main(%in: memref<?x16xf32>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %in, %c0 : memref<?x16xf32>
  scf.forall (%i) in (8) {
    %t = memref.alloc(%n) : memref<?x16xf32>
    %u = memref.alloc(%n) : memref<?x16xf32>
    "test.use"(%t, %u, %i) : (memref<?x16xf32>, memref<?x16xf32>, index) -> ()
  }
  return
}
