// RUN: kiln-opt %s -kiln-runtime-services -split-input-file -verify-diagnostics \
// RUN:   -allow-unregistered-dialect | FileCheck %s

// A run-time sized buffer is served by the runtime (bytes = n * 3 * 4), its
// dealloc dropped; a failed check calls __kiln_fail with its message and
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
