#ifndef KILN_BACKENDS_GPU_PASSES_TD
#define KILN_BACKENDS_GPU_PASSES_TD

include "mlir/Pass/PassBase.td"

def FormKernels : Pass<"kiln-gpu-form-kernels", "ModuleOp"> {
  let summary = "Make every top-level loop nest and memory access of the "
                "entry a gpu.launch";
  let description = [{
    Runs after bufferization into the device arena, when the entry's buffers
    are all views of its arguments. Each top-level `scf.parallel` becomes
    one kernel over its linearized iteration space (one iteration per
    thread, innermost dimension fastest, `threads-per-block` threads per
    block, fewer for small loops, the tail guarded); each run of other ops
    with memory effects becomes a one-thread kernel. A buffer sized at run
    time,
    or a value the device computes that the host needs, is an error naming
    the op.

    Before:
    ```mlir
    scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c300) step (%c1, %c1) {
      %v = memref.load %in[%i, %j] : memref<4x300xf32>
      memref.store %v, %out[%i, %j] : memref<4x300xf32>
    }
    ```
    After:
    ```mlir
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c5, ...)
               threads(%tx, %ty, %tz) in (%sx = %c256, ...) {
      %lin = arith.addi (arith.muli %bx, %c256), %tx : index
      scf.if (arith.cmpi ult, %lin, %c1200) {
        %j = arith.remui %lin, %c300 : index
        %i = arith.divui %lin, %c300 : index
        %v = memref.load %in[%i, %j] : memref<4x300xf32>
        memref.store %v, %out[%i, %j] : memref<4x300xf32>
      }
      gpu.terminator
    }
    ```
  }];
  let options = [
    Option<"entryName", "entry", "std::string", "\"main\"",
           "Name of the entry function">,
    Option<"threadsPerBlock", "threads-per-block", "int64_t", "256",
           "Threads of a block of a linearized loop kernel">,
  ];
  let dependentDialects = ["gpu::GPUDialect", "arith::ArithDialect",
                           "scf::SCFDialect"];
}

