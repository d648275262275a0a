// RUN: kiln-opt %s -kiln-runtime-services -split-input-file -verify-diagnostics \
// RUN:   -allow-unregistered-dialect | FileCheck %s

// A run-time sized buffer is served by the runtime (bytes = n * 3 * 4), its
// dealloc dropped, and a NULL from the runtime (out of memory) ends the run
// like a failed check; a failed check calls __kiln_fail with its message and
// returns from the entry; static allocations are left to kiln-plan-arena.
// CHECK-DAG:   func.func private @__kiln_alloc(memref<0xi8>, i64) -> memref<0xi8>
// CHECK-DAG:   func.func private @__kiln_fail(memref<0xi8>, !llvm.ptr)
// CHECK-DAG:   llvm.mlir.global private constant @__kiln_check_0("node 'r': bad shape\00")
// CHECK-LABEL: func.func @main
// CHECK-SAME:    (%[[N:.+]]: index, %[[OK:.+]]: i1, %[[RT:.+]]: memref<0xi8> {kiln.runtime})
// CHECK:       cf.cond_br %[[OK]], ^[[CONT:.+]], ^[[FAIL:[a-z0-9]+]]
// CHECK:     ^[[FAIL]]:
// CHECK:       %[[MSG:.+]] = llvm.mlir.addressof @__kiln_check_0 : !llvm.ptr
// CHECK:       call @__kiln_fail(%[[RT]], %[[MSG]]) : (memref<0xi8>, !llvm.ptr) -> ()
// CHECK:       return
// CHECK:     ^[[CONT]]:
// CHECK:       %[[C4:.+]] = arith.constant 4 : index
// CHECK:       %[[B1:.+]] = arith.muli %[[C4]], %[[N]] : index
// CHECK:       %[[C3:.+]] = arith.constant 3 : index
// CHECK:       %[[B2:.+]] = arith.muli %[[B1]], %[[C3]] : index
// CHECK:       %[[BYTES:.+]] = arith.index_cast %[[B2]] : index to i64
// CHECK:       %[[RAW:.+]] = call @__kiln_alloc(%[[RT]], %[[BYTES]]) : (memref<0xi8>, i64) -> memref<0xi8>
// CHECK:       %[[ADDR:.+]] = memref.extract_aligned_pointer_as_index %[[RAW]]
// CHECK:       %[[GIVEN:.+]] = arith.cmpi ne, %[[ADDR]], %{{.+}} : index
// CHECK:       cf.cond_br %[[GIVEN]], ^[[VIEW:.+]], ^[[OOM:[a-z0-9]+]]
// CHECK:     ^[[OOM]]:
// CHECK:       call @__kiln_fail
// CHECK:       return
// CHECK:     ^[[VIEW]]:
// CHECK:       %[[V:.+]] = memref.view %[[RAW]][%{{.+}}][%[[N]]] : memref<0xi8> to memref<?x3xf32>
// CHECK:       memref.alloc() : memref<8xf32>
// CHECK-NOT:   memref.dealloc %[[V]]
// CHECK:       return
func.func @main(%n: index, %ok: i1, %runtime: memref<0xi8> {kiln.runtime}) {
  cf.assert %ok, "node 'r': bad shape"
  %b = memref.alloc(%n) : memref<?x3xf32>
  %s = memref.alloc() : memref<8xf32>
  "test.use"(%b, %s) : (memref<?x3xf32>, memref<8xf32>) -> ()
  memref.dealloc %b : memref<?x3xf32>
  return
}

// -----

// Without the runtime argument there is nothing to serve the buffer.
// expected-error @+1 {{kiln-runtime-services: the entry needs the kiln.runtime argument and no results}}
func.func @main(%n: index) {
  %b = memref.alloc(%n) : memref<?xf32>
  "test.use"(%b) : (memref<?xf32>) -> ()
  return
}

// -----

// A string kernel call: the per-site declaration is replaced by the
// runtime's kernel, called with the runtime first and each buffer as its
// aligned data address; the declaration goes away.
// CHECK-NOT:   @__kiln_string_call_0
// CHECK:       func.func private @__kiln_strings_from_numbers(memref<0xi8>, i32, i64, i64, i64)
// CHECK-LABEL: func.func @main
// CHECK-SAME:    (%[[SRC:.+]]: memref<6xf32>, %[[DST:.+]]: memref<6xi64>, %[[RT:.+]]: memref<0xi8> {kiln.runtime})
// CHECK:       %[[P0:.+]] = memref.extract_aligned_pointer_as_index %[[SRC]] : memref<6xf32> -> index
// CHECK:       %[[A0:.+]] = arith.index_cast %[[P0]] : index to i64
// CHECK:       %[[P1:.+]] = memref.extract_aligned_pointer_as_index %[[DST]] : memref<6xi64> -> index
// CHECK:       %[[A1:.+]] = arith.index_cast %[[P1]] : index to i64
// CHECK:       call @__kiln_strings_from_numbers(%[[RT]], %{{.+}}, %[[A0]], %[[A1]], %{{.+}}) : (memref<0xi8>, i32, i64, i64, i64) -> ()
func.func private @__kiln_string_call_0(i32, memref<6xf32>, memref<6xi64>, i64) attributes {kiln.string_kernel = "strings_from_numbers"}
func.func @main(%src: memref<6xf32>, %dst: memref<6xi64>, %runtime: memref<0xi8> {kiln.runtime}) {
  %c1 = arith.constant 1 : i32
  %n = arith.constant 6 : i64
  call @__kiln_string_call_0(%c1, %src, %dst, %n) : (i32, memref<6xf32>, memref<6xi64>, i64) -> ()
  return
}

// -----

// A string kernel call outside the entry has no runtime to call.
func.func private @__kiln_string_call_0(i32, memref<6xf32>, memref<6xi64>, i64) attributes {kiln.string_kernel = "strings_from_numbers"}
func.func @helper(%src: memref<6xf32>, %dst: memref<6xi64>) {
  %c1 = arith.constant 1 : i32
  %n = arith.constant 6 : i64
  // expected-error @+1 {{kiln-runtime-services: a string kernel call outside the entry function}}
  call @__kiln_string_call_0(%c1, %src, %dst, %n) : (i32, memref<6xf32>, memref<6xi64>, i64) -> ()
  return
}
func.func @main(%runtime: memref<0xi8> {kiln.runtime}) {
  return
}
