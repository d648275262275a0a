#ifndef KILN_BACKENDS_CPU_PASSES_TD
#define KILN_BACKENDS_CPU_PASSES_TD

include "mlir/Pass/PassBase.td"
// The passes for run-time extents (symbolic dims, data-dependent results).
include "RunTimeShapePasses.td"
// Where buffers live: stack scratch, the arena, the weights.
include "MemoryPasses.td"

def MarkInputsReadOnly : Pass<"kiln-mark-inputs-readonly", "ModuleOp"> {
  let summary = "Forbid bufferization from writing into the entry's inputs";
  let description = [{
    The entry function's tensor arguments become the caller's input buffers,
    which the runtime may share between runs and sessions. One-shot
    bufferization treats function arguments as writable unless told
    otherwise, so this pass marks every tensor argument of the entry function
    `bufferization.writable = false`; bufferization then copies before any
    in-place update instead of clobbering an input.

    Before:
    ```mlir
    func.func @main(%x: tensor<4xf32>) -> tensor<4xf32>
    ```
    After:
    ```mlir
    func.func @main(%x: tensor<4xf32> {bufferization.writable = false})
        -> tensor<4xf32>
    ```
  }];
  let options = [
    Option<"entryName", "entry", "std::string", "\"main\"",
           "Name of the entry function">,
  ];
  let dependentDialects = ["bufferization::BufferizationDialect"];
}

def FuseElementwise : Pass<"kiln-fuse-elementwise", "func::FuncOp"> {
  let summary = "Fuse elementwise producers into consumers that read each "
                "element once";
  let description = [{
    linalg-fuse-elementwise-ops with a stricter rule: an elementwise producer
    with one use is fused into a consumer only when the consumer's indexing
    map for it is a permutation of all the consumer's loops, so nothing is
    computed more than once. Upstream's default fused a GELU into the matmul
    that read it, evaluating erf once per multiply-add. Reshapes are
    propagated through elementwise ops, not through contractions.

    Before:
    ```mlir
    %g = linalg.generic {iterator_types = ["parallel", "parallel"]}
        ins(%x : tensor<4x8xf32>) ... { math.erf ... }
    %y = linalg.matmul ins(%g, %w : tensor<4x8xf32>, tensor<8x2xf32>) ...
    %z = linalg.generic {iterator_types = ["parallel", "parallel"]}
        ins(%y ...) ... { arith.maximumf ... }
    ```
    After: the matmul still reads %g (not fused: it reads each element of %g
    twice); a consumer of %y that is elementwise would absorb its producer.

    A generic input whose every element is one constant (a `linalg.fill` of
    a constant, or a generic with no inputs yielding one, through reshapes)
    is replaced in the body by that constant and the operand dropped: a
    loop loading a 0-d tensor from the arena may alias its own stores, and
    LLVM left such loops scalar.
    Before:
    ```mlir
    %s = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], ...}
        outs(%e : tensor<1xf32>) { linalg.yield %cst_0_125 : f32 }
    %c = tensor.collapse_shape %s [] : tensor<1xf32> into tensor<f32>
    %y = linalg.generic ins(%x, %c : tensor<12x128xf32>, tensor<f32>) ... {
    ^bb0(%in: f32, %scale: f32, %out: f32):
      %m = arith.mulf %in, %scale : f32
    ```
    After:
    ```mlir
    %y = linalg.generic ins(%x : tensor<12x128xf32>) ... {
    ^bb0(%in: f32, %out: f32):
      %cst = arith.constant 1.250000e-01 : f32
      %m = arith.mulf %in, %cst : f32
    ```
  }];
  let dependentDialects = ["linalg::LinalgDialect", "tensor::TensorDialect",
                           "affine::AffineDialect"];
}

