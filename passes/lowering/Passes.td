#ifndef KILN_PASSES_LOWERING_TD
#define KILN_PASSES_LOWERING_TD

include "mlir/Pass/PassBase.td"

def LowerToLinalg : Pass<"kiln-lower-to-linalg", "ModuleOp"> {
  let summary = "Lower kiln ops to linalg/tensor/arith/math on tensors";
  let description = [{
    Converts every kiln op into linalg on tensors: named ops where one fits
    (linalg.matmul, linalg.batch_matmul, linalg.conv_{1d,2d,3d}_nc*_fc*,
    linalg.depthwise_conv_2d_nchw_chw, linalg.pooling_nc[h]w_{max,sum},
    linalg.transpose, linalg.fill, linalg.broadcast), linalg.generic
    otherwise, plus tensor.pad / extract_slice / insert_slice /
    collapse_shape / expand_shape and arith/math scalar code.

    Unsigned ONNX integers (`uiN`) become signless `iN` everywhere, function
    signatures included; the signedness survives in the choice of ops
    (arith.divui, cmpi ult, uitofp, extui, maxui, ...). `!kiln.string`
    becomes i64 (each element the text's address), and the string ops
    become calls of the runtime's string kernels on buffers
    (`bufferization.to_buffer`, `memref.alloc`, `func.call` of a private
    `__kiln_string_call_N` marked `kiln.string_kernel`, `to_tensor`).

    Broadcast operands have their unit dims collapsed away, so all indexing
    maps of elementwise generics are projected permutations. f16/bf16
    contractions, sums and normalization statistics accumulate in f32.

    Before:

    ```mlir
    func.func @f(%a: tensor<2x3xui8>, %b: tensor<3xui8>) -> tensor<2x3xui8> {
      %0 = kiln.div %a, %b : (tensor<2x3xui8>, tensor<3xui8>) -> tensor<2x3xui8>
      return %0 : tensor<2x3xui8>
    }
    ```

    After:

    ```mlir
    #map = affine_map<(d0, d1) -> (d0, d1)>
    #map1 = affine_map<(d0, d1) -> (d1)>
    func.func @f(%a: tensor<2x3xi8>, %b: tensor<3xi8>) -> tensor<2x3xi8> {
      %0 = tensor.empty() : tensor<2x3xi8>
      %1 = linalg.generic {indexing_maps = [#map, #map1, #map],
                           iterator_types = ["parallel", "parallel"]}
          ins(%a, %b : tensor<2x3xi8>, tensor<3xi8>) outs(%0 : tensor<2x3xi8>) {
      ^bb0(%x: i8, %y: i8, %out: i8):
        %2 = arith.divui %x, %y : i8
        linalg.yield %2 : i8
      } -> tensor<2x3xi8>
      return %1 : tensor<2x3xi8>
    }
    ```

    A 2-D convolution with group 1 pads explicitly and seeds the accumulator
    with the bias:

    ```mlir
    %padded = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] { ... }
    %init = linalg.broadcast ins(%bias : tensor<4xf32>)
                             outs(%e : tensor<1x4x4x4xf32>) dimensions = [0, 2, 3]
    %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>,
                                   strides = dense<2> : tensor<2xi64>}
        ins(%padded, %w : tensor<1x3x10x10xf32>, tensor<4x3x3x3xf32>)
        outs(%init : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
    ```

    The pattern groups are available one by one for other pipelines
    (passes/lowering/Patterns.h).
  }];
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect", "::mlir::tensor::TensorDialect",
    "::mlir::arith::ArithDialect", "::mlir::math::MathDialect",
    "::mlir::func::FuncDialect", "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect", "::mlir::cf::ControlFlowDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::memref::MemRefDialect"
  ];
}