def AttentionKernels : Pass<"kiln-gpu-attention-kernels", "func::FuncOp"> {
  let summary = "kiln.attention as one flash-attention kernel (GPU targets)";
  let description = [{
    Runs before kiln-lower-to-linalg for GPU targets. Each `kiln.attention`
    with f32 operands and static head sizes up to 64 (the batch dims and
    sequence lengths may be run-time extents: grid, row and key bounds
    are then read from the operands at run time) becomes one
    `gpu.launch` on buffers: a block of 64 threads per 64 query rows (grid
    y: the batch), one row per thread with its q row and output accumulator
    in registers, keys walked in tiles of 16 staged through shared memory,
    online softmax with one rescale per tile (FlashAttention-2), causal
    blocks stopping at their last row, the additive mask read per score.
    Memory stays linear in the sequence length. Other attention ops keep
    the generic lowering (logged under `KILN_LOGS=gpu`).

    With `matrix-unit=mfma` (AMD, wave64; head sizes up to 128) both
    products run on the matrix cores instead: 4 waves of 64 per 64 query
    rows, 16 rows per wave, 32 keys of K and V staged in LDS per step and
    walked 16 at a time: Sᵀ = K·Qᵀ and Oᵀ += Vᵀ·Pᵀ as `amdgpu.mfma`
    (16x16x4 f32, or 16x16x16 at `precision` bf16/fp16), Q's fragments in
    registers, each row's max from 4 registers and two `gpu.shuffle xor`
    (lanes 16 and 32 apart).

    With `matrix-unit=mma.sync` (NVIDIA sm_80 and up) attention with f16
    or bf16 operands (the model's, or f32 ones at `precision` bf16/fp16;
    head sizes up to 128) runs on the tensor cores. f32 K and V are first
    rounded to the operand type by a `kiln.cast` of their own (which the
    elementwise fusion merges into the op that makes them), q, k and v are
    read through the `kiln.transpose` that made them when it keeps the
    last dim, and a result read only by such a transpose is written in its
    layout (a BERT's [B, S, H, D] projections, no copies around the
    kernel). 4 warps of two m16 tiles (32 rows) per 128 query rows past 64
    rows (heads up to 64; else 16 rows per warp), K and V in two
    [key][column] shared-memory stages of 64 keys (32 past head 64) filled
    by cp.async (element copies where rows are not whole 16-byte chunks or
    the buffer is misaligned), the next one in flight during the products: S = Q·Kᵀ as m16n8k16 tiles (K
    fragments by ldmatrix), the online softmax on the accumulators in base
    2 (a row's max from the lane's scores and two xor shuffles; the key and
    causal checks only on stages that may hold a masked key), then O += P·V
    with the S accumulators reused as the A fragment (V fragments by
    transposing ldmatrix). Other operands (fp32, tf32) take the SIMT
    kernel.

    Before:
    ```mlir
    %o = kiln.attention %q, %k, %v {causal = true, scale = 0.125 : f64}
        : (tensor<1x2x90x16xf32>, ...) -> tensor<1x2x90x16xf32>
    ```
    After:
    ```mlir
    %Q = bufferization.to_buffer %q read_only : ... to memref<1x2x90x16xf32>
    ...
    %out = memref.alloc() {alignment = 64 : i64} : memref<1x2x90x16xf32>
    gpu.launch blocks(...) in (%gx = %c2, %gy = %c2, %gz = %c1)
        threads(...) in (%sx = %c64, %sy = %c1, %sz = %c1)
        workgroup(%Ks : memref<16x16xf32, #gpu.address_space<workgroup>>,
                  %Vs : memref<16x16xf32, #gpu.address_space<workgroup>>) {
      scf.for %key0 = %c0 to %end step %c16 iter_args(%m, %l, acc...) {
        ... stage K, V; gpu.barrier; 16 scores; exp; rescale; p·V
      }
      ... out[row] = acc / l
    }
    %o = bufferization.to_tensor %out restrict writable
    ```
  }];
  let options = [
    Option<"precision", "precision", "std::string", "\"fp32\"",
           "Operand type of the MFMA kernel's products: fp32 and tf32 use "
           "the f32 MFMA, bf16 and fp16 that 16x16x16 MFMA (f32 "
           "accumulation); the SIMT kernel computes in f32">,
    Option<"matrixUnit", "matrix-unit", "std::string", "\"none\"",
           "none (the SIMT kernel), mfma (AMD Instinct, wave64: "
           "AttentionMfma.cpp) or mma.sync (NVIDIA sm_80 and up, f16/bf16 "
           "operands: AttentionMma.cpp)">,
  ];
  let dependentDialects = ["gpu::GPUDialect", "arith::ArithDialect",
                           "bufferization::BufferizationDialect",
                           "math::MathDialect", "memref::MemRefDialect",
                           "scf::SCFDialect", "vector::VectorDialect",
                           "amdgpu::AMDGPUDialect", "LLVM::LLVMDialect",
                           "NVVM::NVVMDialect"];
}