def TileContractions : Pass<"kiln-tile-contractions", "func::FuncOp"> {
  let summary = "Tile f32 matmuls and convolutions into vectorized register "
                "tiles";
  let description = [{
    Each static f32 contraction with one M, N and K loop whose N loop is the
    innermost dimension of the result and of B (matmul, batch_matmul, and
    conv_2d_nchw_fchw after an im2col rewrite) becomes: an `scf.forall` over
    MC x NC result tiles (run on the thread pool after bufferization), a K
    loop over KC blocks, loops over mr x nr register tiles, and a k loop whose
    body is mr broadcasts of A times one row of B accumulated with FMAs into
    a vector<mr x nr> that stays in registers for the whole k loop. Edge tiles
    use masked vectors. Tile sizes come from the vector width and register
    count (backends/cpu/TileSizes.h).

    bf16 weights (`bf16-weights`, from `kiln compile --precision=bf16`):
    constant B panels are stored in bf16 and extended as each row is loaded;
    with `bf16-dot` (CPUs with AVX512-BF16) they are stored as k-pairs
    [N/nr][K/2][nr][2], A is converted to bf16 once, and the k loop walks
    pairs with `x86vector.avx512.dot` (vdpbf16ps, fp32 accumulation):

    ```mlir
    scf.for %kp = %c0 to %c128 step %c1 iter_args(%r0 = %acc0, ...) {
      %b = vector.transfer_read %bp[%c0, %kp, %c0] ... : vector<64xbf16>
      %b0 = vector.extract_strided_slice %b {offsets = [0], sizes = [32] ...}
      %p = vector.transfer_read %a16[%m, %k2] ... : vector<2xbf16>
      %a0 = vector.bitcast %p : vector<2xbf16> to vector<1xi32>
      ... broadcast to vector<16xi32>, bitcast to vector<32xbf16>
      %f0 = x86vector.avx512.dot %r0, %a, %b0 : vector<32xbf16> -> vector<16xf32>
    ```

    int8 (`int8-dot`, x86 with AVX512-VNNI): the generics that
    kiln.quantized_matmul lowers to (marked `kiln.int8_contraction`) get
    their constant int8 B packed as k-quads [N/nr][K/4][nr][4]; the k loop
    walks quads with `vpdpbusd` (uint8 A x int8 B, i32 sums), and each K
    block's i32 sums are converted and added to the f32 accumulator:

    ```mlir
    %q = vector.transfer_read %a[%m, %k4] ... : vector<4xi8>   (A's 4 bytes)
    ... bitcast to i32, broadcast to vector<16xi32>, bitcast to vector<64xi8>
    %s0 = llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"(%r0, %a, %b0)
        : (vector<16xi32>, vector<64xi8>, vector<64xi8>) -> vector<16xi32>
    ```

    Epilogues (`fuse-epilogues`, on by default): when the contraction's
    result, through reshapes and panel slices, has one use that is an
    all-parallel `linalg.generic` reading it through an identity map (its
    other operands through broadcast maps, dimensions in order, computed
    before the contraction; a body of scalar arith/math ops), the register
    tiles apply that body to their accumulators on the last K block and
    store its values; the generic is replaced by the contraction's result.

    Before:
    ```mlir
    %y = linalg.matmul ins(%a, %b : tensor<20x300xf32>, tensor<300x40xf32>)
                       outs(%zero : tensor<20x40xf32>) -> tensor<20x40xf32>
    %z = linalg.generic {indexing_maps = [#id, #col, #id], ...}
        ins(%y, %bias : tensor<20x40xf32>, tensor<40xf32>) ... {
      %s = arith.addf %x, %c : f32
      %r = arith.maximumf %s, %cst0 : f32
      linalg.yield %r : f32
    }
    ```
    After (per register tile, after the k loop):
    ```mlir
    %last = arith.cmpi eq, %k_end, %c300 : index
    %t = scf.if %last -> (tensor<?x?xf32>) {
      %b = vector.transfer_read %bias[%col], %f0 : tensor<40xf32>, vector<32xf32>
      %s0 = arith.addf %acc#0, %b : vector<32xf32>
      %r0 = arith.maximumf %s0, %zeros : vector<32xf32>
      %w0 = vector.transfer_write %r0, %tile[%c0, %c0] ...
      ...
    } else {
      %w0 = vector.transfer_write %acc#0, %tile[%c0, %c0] ...
      ...
    }
    ```

    Before:
    ```mlir
    %c = linalg.matmul ins(%a, %b : tensor<64x64xf32>, tensor<64x64xf32>)
                       outs(%acc : tensor<64x64xf32>) -> tensor<64x64xf32>
    ```
    After (AVX-512: 8 x 32 register tile):
    ```mlir
    %c = scf.forall (%i, %j) = (0, 0) to (64, 64) step (64, 64) ... {
      scf.for %m = %c0 to %c64 step %c8 ... {
        scf.for %n = %c0 to %c64 step %c32 ... {
          %acc0 = vector.transfer_read ... : tensor<64x64xf32>, vector<32xf32>
          ...
          scf.for %k = %c0 to %c64 step %c1 iter_args(%r0 = %acc0, ...) {
            %b = vector.transfer_read %b ... : vector<32xf32>
            %a0 = vector.broadcast %a00 : f32 to vector<32xf32>
            %f0 = vector.fma %a0, %b, %r0 : vector<32xf32>
            ...
    ```
  }];
  let options = [
    Option<"vectorBits", "vector-bits", "int64_t", "512",
           "Width of one vector register in bits">,
    Option<"registers", "registers", "int64_t", "32",
           "Number of vector registers">,
    Option<"cacheTileM", "tile-m", "int64_t", "0",
           "Rows of a thread-pool tile (0: from the cost model)">,
    Option<"cacheTileN", "tile-n", "int64_t", "0",
           "Columns of a thread-pool tile (0: from the cost model)">,
    Option<"cacheTileK", "tile-k", "int64_t", "0",
           "Reduction block (0: from the cost model)">,
    Option<"releaseWeights", "release-weights", "bool", "false",
           "Free the data of each weight once packed and unused (only when "
           "the function is the only IR of its context)">,
    Option<"fuseEpilogues", "fuse-epilogues", "bool", "true",
           "Apply a single elementwise consumer in the register tiles">,
    Option<"bf16Weights", "bf16-weights", "bool", "false",
           "--precision=bf16: store constant B operands (weights) in bf16">,
    Option<"bf16Dot", "bf16-dot", "bool", "false",
           "With bf16-weights, multiply bf16 k-pairs of A and B with "
           "AVX512-BF16 (x86vector.avx512.dot) instead of extending B">,
    Option<"int8Dot", "int8-dot", "bool", "false",
           "Tile kiln.quantized_matmul's int8 contractions with AVX512-VNNI "
           "(vpdpbusd) on int8 k-quads">,
  ];
  let dependentDialects = ["scf::SCFDialect", "vector::VectorDialect",
                           "affine::AffineDialect", "tensor::TensorDialect",
                           "arith::ArithDialect", "x86vector::X86VectorDialect",
                           "LLVM::LLVMDialect"];
}

