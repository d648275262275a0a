//===- RunTimeShapePasses.td - CPU passes for run-time extents -*- tablegen -*-===//
//
// The CPU backend passes that exist for tensors of run-time extent
// (symbolic input dims, data-dependent results): static slices of run-time
// rows, run-time inputs and results at the entry, and the runtime's
// allocation and failure services. Included by Passes.td.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_BACKENDS_CPU_RUNTIMESHAPEPASSES_TD
#define KILN_BACKENDS_CPU_RUNTIMESHAPEPASSES_TD

include "mlir/Pass/PassBase.td"

def SliceRunTimeRows : Pass<"kiln-slice-run-time-rows", "func::FuncOp"> {
  let summary = "Run convolutions, poolings and matmuls over a run-time "
                "leading dim as loops of static slices";
  let description = [{
    A symbolic batch or sequence length leaves an NHWC convolution or
    pooling with a run-time batch, a matmul with a run-time row count, and
    nothing else dynamic; the register-tiled kernels only take static
    shapes. This pass runs such an op in an `scf.for` over static slices of
    that dim: poolings and 3x3 stride-1 convolutions (which Winograd may
    take) one image at a time, matmuls in blocks of 64 rows and then of 8,
    the last one zero-padded to 8 rows. Other NHWC convolutions and
    depthwise ones stay whole: their kernels take a run-time batch.
    Each slice is inserted into the op's init. The tilers then see static
    ops; the loop itself is sequential, the kernels in it parallel.

    Before:
    ```mlir
    %r = linalg.matmul ins(%a, %w : tensor<?x64xf32>, tensor<64x32xf32>)
                       outs(%init : tensor<?x32xf32>) -> tensor<?x32xf32>
    ```
    After (the 8-row loop alike, with a tensor.pad of its last block):
    ```mlir
    %full = ... (rows / 64) * 64
    %r0 = scf.for %i = %c0 to %full step %c64 iter_args(%o = %init) {
      %ai = tensor.extract_slice %a[%i, 0] [64, 64] [1, 1]
      %oi = tensor.extract_slice %o[%i, 0] [64, 32] [1, 1]
      %ri = linalg.matmul ins(%ai, %w : tensor<64x64xf32>, tensor<64x32xf32>)
                          outs(%oi : tensor<64x32xf32>) -> tensor<64x32xf32>
      %u = tensor.insert_slice %ri into %o[%i, 0] [64, 32] [1, 1]
      scf.yield %u
    }
    ```
  }];
  let dependentDialects = ["arith::ArithDialect", "scf::SCFDialect",
                           "tensor::TensorDialect"];
}

def DynamicResults : Pass<"kiln-dynamic-results", "ModuleOp"> {
  let summary = "Return each run-time shaped result of the entry as a record";
  let description = [{
    A result of the entry function whose shape is only known at run time
    cannot be an out-param the caller allocates. After bufferization, each
    such `memref<?x...>` result is replaced by an `i64` record of `1 + rank`
    entries: the result's aligned data pointer, then its dims. The record is
    static, so `buffer-results-to-out-params` turns it into an out-param, and
    the runtime reads the shape from it and copies the data out after the run
    (kiln_runtime_callbacks memory stays valid until the next run). Static
    results are left alone.

    Before:
    ```mlir
    func.func @main(%x: memref<24xf32>) -> memref<?x?xf32> {
      ...
      return %r : memref<?x?xf32>
    }
    ```
    After:
    ```mlir
    func.func @main(%x: memref<24xf32>) -> memref<3xi64> {
      %record = memref.alloc() : memref<3xi64>
      %p = memref.extract_aligned_pointer_as_index %r : memref<?x?xf32> -> index
      // %record[0] = %p, %record[1] = dim 0, %record[2] = dim 1
      return %record : memref<3xi64>
    }
    ```
  }];
  let options = [
    Option<"entryName", "entry", "std::string", "\"main\"",
           "The entry function">
  ];
  let dependentDialects = ["arith::ArithDialect", "memref::MemRefDialect"];
}

def DynamicInputs : Pass<"kiln-dynamic-inputs", "ModuleOp"> {
  let summary = "Pass each entry argument with symbolic dims as its data "
                "pointer and its extents";
  let description = [{
    The entry takes every argument as a bare pointer, which a memref with
    run-time extents cannot be. After bufferization, each such argument of
    the entry becomes a one-element memref (its data pointer) followed by a
    new `memref<RANKxi64>` argument (its extents), and the body rebuilds
    the memref with a row-major `memref.reinterpret_cast`. The artifact's
    entry wrapper passes both from the input's record (abi.h, ABI 5).

    Before:
    ```mlir
    func.func @main(%x: memref<?x?x64xf32>) { ... uses %x ... }
    ```
    After:
    ```mlir
    func.func @main(%x: memref<1xf32>, %dims: memref<3xi64>) {
      %b = memref.load %dims[%c0] : memref<3xi64>   // index_cast to %bi
      %s = memref.load %dims[%c1] : memref<3xi64>   // index_cast to %si
      %st = arith.muli %si, %c64 : index
      %v = memref.reinterpret_cast %x to offset: [0], sizes: [%bi, %si, 64],
          strides: [%st, 64, 1] : memref<1xf32> to memref<?x?x64xf32>
      ... uses %v ...
    }
    ```
  }];
  let options = [
    Option<"entryName", "entry", "std::string", "\"main\"",
           "The entry function">
  ];
  let dependentDialects = ["arith::ArithDialect", "memref::MemRefDialect"];
}

