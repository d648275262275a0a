//===- MemoryPasses.td - CPU passes placing buffers -------*- tablegen -*-===//
//
// The CPU backend passes that decide where buffers live after
// bufferization: per-thread stack scratch of parallel iterations, the arena
// (static and scaled by a run-time extent) and the weights area. Included
// by Passes.td.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_BACKENDS_CPU_MEMORYPASSES_TD
#define KILN_BACKENDS_CPU_MEMORYPASSES_TD

include "mlir/Pass/PassBase.td"

def PrivatizeParallelAllocs : Pass<"kiln-privatize-parallel-allocs"> {
  let summary = "Give each iteration of an scf.forall its own scratch buffers";
  let description = [{
    A statically shaped `memref.alloc` inside an `scf.forall` body is
    scratch of one iteration; planned in the arena it would be one slot
    shared by every thread. This pass (after bufferization, before
    kiln-plan-arena) turns each into a `memref.alloca` at the start of the
    body. Buffers nested in inner sequential loops are hoisted the same way
    (one buffer serves every inner iteration, as one arena slot would).
    More than 256 KiB per iteration is an error. Dynamically shaped buffers
    are left alone. kiln-hoist-static-allocas finishes the job after the
    loops are outlined.

    Before:
    ```mlir
    scf.forall (%i) in (12) {
      scf.for %j = %c0 to %c4 step %c1 {
        %s = memref.alloc() {alignment = 64 : i64} : memref<64x64xf32>
        ...
      }
    }
    ```
    After:
    ```mlir
    scf.forall (%i) in (12) {
      %s = memref.alloca() {alignment = 64 : i64} : memref<64x64xf32>
      scf.for %j = %c0 to %c4 step %c1 {
        ...
      }
    }
    ```
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def HoistStaticAllocas : Pass<"kiln-hoist-static-allocas", "ModuleOp"> {
  let summary = "Move fixed-size allocas to the entry block of their function";
  let description = [{
    After kiln-outline-parallel-loops, a `memref.alloca` left inside a loop
    would grow the stack on every iteration. Each fixed-size alloca moves to
    the entry block of its function: in an outlined parallel body that is one
    buffer per call, i.e. per thread, reused by the iterations that call
    runs; in @main the loops around it are sequential. Allocas are scratch
    of one iteration by construction (kiln-privatize-parallel-allocs,
    vector transfer temporaries), so sharing them across iterations is safe.

    Before:
    ```mlir
    func.func @body(%begin: index, %end: index) {
      scf.for %i = %begin to %end step %c1 {
        %s = memref.alloca() : memref<64x64xf32>
        ...
      }
    }
    ```
    After:
    ```mlir
    func.func @body(%begin: index, %end: index) {
      %s = memref.alloca() : memref<64x64xf32>
      scf.for %i = %begin to %end step %c1 {
        ...
      }
    }
    ```
  }];
}

def PlanArena : Pass<"kiln-plan-arena", "ModuleOp"> {
  let summary = "Place every intermediate buffer in one arena planned by liveness";
  let description = [{
    Replaces each statically shaped, identity-layout `memref.alloc` in the
    entry function with a `memref.view` into one new trailing argument, the
    arena (`memref<Nxi8>`, owned by the runtime and aligned to 64 bytes).
    A buffer is live from the top-level op that allocates it (or contains its
    allocation) to the last top-level op that uses it or any alias of it
    (subviews, casts, reshapes, loop results). Buffers are placed first-fit,
    largest first, at 64-byte aligned offsets so that buffers whose live
    ranges overlap never share bytes. `memref.dealloc` of a placed buffer is
    erased. The arena size is recorded as the module attribute
    `kiln.arena_size`; the argument gets the attribute `kiln.arena`.

    Buffers that escape through `func.return` or a call, have non-identity
    layouts, or are allocated in a loop body and yielded out of the loop
    are left alone (they keep calling the allocator). One allocated in an
    `scf.if` branch and yielded out of it is placed like the others: it
    lives on in the if's results.

    Buffers of run-time size with one run-time extent, the same value `%n`
    defined in the entry block (a symbolic batch), and a whole number of
    64-byte units per unit of `%n`, share a scaled arena: planned the same
    way for their per-unit sizes, it is one `memref.alloc(S * %n)` made
    right after `%n`, each buffer a `memref.view` at its offset times `%n`
    (two or more buffers per group; others of run-time size, and those
    allocated in a parallel loop's iterations, keep their allocation):
    ```mlir
    %a = memref.alloc(%n) : memref<?x56x56x24xf32>
    // becomes
    %group = memref.alloc(%size) {alignment = 64 : i64} : memref<?xi8>
    %a = memref.view %group[%offset][%n] : memref<?xi8> to memref<?x56x56x24xf32>
    ```

    Before:
    ```mlir
    func.func @main(%in: memref<16xf32>, %out: memref<16xf32>) {
      %a = memref.alloc() : memref<16xf32>   // live in ops 1-2
      %b = memref.alloc() : memref<16xf32>   // live in ops 3-4
      ...
    }
    ```
    After:
    ```mlir
    module attributes {kiln.arena_size = 64 : i64} {
      func.func @main(%in: memref<16xf32>, %out: memref<16xf32>,
                      %arena: memref<64xi8> {kiln.arena}) {
        %c0 = arith.constant 0 : index
        %a = memref.view %arena[%c0][] : memref<64xi8> to memref<16xf32>
        %b = memref.view %arena[%c0][] : memref<64xi8> to memref<16xf32>
        ...
      }
    }
    ```
  }];
  let options = [
    Option<"entryName", "entry", "std::string", "\"main\"",
           "Name of the entry function">,
  ];
  let dependentDialects = ["arith::ArithDialect", "memref::MemRefDialect"];
}

def OutlineWeights : Pass<"kiln-outline-weights", "ModuleOp"> {
  let summary = "Lay constant memref.globals out in one raw weights area";
  let description = [{
    Every non-splat constant `memref.global` (dense or `dense_resource`) used
    only from the entry function gets a 64-byte aligned offset in one byte
    area. The layout becomes the module attribute `kiln.weights`, a
    dictionary of the `offsets`, the total `size` and the `values` (the
    globals' own attributes, so nothing is copied: the artifact writer
    writes each value's bytes from where they are into the section
    `.kiln.weights`, and 3 GB of weights never pass through LLVM). The entry
    function gets a trailing `memref<Nxi8> {kiln.weights}` argument (the
    runtime passes the section's mapping), each `memref.get_global` becomes
    a `memref.view` of that argument and the outlined globals are erased.
    i1 constants take one byte per element, as in memory.

    Splat constants stay globals: they cost one element in the object file.

    Before:
    ```mlir
    memref.global "private" constant @w : memref<2xf32> = dense<[1.0, 2.0]>
    func.func @main(%out: memref<2xf32>) {
      %0 = memref.get_global @w : memref<2xf32>
      ...
    }
    ```
    After:
    ```mlir
    module attributes {kiln.weights = {offsets = array<i64: 0>, size = 64 : i64,
                                       values = [dense<[1.0, 2.0]> : tensor<2xf32>]}} {
      func.func @main(%out: memref<2xf32>, %weights: memref<64xi8> {kiln.weights}) {
        %c0 = arith.constant 0 : index
        %0 = memref.view %weights[%c0][] : memref<64xi8> to memref<2xf32>
        ...
      }
    }
    ```
  }];
  let options = [
    Option<"entryName", "entry", "std::string", "\"main\"",
           "Name of the entry function">,
  ];
  let dependentDialects = ["arith::ArithDialect", "memref::MemRefDialect"];
}

#endif // KILN_BACKENDS_CPU_MEMORYPASSES_TD