def TileNhwcConvolutions : Pass<"kiln-tile-nhwc-convolutions", "func::FuncOp"> {
  let summary = "Direct or Winograd NHWC convolutions and depthwise "
                "convolutions as vector FMA loops, with their elementwise "
                "epilogues";
  let description = [{
    Static f32 `linalg.conv_2d_nhwc_hwcf` with a constant filter becomes a
    direct convolution in the register tiles of kiln-tile-contractions
    (M = output pixels, N = filters, K = KH*KW*C): the filter is packed at
    compile time into nr-lane panels [ceil(F/nr)][K][nr]; the input is read
    in place as [N, H, W*C], each register-tile row broadcasting from its
    own pixel's address (one run of KW*C contiguous floats per filter row
    when the horizontal dilation is 1, else C per tap; no im2col). K blocks
    hold about KC floats (several runs, or a run split in chunks; KC = 1024
    unless `tile-k` says otherwise: nhwcConvolutionTileK in TileSizes.h). Static
    f32 `linalg.depthwise_conv_2d_nhwc_hwc` becomes, per output row (an
    `scf.forall` over batch and rows), blocks of mr pixels times one vector
    of channels accumulated over the taps with FMAs; a zero `tensor.pad`
    producer is not read, its source is, with border checks. A
    `linalg.fill` init is replaced by starting the accumulators from its
    value, a `linalg.broadcast` of a per-channel bias by starting them from
    the bias vector (neither is materialized). Edges: rows/pixels past the
    end repeat the last valid one, columns/channels past the end are masked.
    With `int8-dot` (x86 AVX512-VNNI), the int8 convolution generic that
    kiln.conv {input_zero_point} lowers to (`kiln.int8_conv`: uint8 NHWC
    input, constant int8 HWCF filter, f32 result starting from the
    zero-point correction) takes the same loop nest with the filter packed
    into k-quads [ceil(F/nr)][K/4][4 nr] and, per quad, 4 input bytes
    broadcast as one i32 and `vpdpbusd` (an LLVM intrinsic call) into i32
    sums, converted and added to the f32 rows after each K block (blocks of
    4 KC bytes):
    ```mlir
    %q = vector.transfer_read %rows[%b, %iy, %ix_j] : tensor<1x10x160xi8>, vector<4xi8>
    %a = vector.bitcast (vector.broadcast (vector.bitcast %q : vector<1xi32>)) : vector<64xi8>
    %s = llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"(%acc, %a, %w) : (vector<16xi32>, vector<64xi8>, vector<64xi8>) -> vector<16xi32>
    ```
    Other element types, dynamic shapes and non-constant filters are left
    alone.

    Winograd (`winograd`: 2 or 4 forces F(m x m, 3 x 3) for every 3x3
    stride-1 undilated f32 convolution with a constant filter, -1 lets a
    cost model choose F(4x4), F(2x2) or the direct kernel per convolution,
    0 never; WinogradNhwc.cpp): the filter becomes U = G g G^T at compile
    time, [alpha^2, C, F] (alpha = m + 2); an `scf.forall` over the
    (batch, tile row, tile column) tiles reads each (alpha x alpha) input
    tile as channel vectors and writes V = B^T d B into [alpha^2, T, C]
    (the sparse matrices unrolled into adds and FMAs by constants); a
    `linalg.batch_matmul` V x U (tiled later by kiln-tile-contractions); a
    second forall computes A^T M A per tile and filter vector, adds the
    fill/bias seed, applies the epilogue and writes the m x m outputs
    (positions past the output skipped). A zero `tensor.pad` producer grows
    at its high end so the last tiles exist. Before: a padded 3x3
    convolution as above, 7 x 9 outputs. After (F(4x4, 3x3), 2 x 3 tiles):
    ```mlir
    %u = arith.constant dense_resource<winograd_filter> : tensor<36x16x40xf32>
    %p = tensor.pad %x low[0, 1, 1, 0] high[0, 2, 4, 0] ... to tensor<1x10x14x16xf32>
    %v = scf.forall (%n, %ty, %tx) in (1, 2, 3) shared_outs(%s = %e0) {
      scf.for %c ... {        // 36 transfer_reads, B^T d B, 36 transfer_writes
    }
    %m = linalg.batch_matmul ins(%v, %u : tensor<36x6x16xf32>, tensor<36x16x40xf32>)
        outs(%zero : tensor<36x6x40xf32>)
    %y = scf.forall (%n, %ty, %tx) in (1, 2, 3) shared_outs(%o = %e) {
      scf.for %f ... {        // 36 reads of %m, A^T M A, + bias, epilogue, 16 writes
    }
    ```

    Epilogues (`fuse-epilogues`, on by default): when the convolution's
    result has one use, an all-parallel `linalg.generic` as matched by
    kiln-tile-contractions (identity map on the result, broadcast maps on the
    other operands, which are computed before the convolution, a body of
    scalar arith/math ops: bias, ReLU, Clip, residual add), both kernels
    apply its body to their row vectors (channels in the lanes) before the
    final store: the direct convolution on its last K block, the depthwise
    one after the taps. The generic is replaced by the kernel's result.

    Before:
    ```mlir
    %w = arith.constant dense<...> : tensor<3x3x16x40xf32>
    %y = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>,
                                   strides = dense<1> : tensor<2xi64>}
        ins(%x, %w : tensor<1x10x10x16xf32>, tensor<3x3x16x40xf32>)
        outs(%acc : tensor<1x8x8x40xf32>) -> tensor<1x8x8x40xf32>
    ```
    After (AVX-512: 8 x 32 register tile; 64 pixels in 8 row tiles):
    ```mlir
    %p = arith.constant dense_resource<packed_filter> : tensor<2x144x32xf32>
    %rows = tensor.collapse_shape %x [[0], [1], [2, 3]]
        : tensor<1x10x10x16xf32> into tensor<1x10x160xf32>
    %r = scf.forall (%b, %i, %j) in (1, 8, 1) shared_outs(%o = %flat) ... {
      scf.for %blk = %c0 to %c1 step %c1 ... {       // K blocks
        scf.for %m = %c0 to %nrows step %c8 ... {    // register-tile rows
          scf.for %pp = %c0 to %npanels step %c1 ... {
            %c0_ = vector.transfer_read ... vector<32xf32>   // x8
            scf.for %kh = %c0 to %c3 step %c1 ... {          // filter rows
              scf.for %j = %c0 to %c48 step %c1 iter_args(...) {
                %b = vector.transfer_read %p[%panel, %k, %c0] : vector<32xf32>
                %a = tensor.extract %rows[%b, %iy, %ix_j] : tensor<1x10x160xf32>
                %s = vector.broadcast %a : f32 to vector<32xf32>
                %f = vector.fma %s, %b, %acc0 : vector<32xf32>   // x8
    ```

    Before (depthwise with a bias init and a Clip(0, 6) consumer):
    ```mlir
    %bb = linalg.broadcast ins(%bias : tensor<32xf32>)
        outs(%e : tensor<1x8x8x32xf32>) dimensions = [0, 1, 2]
    %y = linalg.depthwise_conv_2d_nhwc_hwc ... outs(%bb) -> tensor<1x8x8x32xf32>
    %z = linalg.generic {indexing_maps = [#id, #id], ...} ins(%y ...) {
      %lo = arith.maximumf %in, %c0 : f32
      %hi = arith.minimumf %lo, %c6 : f32
      linalg.yield %hi : f32
    }
    ```
    After (per block of pixels and channel vector; %z is the forall's result):
    ```mlir
    %r = scf.forall (%b, %oy) in (1, 8) shared_outs(%o = %e) ... {
      scf.for %c ... {
        scf.for %x ... {
          %acc0 = vector.transfer_read %bias[%c], %f0 : vector<16xf32>
          %s = scf.for %kh ... { scf.for %kw ... { vector.fma ... } }
          %lo = arith.maximumf %s#0, %zeros : vector<16xf32>
          %hi = arith.minimumf %lo, %sixes : vector<16xf32>
          vector.transfer_write %hi, %row[%x0, %c] ...
    ```
  }];
  let options = [
    Option<"vectorBits", "vector-bits", "int64_t", "512",
           "Width of one vector register in bits">,
    Option<"registers", "registers", "int64_t", "32",
           "Number of vector registers">,
    Option<"fuseEpilogues", "fuse-epilogues", "bool", "true",
           "Apply a single elementwise consumer in the kernels">,
    Option<"cacheTileK", "tile-k", "int64_t", "0",
           "K block of direct convolutions in floats (0: the cost model)">,
    Option<"int8Dot", "int8-dot", "bool", "false",
           "Tile the int8 convolutions of kiln.conv {input_zero_point} with "
           "AVX512-VNNI (vpdpbusd) on int8 k-quads">,
    Option<"winograd", "winograd", "int64_t", "0",
           "3x3 stride-1 convolutions by Winograd F(m x m, 3 x 3): 0 never, "
           "2 or 4 that m for every one, -1 the cost model's choice">,
  ];
  let dependentDialects = ["scf::SCFDialect", "vector::VectorDialect",
                           "tensor::TensorDialect", "arith::ArithDialect",
                           "LLVM::LLVMDialect"];
}