def NormalizationKernels
    : Pass<"kiln-gpu-normalization-kernels", "func::FuncOp"> {
  let summary = "layer_norm, softmax and log_softmax rows as block kernels "
                "(GPU targets)";
  let description = [{
    Runs before kiln-lower-to-linalg for GPU targets. Each `kiln.layer_norm`
    (dims from `axis` on), `kiln.softmax` or `kiln.log_softmax` (last axis)
    on an f32 tensor with static columns (the rows may be run-time extents:
    a symbolic batch or sequence; the grid is then their count, read at run
    time) becomes one `gpu.launch` on buffers with a block
    of 128 threads per row: threads stride over the row's columns, combine
    partial sums (or maxima) through shared memory in 7 halving steps
    between barriers, and write the row in a last pass (layer norm: mean,
    then the variance of the deviations, then `(x - mean) * rstd * scale +
    bias`; softmax: max, sum of exponentials, quotient). Other shapes keep
    the generic lowering (logged under `KILN_LOGS=gpu`).

    Before:
    ```mlir
    %y = kiln.layer_norm %x, %g, %b {axis = 2 : i64, epsilon = 1.0e-05 : f64}
        : (tensor<1x16x64xf32>, tensor<64xf32>, tensor<64xf32>)
        -> tensor<1x16x64xf32>
    ```
    After:
    ```mlir
    %in = memref.collapse_shape (bufferization.to_buffer %x read_only) [[0, 1], [2]]
    gpu.launch blocks(...) in (%gx = %c16, ...) threads(...) in (%sx = %c128, ...)
        workgroup(%partials : memref<128xf32, #gpu.address_space<workgroup>>) {
      %sum = scf.for %c = %tid to %c64 step %c128 iter_args(...) { addf }
      ... tree over %partials with gpu.barrier; mean; variance; rsqrt
      scf.for %c = %tid to %c64 step %c128 { ... memref.store }
    }
    %y = bufferization.to_tensor %out restrict writable
    ```
  }];
  let dependentDialects = ["gpu::GPUDialect", "arith::ArithDialect",
                           "bufferization::BufferizationDialect",
                           "math::MathDialect", "memref::MemRefDialect",
                           "scf::SCFDialect"];
}

