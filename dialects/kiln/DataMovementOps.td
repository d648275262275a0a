//===- DataMovementOps.td - reshape, slice, gather, ... -*- tablegen -*-===//
#ifndef KILN_DATA_MOVEMENT_OPS_TD
#define KILN_DATA_MOVEMENT_OPS_TD

include "dialects/kiln/KilnOpBase.td"

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

def Kiln_ReshapeOp : Kiln_Op<"reshape"> {
  let summary = "reinterpret a row-major tensor with another static shape";
  let description = [{
    `shape` is fully resolved (no 0 or -1). Flatten, Squeeze and Unsqueeze
    import as reshapes.
    ```mlir
    %y = kiln.reshape %x {shape = array<i64: 1, 512>} : (tensor<1x512x1x1xf32>) -> tensor<1x512xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, DenseI64ArrayAttr:$shape);
  let results = (outs AnyRankedTensor:$result);
  let hasFolder = 1;
}

def Kiln_DynamicReshapeOp : Kiln_Op<"dynamic_reshape"> {
  let summary = "reshape to a shape computed at run time (ONNX Reshape)";
  let description = [{
    The form of `kiln.reshape` for a `shape` that is a run-time value: a
    1-D i64 tensor of static length N, read with ONNX semantics when the
    model runs (0 copies the input's dim unless `allow_zero`, one -1 is
    inferred). The result has rank N and every dim dynamic. The lowering
    checks the values (one -1 at most, no other negative, element count
    preserved) and the run fails with a message naming the node otherwise.
    A constant shape never takes this form: the importer resolves it into
    `kiln.reshape`.
    ```mlir
    %y = kiln.dynamic_reshape %x, %shape : (tensor<2x3x4xf32>, tensor<3xi64>) -> tensor<?x?x?xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, AnyRankedTensor:$shape,
                       DefaultValuedAttr<BoolAttr, "false">:$allow_zero,
                       OptionalAttr<DenseI64ArrayAttr>:$static_shape);
  let results = (outs AnyRankedTensor:$result);
}

def Kiln_DynamicUnsqueezeOp : Kiln_Op<"dynamic_unsqueeze"> {
  let summary = "insert 1-dims at axes that are a run-time value (ONNX Unsqueeze)";
  let description = [{
    `axes` is a 1-D i64 tensor of static length K, read when the model runs
    (negative axes count from the end of the result). The result has rank
    rank(input) + K with every dim dynamic. The lowering checks that each
    axis is in range and none repeats. A constant `axes` imports as
    `kiln.reshape` instead.
    ```mlir
    %y = kiln.dynamic_unsqueeze %x, %axes : (tensor<3x4xf32>, tensor<2xi64>) -> tensor<?x?x?x?xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, AnyRankedTensor:$axes);
  let results = (outs AnyRankedTensor:$result);
}

def Kiln_DynamicSqueezeOp : Kiln_Op<"dynamic_squeeze"> {
  let summary = "drop 1-dims at axes that are a run-time value (ONNX Squeeze)";
  let description = [{
    `axes` is a 1-D i64 tensor of static length K <= rank(input), read when
    the model runs. The result has rank rank(input) - K with every dim
    dynamic. The lowering checks that each axis is in range, none repeats
    and each squeezed dim is 1. A constant `axes` imports as `kiln.reshape`.
    ```mlir
    %y = kiln.dynamic_squeeze %x, %axes : (tensor<1x3x1x5xf32>, tensor<2xi64>) -> tensor<?x?xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, AnyRankedTensor:$axes);
  let results = (outs AnyRankedTensor:$result);
}

def Kiln_AssertOp : Op<Kiln_Dialect, "assert", [MemoryEffects<[MemWrite]>]> {
  let summary = "end the run with a message when a run-time condition is false";
  let description = [{
    `condition` is a 0-d i1 tensor computed when the model runs. The importer
    emits one where a shape-like input (Expand's shape, Tile's repeats,
    TopK's k, ...) is a run-time value and the model declares the node's
    result shape: the op is compiled for the declared shape and this check
    makes a run whose values disagree fail with `message` (the lowering
    prefixes the ONNX node) instead of computing a wrong answer. The op
    writes no tensor but must not be removed, hence its memory effect.
    ```mlir
    kiln.assert %ok, "the shape input must be [2, 3] (the declared shape of output 'y')" : tensor<i1>
    ```
  }];
  let arguments = (ins 0DTensorOf<[I1]>:$condition, StrAttr:$message);
  let assemblyFormat = "$condition `,` $message attr-dict `:` type($condition)";
}

def Kiln_TransposeOp : Kiln_Op<"transpose"> {
  let summary = "permute dims: result dim i is input dim perm[i]";
  let description = [{
    ```mlir
    %y = kiln.transpose %x {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x128x12x64xf32>) -> tensor<1x12x128x64xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, DenseI64ArrayAttr:$perm);
  let results = (outs AnyRankedTensor:$result);
  let hasFolder = 1;
}

def Kiln_ConcatOp : Kiln_Op<"concat"> {
  let summary = "concatenate along `axis` (non-negative)";
  let description = [{
    ```mlir
    %y = kiln.concat %a, %b {axis = 1 : i64} : (tensor<1x64x28x28xf32>, tensor<1x32x28x28xf32>) -> tensor<1x96x28x28xf32>
    ```
  }];
  let arguments = (ins Variadic<AnyRankedTensor>:$inputs, I64Attr:$axis);
  let results = (outs AnyRankedTensor:$result);
  let hasFolder = 1;
}

def Kiln_SliceOp : Kiln_Op<"slice"> {
  let summary = "strided slice with one normalized (start, end, step) per dim";
  let description = [{
    Bounds are resolved and clamped by the importer: for a positive step
    `0 <= start <= end <= dim`; for a negative step `-1 <= end <= start < dim`.
    The result has `max(0, ceil((end - start) / step))` elements per dim.
    ```mlir
    %y = kiln.slice %x {starts = array<i64: 0, 1>, ends = array<i64: 2, 3>, steps = array<i64: 1, 1>}
        : (tensor<2x4xf32>) -> tensor<2x2xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, DenseI64ArrayAttr:$starts,
                   DenseI64ArrayAttr:$ends, DenseI64ArrayAttr:$steps);
  let results = (outs AnyRankedTensor:$result);
  let hasFolder = 1;
}

def Kiln_GatherOp : Kiln_Op<"gather"> {
  let summary = "ONNX Gather: index `axis` of data with an integer tensor";
  let description = [{
    Result shape is `data[:axis] + indices + data[axis+1:]`. Negative indices
    count from the end; out-of-range indices are clamped.
    ```mlir
    %e = kiln.gather %table, %ids {axis = 0 : i64} : (tensor<1000x64xf32>, tensor<1x16xi64>) -> tensor<1x16x64xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$data, AnyRankedTensor:$indices,
                   I64Attr:$axis);
  let results = (outs AnyRankedTensor:$result);
  let hasFolder = 1;
}

def Kiln_ExpandOp : Kiln_Op<"expand"> {
  let summary = "broadcast to a static shape (numpy rules)";
  let description = [{
    `shape` is the result shape, already broadcast with the input's.
    ```mlir
    %y = kiln.expand %x {shape = array<i64: 4, 3>} : (tensor<1x3xf32>) -> tensor<4x3xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, DenseI64ArrayAttr:$shape);
  let results = (outs AnyRankedTensor:$result);
  let hasFolder = 1;
}

def Kiln_DynamicExpandOp : Kiln_Op<"dynamic_expand"> {
  let summary = "broadcast to a shape computed at run time (ONNX Expand)";
  let description = [{
    `shape` is a 1-D i64 tensor of static length N, read when the model
    runs (typically `tensor.from_elements` of symbolic dims). The result is
    the numpy broadcast of the input's shape and `shape`: rank
    max(rank(input), N); a result dim is static where `static_shape` (one
    entry per result dim, `-1` where unknown) gives it. ConstantOfShape of
    symbolic dims is this op on a scalar. The lowering checks that every
    input dim that is not 1 equals the requested extent (or the extent is 1).
    ```mlir
    %y = kiln.dynamic_expand %x, %shape {static_shape = array<i64: -1, 64>}
        : (tensor<1x64xf32>, tensor<2xi64>) -> tensor<?x64xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, AnyRankedTensor:$shape,
                       DenseI64ArrayAttr:$static_shape);
  let results = (outs AnyRankedTensor:$result);
}

def Kiln_DynamicRangeOp : Kiln_Op<"dynamic_range"> {
  let summary = "start + i * delta for i < n, n computed at run time (ONNX Range)";
  let description = [{
    `start`, `limit` and `delta` are scalars (rank 0) of one numeric type;
    the result has max(ceil((limit - start) / delta), 0) elements. The
    lowering checks that `delta` is not zero.
    ```mlir
    %r = kiln.dynamic_range %start, %limit, %delta
        : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$start, AnyRankedTensor:$limit,
                       AnyRankedTensor:$delta);
  let results = (outs AnyRankedTensor:$result);
}

def Kiln_DynamicSliceOp : Kiln_Op<"dynamic_slice"> {
  let summary = "slice with bounds computed at run time (ONNX Slice)";
  let description = [{
    `starts` and `ends` are 1-D i64 tensors with one entry per input dim
    (typically `tensor.from_elements` of symbolic dims), read with ONNX
    semantics when the model runs: a negative bound counts from the end,
    both are clamped to [0, dim]. `steps`, when present, gives each dim's
    step (non-zero constants; 1 without it): the extent is
    max(ceil((end - start) / step), 0). A negative step walks down from
    `start`, clamped to [0, dim - 1], to `end`, clamped to [-1, dim - 1]
    (`x[::-1]`, torch.flip). A result dim is static where
    `static_shape` (`-1` where unknown) gives it.
    ```mlir
    %y = kiln.dynamic_slice %mask, %starts, %ends {static_shape = array<i64: 1, 1, -1, -1>}
        : (tensor<1x1x1024x1024xi1>, tensor<4xi64>, tensor<4xi64>) -> tensor<1x1x?x?xi1>
    %z = kiln.dynamic_slice %x, %starts, %ends {static_shape = array<i64: 3, -1>, steps = array<i64: 1, 2>}
        : (tensor<3x?xf32>, tensor<2xi64>, tensor<2xi64>) -> tensor<3x?xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, AnyRankedTensor:$starts,
                       AnyRankedTensor:$ends, DenseI64ArrayAttr:$static_shape,
                       OptionalAttr<DenseI64ArrayAttr>:$steps);
  let results = (outs AnyRankedTensor:$result);
}

def Kiln_NonZeroIndicesOp : Kiln_Op<"nonzero_indices"> {
  let summary = "positions of the nonzero elements of a 1-D tensor, in order";
  let description = [{
    The result has one i64 element per nonzero element of `input`: its
    position. Its extent is known only after the run (NonZero, Compress with
    a run-time condition); the lowering counts, then fills, with sequential
    loops.
    ```mlir
    %p = kiln.nonzero_indices %c : (tensor<8xi1>) -> tensor<?xi64>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input);
  let results = (outs AnyRankedTensor:$result);
}

def Kiln_UniqueOp : Kiln_Op<"unique"> {
  let summary = "ONNX Unique: distinct elements, or slices along an axis";
  let description = [{
    Without `axis` the input is flattened and its distinct elements are
    found; with `axis`, its distinct slices along that axis (compared
    element by element in row-major order). `sorted` orders them ascending
    (slices lexicographically), else by first occurrence. Results: the
    distinct values (`?` along the axis), the index of each one's first
    occurrence, each input element's (slice's) position in the result, and
    the occurrence counts; all but `inverse_indices` have an extent known
    only after the run.
    ```mlir
    %y, %i, %inv, %n = kiln.unique %x {sorted = true}
        : (tensor<6xf32>) -> (tensor<?xf32>, tensor<?xi64>, tensor<6xi64>, tensor<?xi64>)
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, OptionalAttr<I64Attr>:$axis,
                   BoolAttr:$sorted);
  let results = (outs AnyRankedTensor:$values, AnyRankedTensor:$indices,
                 AnyRankedTensor:$inverse_indices, AnyRankedTensor:$counts);
}

def Kiln_NonMaxSuppressionOp : Kiln_Op<"non_max_suppression"> {
  let summary = "ONNX NonMaxSuppression: greedy selection of boxes per class";
  let description = [{
    `boxes` [batch, boxes, 4] (corners in any order, or center and size with
    `center_point_box`), `scores` [batch, classes, boxes]; the rank-0
    `max_output_boxes_per_class`, `iou_threshold` and `score_threshold`
    (read only with `use_score_threshold`) may be run-time values. Per batch
    and class, boxes are taken by decreasing score (ties: lower index first)
    and kept unless their IoU with a box kept before exceeds the threshold.
    Each kept box is a row [batch, class, box]; the row count is known only
    after the run.
    ```mlir
    %s = kiln.non_max_suppression %b, %s, %max, %iou, %thr
        {center_point_box = false, use_score_threshold = true}
        : (tensor<1x6x4xf32>, tensor<1x1x6xf32>, tensor<i64>, tensor<f32>,
           tensor<f32>) -> tensor<?x3xi64>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$boxes, AnyRankedTensor:$scores,
                   AnyRankedTensor:$max_output_boxes_per_class,
                   AnyRankedTensor:$iou_threshold,
                   AnyRankedTensor:$score_threshold, BoolAttr:$center_point_box,
                   BoolAttr:$use_score_threshold);
  let results = (outs AnyRankedTensor:$result);
}

#endif // KILN_DATA_MOVEMENT_OPS_TD