def InterchangeContractions : Pass<"kiln-interchange-contractions"> {
  let summary = "Make the innermost loop of matmuls and convolutions parallel";
  let description = [{
    Matmul-, convolution- and pooling-like linalg ops iterate their
    reductions innermost, which LLVM does not vectorize (it may not reorder
    floating-point sums). This pass generalizes them and moves the output's
    last dimension innermost when every operand accesses it with a constant
    stride. Each output element still accumulates in the same order, so the
    results do not change. A stand-in for tiling and vectorization.

    Before:
    ```mlir
    %c = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x16xf32>)
                       outs(%acc : tensor<4x16xf32>) -> tensor<4x16xf32>
    ```
    After:
    ```mlir
    %c = linalg.generic {
        indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>,
                         affine_map<(d0, d1, d2) -> (d1, d2)>,
                         affine_map<(d0, d1, d2) -> (d0, d2)>],
        iterator_types = ["parallel", "reduction", "parallel"]}
        ins(%a, %b : tensor<4x8xf32>, tensor<8x16xf32>)
        outs(%acc : tensor<4x16xf32>) {...} -> tensor<4x16xf32>
    ```
  }];
  let dependentDialects = ["linalg::LinalgDialect"];
}

def CopyDuplicateResults : Pass<"kiln-copy-duplicate-results", "func::FuncOp"> {
  let summary = "Give a buffer returned more than once a copy per extra result";
  let description = [{
    After bufferization, a function may return the same buffer for several
    results (an ONNX tensor listed twice as a graph output).
    `buffer-results-to-out-params` with `hoist-static-allocs` cannot handle
    that, so each repeated operand of `func.return` becomes a fresh
    `memref.alloc` filled by `memref.copy`; the hoisting then turns every
    result into its own out-param.

    Before:
    ```mlir
    return %a, %a : memref<4xf32>, memref<4xf32>
    ```
    After:
    ```mlir
    %copy = memref.alloc() : memref<4xf32>
    memref.copy %a, %copy : memref<4xf32> to memref<4xf32>
    return %a, %copy : memref<4xf32>, memref<4xf32>
    ```
  }];
  let dependentDialects = ["memref::MemRefDialect"];
}