def ContractionKernels : Pass<"kiln-gpu-contraction-kernels", "func::FuncOp"> {
  let summary = "f32 contractions and convolutions (and their "
                "elementwise epilogues) as tiled shared-memory kernels";
  let description = [{
    Each f32 linalg contraction (matmul, batch_matmul, Linear layers
    on [B, S, H], transposed operands) and convolution (implicit GEMM: rows
    the batch and output pixels, columns the output channels, the filter
    window and input channels reduced; not depthwise) becomes, with every
    dimension group linearized and operands read through their indexing
    maps, a `gpu.launch` on buffers (static extents but for the rows,
    which may be run-time ones: a symbolic batch or sequence; the row
    tiles are then counted and guarded at run time, with no split K,
    counted as `gpu_contraction_kernels_run_time_rows`): a
    64x64 block tile per block of 16x16 threads, 16-deep K steps staged
    through shared memory (workgroup attributions), a 4x4 register tile per
    thread accumulated with FMAs. A fill init starts the accumulators; any
    other init is added. The only consumer, when it is an all-parallel
    `linalg.generic` reading the result elementwise (through reshapes), is
    applied in the store (bias, activation, residual) and counted as
    `epilogues_fused`. With `precision` tf32, bf16 or fp16 the products
    run on tensor cores instead (ContractionMma.cpp): 128x128 tiles of 8
    warps for problems with at least 96 of them, else 64x64 tiles of 4
    warps; 32-deep steps (16 for tf32) through shared-memory stages in
    the operand type (f32 rounded to tf32). An operand already in that
    type (f16/bf16, or a narrowed weight) is copied by `nvvm.cp.async`
    into 3-4 unpadded stages, swizzled by 16-byte chunk, the slice 2-3
    steps ahead issued each step; others are fetched into registers
    (16-byte vectors when the buffer is aligned at run time) during the
    products and stored into the other of two padded stages; one barrier
    per step; fragments by `nvvm.ldmatrix` x4 (16-bit operands);
    `nvvm.mma.sync` m16n8k16 (m16n8k8 for tf32) with f32 accumulators, the
    same init and epilogue. At bf16/fp16, an f32 constant operand (a
    weight) is read from a copy rounded to the operand type at compile
    time (`narrowed_weight`, counted as `gpu_weights_narrowed`; one copy
    per constant), so the weights take half the bytes; a run-time f32
    operand of a problem with 128x128 tiles is rounded by an elementwise
    op of its own before the kernel (counted as `gpu_activations_narrowed`;
    one per operand; or, when only that contraction reads it and an
    elementwise op makes it, by that op, so that a producing kernel's
    epilogue stores it narrow), so that it too is copied by cp.async. A problem with fewer than
    64 tiles and a deep K (a 7x7 convolution at batch 1) splits K across
    blocks (grid z): each block writes its slice's partial product to a
    workspace and a second kernel sums the slices, then applies the fill,
    init and epilogue.

    Before:
    ```mlir
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<100x300xf32>)
    %c = linalg.matmul ins(%a, %b : tensor<100x200xf32>, tensor<200x300xf32>)
        outs(%f : tensor<100x300xf32>) -> tensor<100x300xf32>
    %y = linalg.generic {...} ins(%c, %bias) outs(%e) { addf, maximumf }
    ```
    After:
    ```mlir
    %A = bufferization.to_buffer %a read_only : ... to memref<100x200xf32>
    %B = bufferization.to_buffer %b read_only : ... to memref<200x300xf32>
    %out = memref.alloc() {alignment = 64 : i64} : memref<100x300xf32>
    gpu.launch blocks(...) in (%gx = %c5, %gy = %c2, %gz = %c1)
        threads(...) in (%sx = %c16, %sy = %c16, %sz = %c1)
        workgroup(%As : memref<16x65xf32, #gpu.address_space<workgroup>>,
                  %Bs : memref<16x64xf32, #gpu.address_space<workgroup>>) {
      scf.for %k0 = %c0 to %c200 step %c16 iter_args(16 x f32) {
        ... loads into %As, %Bs; gpu.barrier; 16 x 16 math.fma; gpu.barrier
      }
      ... bias load, addf, maximumf, memref.store into %out (guarded)
    }
    %y = bufferization.to_tensor %out restrict writable
    ```
  }];
  let options = [
    Option<"precision", "precision", "std::string", "\"fp32\"",
           "Arithmetic of the products: fp32 (SIMT FMAs), or tf32, bf16, "
           "fp16 on tensor cores with f32 accumulation">,
    Option<"matrixUnit", "matrix-unit", "std::string", "\"mma.sync\"",
           "The device's matrix instructions: mma.sync (NVIDIA sm_80 and "
           "up), mfma (AMD Instinct, wave64), or none (f16 and bf16 "
           "contractions use SIMT FMAs; precision must be fp32)">,
  ];
  let dependentDialects = ["gpu::GPUDialect", "arith::ArithDialect",
                           "bufferization::BufferizationDialect",
                           "math::MathDialect", "memref::MemRefDialect",
                           "scf::SCFDialect", "vector::VectorDialect",
                           "LLVM::LLVMDialect", "NVVM::NVVMDialect",
                           "amdgpu::AMDGPUDialect"];
}

def ParallelDimsFirst : Pass<"kiln-gpu-parallel-dims-first", "func::FuncOp"> {
  let summary = "Put the parallel dims of reductions outermost so each "
                "output gets its own GPU thread";
  let description = [{
    convert-linalg-to-parallel-loops maps only a linalg op's outermost run
    of parallel dims to scf.parallel (threads, in kiln-gpu-form-kernels);
    parallel dims after a reduction dim became sequential loops, and a
    reduction with its parallel dims last (a global average pool over NHWC)
    ran in one thread. This pass interchanges each linalg.generic that has
    both kinds of dims so the parallel ones come first, each kind in its
    original order.

    Before:
    ```mlir
    linalg.generic {indexing_maps = [(n, h, w, c) -> (n, h, w, c),
                                     (n, h, w, c) -> (n, c)],
                    iterator_types = ["parallel", "reduction", "reduction",
                                      "parallel"]}
        ins(%x : tensor<1x7x7x512xf32>) outs(%acc : tensor<1x512xf32>)
    ```
    After:
    ```mlir
    linalg.generic {indexing_maps = [(n, c, h, w) -> (n, h, w, c),
                                     (n, c, h, w) -> (n, c)],
                    iterator_types = ["parallel", "parallel", "reduction",
                                      "reduction"]}
        ins(%x : tensor<1x7x7x512xf32>) outs(%acc : tensor<1x512xf32>)
    ```
  }];
  let dependentDialects = ["linalg::LinalgDialect"];
}