def ExpandDynamicShapes : Pass<"kiln-expand-dynamic-shapes", "ModuleOp"> {
  let summary = "Write expand_shapes that split a dim into several run-time "
                "dims as reinterpret_casts";
  let description = [{
    MLIR 22's `expand-strided-metadata` crashes on a `memref.expand_shape`
    whose reassociation group holds two or more run-time dims, the
    `[batch * seq, hidden] -> [batch, seq, hidden]` that follows every
    matmul over symbolic dims. On an identity-layout source the result is
    the same memory with the new sizes and row-major strides, which this
    pass writes as a `memref.reinterpret_cast`. Other expand_shapes are left
    alone.

    Before:
    ```mlir
    %e = memref.expand_shape %a [[0, 1], [2]] output_shape [%b, %s, 64]
        : memref<?x64xf32> into memref<?x?x64xf32>
    ```
    After:
    ```mlir
    %st = arith.muli %s, %c64 : index
    %e = memref.reinterpret_cast %a to offset: [0], sizes: [%b, %s, 64],
        strides: [%st, 64, 1] : memref<?x64xf32> to memref<?x?x64xf32>
    ```
  }];
  let dependentDialects = ["arith::ArithDialect", "memref::MemRefDialect"];
}

def RuntimeServices : Pass<"kiln-runtime-services", "ModuleOp"> {
  let summary = "Run-time sized buffers and failed checks go through the runtime";
  let description = [{
    Runs after kiln-outline-parallel-loops (the entry has its trailing
    `kiln.runtime` argument) and after scf-to-cf. In the entry function:

    - every `memref.alloc` with dynamic sizes (kiln-plan-arena placed the
      static ones) becomes a call of `@__kiln_alloc(runtime, bytes)` and a
      `memref.view` of the returned memory; the runtime serves it from a
      per-session scratch reset at each run, so generated code never calls
      malloc. Their `memref.dealloc`s are erased. A NULL from the runtime
      (the memory is not available; it recorded why) ends the run like a
      failed check.
    - every `cf.assert` becomes a branch that, when the condition is false,
      calls `@__kiln_fail(runtime, message)` and returns from the entry: the
      run ends with that message as its error instead of aborting.
    - every call of a declaration marked `kiln.string_kernel = "K"` (the
      string ops, see kiln-lower-to-linalg) becomes a call of
      `@__kiln_K(runtime, ...)` with each memref operand passed as its
      aligned data address (i64); the unused declaration is erased.

    The artifact writer (backends/common) defines these declarations through
    the callbacks of `kiln_runtime_callbacks`.

    Before:
    ```mlir
    cf.assert %ok, "node 'r': Reshape: ..."
    %b = memref.alloc(%n) : memref<?xf32>
    ```
    After:
    ```mlir
    cf.cond_br %ok, ^continue, ^fail
    ^fail:
      %msg = llvm.mlir.addressof @__kiln_check_0 : !llvm.ptr
      call @__kiln_fail(%runtime, %msg) : (memref<0xi8>, !llvm.ptr) -> ()
      return
    ^continue:
      %bytes = ... %n * 4 ...
      %raw = call @__kiln_alloc(%runtime, %bytes) : (memref<0xi8>, i64) -> memref<0xi8>
      %b = memref.view %raw[%c0][%n] : memref<0xi8> to memref<?xf32>
    ```
    A string kernel call, before and after:
    ```mlir
    call @__kiln_string_call_0(%c1_i32, %src, %dst, %c12_i64) : (i32, memref<12xf32>, memref<12xi64>, i64) -> ()
    ```
    ```mlir
    %p = memref.extract_aligned_pointer_as_index %src : memref<12xf32> -> index
    %a = arith.index_cast %p : index to i64
    ...
    call @__kiln_strings_from_numbers(%runtime, %c1_i32, %a, %b, %c12_i64) : (memref<0xi8>, i32, i64, i64, i64) -> ()
    ```
  }];
  let options = [
    Option<"entryName", "entry", "std::string", "\"main\"",
           "The entry function">
  ];
  let dependentDialects = ["arith::ArithDialect", "memref::MemRefDialect",
                           "cf::ControlFlowDialect", "LLVM::LLVMDialect"];
}

#endif // KILN_BACKENDS_CPU_RUNTIMESHAPEPASSES_TD