def ExpandStridedCopies : Pass<"kiln-expand-strided-copies"> {
  let summary = "Turn memref.copy between non-contiguous buffers into linalg.copy";
  let description = [{
    The LLVM lowering of `memref.copy` calls the MLIR runtime's `memrefCopy`
    when either side is not contiguous (for example the subview that
    bufferized `tensor.pad` copies into). Artifacts must not import anything
    beyond libc and libm, so such copies become `linalg.copy`, which later
    lowers to loops. Contiguous copies stay `memref.copy` (a `memcpy`).

    Before:
    ```mlir
    memref.copy %src, %sub : memref<2x5xf32>
        to memref<2x5xf32, strided<[7, 1], offset: 8>>
    ```
    After:
    ```mlir
    linalg.copy ins(%src : memref<2x5xf32>)
        outs(%sub : memref<2x5xf32, strided<[7, 1], offset: 8>>)
    ```
  }];
  let options = [
    Option<"allCopies", "all", "bool", "false",
           "Every copy, contiguous ones too (GPU kernels copy in parallel "
           "loops, not with one thread's memcpy)">,
  ];
  let dependentDialects = ["linalg::LinalgDialect"];
}

def OutlineParallelLoops : Pass<"kiln-outline-parallel-loops", "ModuleOp"> {
  let summary = "Run big parallel loops on the runtime's thread pool";
  let description = [{
    Adds the trailing argument `%runtime: memref<0xi8> {kiln.runtime}` (the
    `kiln_runtime_callbacks` pointer, passed by the artifact's entry) to the
    entry function. Each `scf.parallel` at the top level or inside
    sequential loops (`scf.for`, the steps of an `scf.while`: a run-time
    Loop, Scan or recurrence) and branches (not inside another parallel
    loop), with
    constant lower bounds and steps and at least `min-work` estimated
    operations, is outlined: its leading dimensions
    (just enough for `min-chunks` items) are linearized into `[0, n)`, and
    the loop becomes a call to `@__kiln_parallel_for_K(n, %runtime, <entry
    arguments>)`, a declaration the artifact writer defines: it calls
    `runtime->parallel_for(pool, n, trampoline, ctx)`, and the trampoline
    calls `@__kiln_parallel_body_K(begin, end, <entry arguments>)`, which
    runs items `[begin, end)` (the remaining dimensions stay an inner
    `scf.parallel`). Values the loop uses from outside must be entry
    arguments or constants, globals and views of them, which are recreated
    in the body, or integer scalars (an enclosing loop's induction
    variable, the trip count of a run-time upper bound), which the entry
    stores in one-element stack buffers passed as extra pointer arguments,
    or buffers computed in the entry or carried by an enclosing loop (the
    state of an `scf.while`), passed as their base pointer with their
    run-time offset, sizes and strides as such scalars; other loops are
    left alone.

    Before:
    ```mlir
    func.func @main(%in: memref<64x56xf32>, %out: memref<64x56xf32>) {
      scf.parallel (%i, %j) = (%c0, %c0) to (%c64, %c56) step (%c1, %c1) {
        ... %out[%i, %j] ...
      }
    }
    ```
    After:
    ```mlir
    func.func private @__kiln_parallel_body_0(%begin: index, %end: index,
        %in: memref<64x56xf32>, %out: memref<64x56xf32>) {
      scf.for %i = %begin to %end step %c1 {
        scf.parallel (%j) = (%c0) to (%c56) step (%c1) { ... }
      }
      return
    }
    func.func private @__kiln_parallel_for_0(index, memref<0xi8>,
        memref<64x56xf32>, memref<64x56xf32>)
    func.func @main(%in: memref<64x56xf32>, %out: memref<64x56xf32>,
                    %runtime: memref<0xi8> {kiln.runtime}) {
      call @__kiln_parallel_for_0(%c64, %runtime, %in, %out) : ...
    }
    ```
  }];
  let options = [
    Option<"entryName", "entry", "std::string", "\"main\"",
           "Name of the entry function">,
    Option<"minWork", "min-work", "int64_t", "20000",
           "Smallest estimated op count worth a parallel_for">,
    Option<"minChunks", "min-chunks", "int64_t", "64",
           "Distribute leading dimensions until there are this many items">,
  ];
  let dependentDialects = ["arith::ArithDialect", "func::FuncDialect",
                           "scf::SCFDialect"];
}

def ExpandF16Conversions : Pass<"kiln-expand-f16-conversions"> {
  let summary = "Convert between f16 and f32 with integer arithmetic";
  let description = [{
    For x86 targets without F16C, where LLVM would call compiler-rt's
    `__extendhfsf2`/`__truncsfhf2`. Run after f16 arithmetic has been
    emulated in f32 (`arith-emulate-unsupported-floats`), so that these
    conversions are all that touch f16 values. Rounds to nearest even and
    keeps subnormals, infinities and NaN; f64 goes through f32, rounded to
    odd so that the final rounding is correct. With `soft=false` (x86 with
    F16C but without AVX512-FP16) only f64 -> f16 truncations are rewritten,
    into a round-to-odd f64 -> f32 and the hardware's f32 -> f16, since LLVM
    would call `__truncdfhf2` for them.

    Before:
    ```mlir
    %s = arith.extf %h : f16 to f32
    %h2 = arith.truncf %s : f32 to f16
    ```
    After (abridged):
    ```mlir
    %bits = arith.bitcast %h : f16 to i16
    %u = arith.extui %bits : i16 to i32
    ... arith.shli / arith.andi / arith.select ...
    %s = arith.bitcast %r : i32 to f32
    ...
    %h2 = arith.bitcast %t : i16 to f16
    ```
  }];
  let options = [
    Option<"soft", "soft", "bool", "true",
           "Expand every f16 <-> f32/f64 conversion (false: only f64 -> f16)">,
  ];
  let dependentDialects = ["arith::ArithDialect"];
}

def ApproximateMath : Pass<"kiln-approximate-math"> {
  let summary = "Replace transcendental math ops by inline polynomials";
  let description = [{
    Rewrites f32 (and, through f32, f16/bf16) `math.exp`, `expm1`, `log`,
    `log1p`, `log2`, `tanh`, `erf`, `erfc` into arith-only polynomial
    approximations, and simplifies `math.powf` with small constant
    exponents into multiplications or `math.sqrt`. The result needs no libm
    call, vectorizes, and keeps the artifact free of imports; the ops left
    (f64, `powf` with a variable exponent, ...) go to LLVM intrinsics or libm.

    Before:
    ```mlir
    %y = math.tanh %x : f32
    %z = math.powf %x, %two : f32   // %two = arith.constant 2.0
    ```
    After (abridged):
    ```mlir
    %y = ... arith.mulf / arith.addf / arith.divf / arith.select ...
    %z = arith.mulf %x, %x : f32
    ```
  }];
  let dependentDialects = ["arith::ArithDialect", "math::MathDialect",
                           "vector::VectorDialect"];
}

def ShareParallelBodies : Pass<"kiln-share-parallel-bodies", "ModuleOp"> {
  let summary = "One function for outlined loop bodies that differ only in "
                "buffer offsets";
  let description = [{
    After lowering to the LLVM dialect, outlined bodies
    (`@__kiln_parallel_body_K`) of loops that are the same on different
    buffers (the layers of a transformer, the blocks of a ResNet stage)
    differ only in the constant byte offsets of `llvm.getelementptr
    %arg[C]` from their pointer arguments (arena, weights). Such bodies
    become one `@__kiln_parallel_shared_N` taking the offsets that differ as
    trailing i64 arguments; offsets equal in all of them stay constants.
    Each body becomes a call with its own offsets, so LLVM optimizes and
    emits the loop once (ViT-B/16: 230 of its 249 bodies share 17
    functions; code 834 -> 258 KB, compile 28 -> 15 s).

    Before:
    ```mlir
    llvm.func @__kiln_parallel_body_0(%b: i64, %e: i64, %arena: !llvm.ptr) {
      %x = llvm.getelementptr %arena[0] : (!llvm.ptr) -> !llvm.ptr, i8
      %y = llvm.getelementptr %arena[4096] : (!llvm.ptr) -> !llvm.ptr, i8
      ... loop reading %x, writing %y ...
    }
    llvm.func @__kiln_parallel_body_1(%b: i64, %e: i64, %arena: !llvm.ptr) {
      %x = llvm.getelementptr %arena[0] : (!llvm.ptr) -> !llvm.ptr, i8
      %y = llvm.getelementptr %arena[8192] : (!llvm.ptr) -> !llvm.ptr, i8
      ... the same loop ...
    }
    ```
    After:
    ```mlir
    llvm.func @__kiln_parallel_shared_0(%b: i64, %e: i64, %arena: !llvm.ptr,
                                        %o: i64) {
      %x = llvm.getelementptr %arena[0] : (!llvm.ptr) -> !llvm.ptr, i8
      %y = llvm.getelementptr %arena[%o] : (!llvm.ptr, i64) -> !llvm.ptr, i8
      ... the loop ...
    }
    llvm.func @__kiln_parallel_body_0(%b: i64, %e: i64, %arena: !llvm.ptr) {
      %o = llvm.mlir.constant(4096 : i64) : i64
      llvm.call @__kiln_parallel_shared_0(%b, %e, %arena, %o) : ...
      llvm.return
    }
    llvm.func @__kiln_parallel_body_1(...) { ... 8192 ... }
    ```
  }];
  let dependentDialects = ["LLVM::LLVMDialect"];
}

def FlattenEmptyArguments : Pass<"kiln-flatten-empty-arguments", "ModuleOp"> {
  let summary = "Give zero-element entry buffers the type memref<0xT>";
  let description = [{
    The entry is lowered with the bare-pointer calling convention, which
    func-to-llvm refuses for a memref with a zero dim among others, leaving
    the whole entry unconverted. Such a buffer has no element to access:
    its argument becomes `memref<0xT>` and its uses get a zero-byte alloca
    of the old type. Run after bufferization (results are out-params).

    Before:
    ```mlir
    func.func @main(%x: memref<20x10x5xf32>, %y: memref<20x0x5xf32>) {
      memref.copy %c, %y : memref<20x0x5xf32> to memref<20x0x5xf32>
    ```
    After:
    ```mlir
    func.func @main(%x: memref<20x10x5xf32>, %y: memref<0xf32>) {
      %stand = memref.alloca() : memref<20x0x5xf32>
      memref.copy %c, %stand : memref<20x0x5xf32> to memref<20x0x5xf32>
    ```
  }];
  let options = [
    Option<"entryName", "entry", "std::string", "\"main\"",
           "The entry function">,
  ];
  let dependentDialects = ["memref::MemRefDialect"];
}

#endif // KILN_BACKENDS_CPU_PASSES_TD