def HostScalars : Pass<"kiln-gpu-host-scalars", "func::FuncOp"> {
  let summary = "Keep on the host the scalars it computes and passes "
                "through small buffers (symbolic dims)";
  let description = [{
    Runs after bufferization, before the arena is planned. Over symbolic
    dims the host computes scalars from the extents that the program
    passes through small buffers: a Reshape's or Unsqueeze's extents
    stored into a shape buffer, a run-time check's value stored into a 0-d
    buffer and compared by a 0-d `linalg.generic`. On a GPU target those
    buffers would be device memory the host cannot read back (and the
    check would trap in a one-thread kernel). Within a block, for a small
    static buffer whose every use is a store or load at constant indices,
    a 0-d generic or a reshape's shape: a stored element is known; a 0-d
    generic over known inputs is evaluated on the host (its body cloned);
    a load of a known element is that value; a `memref.reshape` of known
    extents becomes a `memref.reinterpret_cast` (row-major strides).
    Buffers left with stores only are erased. Others are left alone.

    Before:
    ```mlir
    %shape = memref.alloc() : memref<2xindex>
    memref.store %c1, %shape[%c0] : memref<2xindex>
    memref.store %n, %shape[%c1] : memref<2xindex>
    %r = memref.reshape %src(%shape)
        : (memref<?xi64>, memref<2xindex>) -> memref<1x?xi64>
    %end = memref.alloc() : memref<i64>
    memref.store %e, %end[] : memref<i64>
    %ok = memref.alloc() : memref<i1>
    linalg.generic {indexing_maps = [], iterator_types = []}
        ins(%end : memref<i64>) outs(%ok : memref<i1>) {
    ^bb0(%in: i64, %out: i1):
      %le = arith.cmpi sle, %in, %c512 : i64
      linalg.yield %le : i1
    }
    %v = memref.load %ok[] : memref<i1>
    cf.assert %v, "node '/Slice': ..."
    ```
    After:
    ```mlir
    %r = memref.reinterpret_cast %src to offset: [0], sizes: [1, %n],
        strides: [%n, 1] : memref<?xi64> to memref<1x?xi64>
    %le = arith.cmpi sle, %e, %c512 : i64
    cf.assert %le, "node '/Slice': ..."
    ```
  }];
  let dependentDialects = ["memref::MemRefDialect", "arith::ArithDialect"];
}

def OutlineKernels : Pass<"kiln-gpu-outline-kernels", "ModuleOp"> {
  let summary = "Outline the entry's gpu.launch bodies into one gpu.module";
  let description = [{
    Views, constants and index arithmetic a launch reads are cloned into
    it, so every kernel takes only the entry's arguments (the buffers).
    Every `gpu.launch` of the entry becomes a `gpu.func` named
    `kiln_kernel_N` (N in program order) in one `gpu.module
    @kiln_kernels`, launched by `gpu.launch_func`. Each kernel records the
    ONNX nodes of the ops it runs (from their locations) as `kiln.onnx_nodes`,
    for `kiln inspect`, `--report` and launch errors.

    Before:
    ```mlir
    func.func @main(%x: memref<8xf32>, %y: memref<8xf32>) {
      gpu.launch blocks(...) in (...) threads(...) in (...) { ... }
    }
    ```
    After:
    ```mlir
    module attributes {gpu.container_module} {
      func.func @main(%x: memref<8xf32>, %y: memref<8xf32>) {
        gpu.launch_func @kiln_kernels::@kiln_kernel_0 blocks in (...)
            threads in (...) args(%x : memref<8xf32>, %y : memref<8xf32>)
      }
      gpu.module @kiln_kernels {
        gpu.func @kiln_kernel_0(%x: memref<8xf32>, %y: memref<8xf32>) kernel
            attributes {kiln.onnx_nodes = ["relu_1"]} { ... }
      }
    }
    ```
  }];
  let options = [
    Option<"entryName", "entry", "std::string", "\"main\"",
           "Name of the entry function">,
  ];
  let dependentDialects = ["gpu::GPUDialect"];
}