def ConcatInPlace : Pass<"kiln-concat-in-place", "::mlir::func::FuncOp"> {
  let summary = "Compute concat inputs directly in their slice of the result";
  let description = [{
    kiln.concat lowers to `tensor.empty` and one `tensor.insert_slice` per
    input, which bufferizes to one buffer per input plus a copy into the
    result. For each insert located at an ONNX Concat node, this pass
    follows the input back through destination-passing-style ops (linalg
    outs, fill, broadcast, insert_slice dest) to the `tensor.empty` it is
    written into, sinks that computation to just before the insert and
    replaces the `tensor.empty` by an `extract_slice` of the concat's partial
    result. One-shot bufferization then writes the producer into a subview of
    the result: no buffer and no copy for that input (Inductor's
    ConcatKernel). A concat of concats nests: the inner chain is the
    producer of its slice.

    Inputs that are function arguments, constants, have other users, or are
    not computed by destination-passing ops keep their copy. Each input
    written in place adds one to `concat_in_place` in the report and is
    logged under KILN_LOGS=fusion.

    Before:
    ```mlir
    %e0 = tensor.empty() : tensor<1x2x4x4xf32>
    %c0 = linalg.conv_2d_nchw_fchw ins(%x, %w0 : ...) outs(%f0 : ...)   // %f0 = fill(%e0)
    %e1 = tensor.empty() : tensor<1x3x4x4xf32>
    %c1 = linalg.conv_2d_nchw_fchw ins(%x, %w1 : ...) outs(%f1 : ...)   // %f1 = fill(%e1)
    %r = tensor.empty() : tensor<1x5x4x4xf32>
    %i0 = tensor.insert_slice %c0 into %r[0, 0, 0, 0] [1, 2, 4, 4] [1, 1, 1, 1]
    %i1 = tensor.insert_slice %c1 into %i0[0, 2, 0, 0] [1, 3, 4, 4] [1, 1, 1, 1]
    ```
    After:
    ```mlir
    %r = tensor.empty() : tensor<1x5x4x4xf32>
    %s0 = tensor.extract_slice %r[0, 0, 0, 0] [1, 2, 4, 4] [1, 1, 1, 1]
    %c0 = linalg.conv_2d_nchw_fchw ins(%x, %w0 : ...) outs(%f0 : ...)   // %f0 = fill(%s0)
    %i0 = tensor.insert_slice %c0 into %r[0, 0, 0, 0] [1, 2, 4, 4] [1, 1, 1, 1]
    %s1 = tensor.extract_slice %i0[0, 2, 0, 0] [1, 3, 4, 4] [1, 1, 1, 1]
    %c1 = linalg.conv_2d_nchw_fchw ins(%x, %w1 : ...) outs(%f1 : ...)   // %f1 = fill(%s1)
    %i1 = tensor.insert_slice %c1 into %i0[0, 2, 0, 0] [1, 3, 4, 4] [1, 1, 1, 1]
    ```
  }];
  let dependentDialects = ["::mlir::tensor::TensorDialect"];
}

def UnifySymbolDims : Pass<"kiln-unify-symbol-dims", "::mlir::func::FuncOp"> {
  let summary = "Read each symbolic dim from one input, as the runtime checks";
  let description = [{
    Inputs that share a symbolic dim (`kiln.dims` names on the arguments)
    hold the same extent whenever the function runs: the runtime checks it
    before the first kernel (`input 'mask' dim 1 (seq) is 77 but input
    'ids' has 64`). The lowering reads extents from whichever input it
    meets, so checks and run-time broadcasts built from two inputs' extents
    compare different values. This pass rewrites every `tensor.dim` of an
    argument's symbolic dim to read the same dim of the first argument with
    that symbol (CSE makes them one value), traces the extents of
    intermediate results back to the inputs' (their reified shapes), and
    folds the comparisons between them (canonicalization, CSE, integer
    ranges: an extent is never negative) until nothing changes, so the
    checks, run-time reshapes and broadcasts they guard fold away layer
    after layer. Functions without symbolic dims are left alone.

    Before (`%x` and `%y` both `["b", "n"]`):
    ```mlir
    %d0 = tensor.dim %x, %c1 : tensor<?x?xf32>
    %d1 = tensor.dim %y, %c1 : tensor<?x?xf32>
    %same = arith.cmpi eq, %d1, %d0 : index
    ```
    After (the comparison folded):
    ```mlir
    %same = arith.constant true
    ```
  }];
  let dependentDialects = ["::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::affine::AffineDialect"];
}

def ReportKernels : Pass<"kiln-report-kernels", "ModuleOp"> {
  let summary = "List the kernels and the ONNX nodes each covers in the report";
  let description = [{
    An analysis: the IR is unchanged. On linalg on tensors, each top-level
    loop nest (a linalg op, or an scf loop for attention/scatter/top-k) is a
    kernel, grouped the way the CPU backend's elementwise fusion will group
    them: an all-parallel linalg.generic with a single linalg.generic user
    joins that user, and a linalg.fill/linalg.broadcast used only as an init
    joins the op it initializes. Each kernel is recorded with
    `report::kernel` as `<index>:<anchor op>` and the ONNX node names found
    in its ops' locations (merged contractions and fused attention carry all
    of theirs), so `kiln compile --report=r.json` lists them under
    `kernels`; KILN_LOGS=lowering prints them.

    For
    ```mlir
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32> loc(#fill)
    %m = linalg.matmul ins(%x, %w : ...) outs(%f : tensor<4x8xf32>) -> tensor<4x8xf32> loc(fused<"MatMul">["fc"])
    %r = linalg.generic {...} ins(%m : tensor<4x8xf32>) outs(%e2 : ...) loc(fused<"Relu">["relu"])
    ```
    the report has `{"kernel": "0:matmul", "onnx_nodes": ["fc"]}` and
    `{"kernel": "1:generic", "onnx_nodes": ["relu"]}`. A kernel over
    tensors of run-time shape (symbolic dims) is named
    `<index>:<op> (run-time extents)` and counted in
    `kernels_run_time_extents`: its loops take any extent, so it is not
    the code tuned for one shape.
  }];
}

#endif // KILN_PASSES_LOWERING_TD