def DedupeKernels : Pass<"kiln-gpu-dedupe-kernels", "ModuleOp"> {
  let summary = "One kernel for launches that differ only in buffer offsets";
  let description = [{
    The layers of a transformer repeat the same kernels; once outlined,
    their copies differ only in the constant byte offsets of the views they
    take of the arena and the weights. Every such offset becomes an index
    argument of the kernel (appended, in walk order), and kernels that are
    then identical (compared as printed, names, ONNX nodes and locations
    aside) become the first of them, which runs the ONNX nodes of all;
    each launch passes its own offsets. A kernel with no twin is left as
    it was. The device code generator and the assembler then see each
    kernel once: BERT-base's twelve layers share one set.

    Before:
    ```mlir
    gpu.launch_func @kiln_kernels::@kiln_kernel_0 ... args(%arena : memref<64xi8>)
    gpu.launch_func @kiln_kernels::@kiln_kernel_1 ... args(%arena : memref<64xi8>)
    gpu.module @kiln_kernels {
      gpu.func @kiln_kernel_0(%a: memref<64xi8>) kernel {
        %c0 = arith.constant 0 : index
        %v = memref.view %a[%c0][] : memref<64xi8> to memref<8xf32>
        ...
      }
      gpu.func @kiln_kernel_1(%a: memref<64xi8>) kernel {
        %c32 = arith.constant 32 : index
        %v = memref.view %a[%c32][] : memref<64xi8> to memref<8xf32>
        ...
      }
    }
    ```
    After:
    ```mlir
    gpu.launch_func @kiln_kernels::@kiln_kernel_0 ... args(%arena : memref<64xi8>, %c0 : index)
    gpu.launch_func @kiln_kernels::@kiln_kernel_0 ... args(%arena : memref<64xi8>, %c32 : index)
    gpu.module @kiln_kernels {
      gpu.func @kiln_kernel_0(%a: memref<64xi8>, %shift: index) kernel {
        %v = memref.view %a[%shift][] : memref<64xi8> to memref<8xf32>
        ...
      }
    }
    ```
  }];
  let dependentDialects = ["gpu::GPUDialect", "arith::ArithDialect"];
}

def LaunchCalls : Pass<"kiln-gpu-launch-calls", "ModuleOp"> {
  let summary = "Turn gpu.launch_func into calls of the runtime's launch";
  let description = [{
    The host side of a GPU artifact launches its kernels through the
    runtime (kiln_runtime_callbacks.launch in abi.h), by index into the
    artifact's kernel table (the order of the `gpu.func`s of
    `@kiln_kernels`). Each `gpu.launch_func` becomes a call of
    `@__kiln_gpu_launch(runtime, kernel, grid x/y/z, block x/y/z,
    dynamic shared bytes, args)` where `args` holds one 64-bit slot per
    kernel parameter: a buffer's device address, an integer, or a float's
    bits. The entry gets the runtime argument (`{kiln.runtime}`) if it has
    none. The `gpu.module` is left for the device leaf.

    Before:
    ```mlir
    gpu.launch_func @kiln_kernels::@kiln_kernel_0 blocks in (%c5, %c1, %c1)
        threads in (%c256, %c1, %c1) args(%x : memref<8xf32>)
    ```
    After:
    ```mlir
    %args = memref.alloca() : memref<1xi64>
    %p = memref.extract_aligned_pointer_as_index %x : memref<8xf32> -> index
    memref.store (arith.index_cast %p : index to i64), %args[%c0]
    func.call @__kiln_gpu_launch(%runtime, %c0_i32, %c5_i32, %c1_i32,
        %c1_i32, %c256_i32, %c1_i32, %c1_i32, %c0_i32, %slots)
        : (memref<0xi8>, i32, ..., !llvm.ptr) -> i32
    ```
  }];
  let options = [
    Option<"entryName", "entry", "std::string", "\"main\"",
           "Name of the entry function">,
  ];
  let dependentDialects = ["func::FuncDialect", "memref::MemRefDialect",
                           "arith::ArithDialect", "LLVM::LLVMDialect"];
}

def EmulateKernels : Pass<"kiln-gpu-emulate-kernels", "ModuleOp"> {
  let summary = "Compile the kernels of @kiln_kernels for the host CPU";
  let description = [{
    The emulator leaf: every `gpu.func` of `@kiln_kernels` becomes a host
    `func.func` of the same name taking its parameters and a last
    `memref<12xi32>` argument, the thread's coordinates as the runtime's
    emulator fills them (kiln_emulated_thread in abi.h: thread id x/y/z,
    block id, block size, grid size). `gpu.thread_id`, `gpu.block_id`,
    `gpu.block_dim` and `gpu.grid_dim` read it; `gpu.barrier` calls
    `@__kiln_emulator_barrier(state)`, which yields to the block's other
    threads; `nvvm.mma.sync` calls `@__kiln_emulator_mma(state, kind,
    slots)` with the lane's fragments as 32-bit words, the warp's product
    computed by the runtime (`nvvm.ldmatrix`, AMD's mfma and `gpu.shuffle`
    likewise); `nvvm.cp.async` becomes the copy itself, done at once (bytes
    past its source size zeroed), and its commit and wait groups go: the
    emulator runs a block's threads one after another between barriers.
    Workgroup (shared) memory becomes host globals: the emulator runs one
    block at a time. The kernel table goes to the module attribute
    `kiln.gpu.kernels` and the `gpu.module` is erased.

    Before:
    ```mlir
    gpu.module @kiln_kernels {
      gpu.func @kiln_kernel_0(%x: memref<8xf32>) kernel {
        %t = gpu.thread_id x
        ...
      }
    }
    ```
    After:
    ```mlir
    func.func @kiln_kernel_0(%x: memref<8xf32>, %state: memref<12xi32>) {
      %t32 = memref.load %state[%c0] : memref<12xi32>
      %t = arith.index_castui %t32 : i32 to index
      ...
    }
    ```
  }];
  let dependentDialects = ["func::FuncDialect", "memref::MemRefDialect",
                           "arith::ArithDialect", "vector::VectorDialect"];
}

def LowerVectorOps : Pass<"kiln-gpu-lower-vector-ops"> {
  let summary = "Lower the vector ops of kernels to ones the device "
                "conversions take one to one";
  let description = [{
    convert-gpu-to-nvvm and convert-gpu-to-rocdl convert vector ops to the
    LLVM dialect one to one; this pass first applies the progressive
    lowerings convert-vector-to-llvm applies on the CPU: 1-D transfers to
    (masked) loads and stores, permutation maps, broadcasts, masks,
    contractions to FMAs, multi-reductions, transposes, shape casts.
    Runs on the `gpu.module`.

    Before:
    ```mlir
    %v = vector.transfer_read %m[%i, %j], %zero {in_bounds = [true]}
        : memref<16x64xf32>, vector<16xf32>
    ```
    After:
    ```mlir
    %v = vector.load %m[%i, %j] : memref<16x64xf32>, vector<16xf32>
    ```
  }];
  let dependentDialects = ["vector::VectorDialect", "memref::MemRefDialect",
                           "arith::ArithDialect", "scf::SCFDialect"];
}

#endif // KILN_BACKENDS_GPU_PASSES_TD
