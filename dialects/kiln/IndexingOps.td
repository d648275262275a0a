//===- IndexingOps.td - gather/scatter/pad/resize and other indexing ops -*- tablegen -*-===//
//
// Ops whose results read or write their operands at computed positions.
// Shape-like ONNX inputs (pads, sizes, k of TopK) are attributes resolved by
// the importer; value-like ones that do not change the result shape (Trilu's
// k, ReverseSequence's lengths, Pad's value) stay operands and may be
// computed at run time.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_INDEXING_OPS_TD
#define KILN_INDEXING_OPS_TD

include "dialects/kiln/KilnOpBase.td"

def Kiln_GatherElementsOp : Kiln_Op<"gather_elements"> {
  let summary = "ONNX GatherElements: result[i] = data[i with i[axis] = indices[i]]";
  let description = [{
    The result has the shape of `indices` and the element type of `data`.
    Negative indices count from the end of `axis`; out-of-range indices are
    clamped (ONNX leaves them undefined).
    ```mlir
    %r = kiln.gather_elements %data, %idx {axis = 1 : i64}
        : (tensor<2x3xf32>, tensor<2x2xi64>) -> tensor<2x2xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$data, AnyRankedTensor:$indices,
                   I64Attr:$axis);
  let results = (outs AnyRankedTensor:$result);
}

def Kiln_GatherNDOp : Kiln_Op<"gather_nd"> {
  let summary = "ONNX GatherND: slices of data addressed by index tuples";
  let description = [{
    With `b = batch_dims` and `m = indices.shape[-1]`, the result shape is
    `indices.shape[:-1] + data.shape[b + m:]`; the first `b` dims of data and
    indices are shared batch dims.
    ```mlir
    %r = kiln.gather_nd %data, %idx {batch_dims = 0 : i64}
        : (tensor<2x2xi32>, tensor<2x2xi64>) -> tensor<2xi32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$data, AnyRankedTensor:$indices,
                   I64Attr:$batch_dims);
  let results = (outs AnyRankedTensor:$result);
}

def Kiln_ScatterElementsOp : Kiln_Op<"scatter_elements"> {
  let summary = "ONNX ScatterElements / Scatter: data with updates written at indices along axis";
  let description = [{
    `indices` and `updates` have the same shape. `reduction` is one of
    `none` (later updates win), `add`, `mul`, `max`, `min`.
    ```mlir
    %r = kiln.scatter_elements %data, %idx, %upd {axis = 1 : i64, reduction = "add"}
        : (tensor<1x5xf32>, tensor<1x2xi64>, tensor<1x2xf32>) -> tensor<1x5xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$data, AnyRankedTensor:$indices,
                   AnyRankedTensor:$updates, I64Attr:$axis,
                   DefaultValuedStrAttr<StrAttr, "none">:$reduction);
  let results = (outs AnyRankedTensor:$result);
}

def Kiln_ScatterNDOp : Kiln_Op<"scatter_nd"> {
  let summary = "ONNX ScatterND: data with slices replaced (or reduced) at index tuples";
  let description = [{
    With `m = indices.shape[-1]`, `updates` has shape
    `indices.shape[:-1] + data.shape[m:]`. `reduction` as for
    `kiln.scatter_elements`.
    ```mlir
    %r = kiln.scatter_nd %data, %idx, %upd {reduction = "none"}
        : (tensor<8xf32>, tensor<4x1xi64>, tensor<4xf32>) -> tensor<8xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$data, AnyRankedTensor:$indices,
                   AnyRankedTensor:$updates,
                   DefaultValuedStrAttr<StrAttr, "none">:$reduction);
  let results = (outs AnyRankedTensor:$result);
}

def Kiln_TriluOp : Kiln_Op<"trilu"> {
  let summary = "ONNX Trilu: keep the upper or lower triangle of the last two dims";
  let description = [{
    `k` is a rank-0 i64 tensor (the diagonal offset), which may be computed at
    run time: it does not change the result shape. Elements outside the
    triangle become zero.
    ```mlir
    %r = kiln.trilu %x, %k {upper = true} : (tensor<3x4xf32>, tensor<i64>) -> tensor<3x4xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, AnyRankedTensor:$k,
                   BoolAttr:$upper);
  let results = (outs AnyRankedTensor:$result);
}

def Kiln_ReverseSequenceOp : Kiln_Op<"reverse_sequence"> {
  let summary = "ONNX ReverseSequence: reverse the first lengths[b] steps of each batch entry";
  let description = [{
    `batch_axis` and `time_axis` are 0 and 1 in some order; `lengths` is a
    1-D integer tensor with one entry per batch element.
    ```mlir
    %r = kiln.reverse_sequence %x, %lens {batch_axis = 1 : i64, time_axis = 0 : i64}
        : (tensor<4x4xf32>, tensor<4xi64>) -> tensor<4x4xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, AnyRankedTensor:$lengths,
                   I64Attr:$batch_axis, I64Attr:$time_axis);
  let results = (outs AnyRankedTensor:$result);
}

def Kiln_PadOp : Kiln_Op<"pad"> {
  let summary = "ONNX Pad with non-negative pads: constant, reflect, edge or wrap";
  let description = [{
    `pads` holds all begin pads then all end pads, one per dim, all
    non-negative (the importer turns negative pads into a slice). `value` is
    a rank-0 tensor of the element type, used by `constant` mode only; it may
    be computed at run time.
    ```mlir
    %r = kiln.pad %x, %v {mode = "reflect", pads = array<i64: 0, 2, 0, 1>}
        : (tensor<3x4xf32>, tensor<f32>) -> tensor<3x7xf32>
    ```
    `interior` (constant mode only; one per dim) puts that many `value`s
    between neighbouring elements, as a transposed convolution's stride
    does: an extent n becomes n + (n - 1) * interior + begin + end.
    ```mlir
    %r = kiln.pad %x, %zero {pads = array<i64: 0, 1, 0, 1>, interior = array<i64: 0, 1>}
        : (tensor<2x?xf32>, tensor<f32>) -> tensor<2x?xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, AnyRankedTensor:$value,
                   DenseI64ArrayAttr:$pads,
                   DefaultValuedStrAttr<StrAttr, "constant">:$mode,
                   OptionalAttr<DenseI64ArrayAttr>:$interior);
  let results = (outs AnyRankedTensor:$result);
}

def Kiln_ResizeOp : Kiln_Op<"resize"> {
  let summary = "ONNX Resize/Upsample (nearest, linear, cubic)";
  let description = [{
    `sizes` is the result shape; `scales` the per-dim scale ONNX uses in its
    coordinate transformation (output/input when the model gave sizes).
    `roi` (start per dim, then end per dim) is only read by
    `tf_crop_and_resize`. String attributes take ONNX's values.

    When the model computes scales or roi at run time, `params` (f64, three
    values per dim: scale, then roi start and roi end) holds them and
    overrides `scales` and `roi`; `sizes` stays the static result shape.

    A dim whose input extent is known only at run time has size -1 (the
    result extent is then floor(in * scale), computed when the model runs,
    as ONNX does) or, with `params` holding its run-time scale, a static
    size.
    ```mlir
    %r = kiln.resize %x {mode = "nearest", coordinate_transformation_mode = "asymmetric",
                         nearest_mode = "floor", scales = array<f64: 1.0, 1.0, 2.0, 2.0>,
                         sizes = array<i64: 1, 3, 8, 8>, roi = array<f64>,
                         cubic_coeff_a = -7.5e-01 : f64, exclude_outside = false,
                         extrapolation_value = 0.0 : f64}
        : (tensor<1x3x4x4xf32>) -> tensor<1x3x8x8xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input,
                   Optional<AnyRankedTensor>:$params,
                   DenseI64ArrayAttr:$sizes, DenseF64ArrayAttr:$scales, DenseF64ArrayAttr:$roi,
                   StrAttr:$mode, StrAttr:$coordinate_transformation_mode,
                   StrAttr:$nearest_mode, F64Attr:$cubic_coeff_a,
                   BoolAttr:$exclude_outside, F64Attr:$extrapolation_value);
  let results = (outs AnyRankedTensor:$result);
}

def Kiln_TopKOp : Kiln_Op<"topk"> {
  let summary = "ONNX TopK: the k largest (or smallest) along axis";
  let description = [{
    Results are sorted (best first; equal values keep their input order, as
    ONNX requires), which also satisfies `sorted = 0`. Indices are i64.
    With `k_value` (a rank-0 i64 tensor computed when the model runs) the
    results' extent along `axis` is that run-time k and the `k` attribute
    is ignored; a k outside [0, extent] fails the run.
    ```mlir
    %v, %i = kiln.topk %x {axis = 1 : i64, k = 3 : i64, largest = true}
        : (tensor<3x4xf32>) -> (tensor<3x3xf32>, tensor<3x3xi64>)
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input,
                   Optional<AnyRankedTensor>:$k_value, I64Attr:$axis,
                   I64Attr:$k, BoolAttr:$largest);
  let results = (outs AnyRankedTensor:$values, AnyRankedTensor:$indices);
}

def Kiln_GridSampleOp : Kiln_Op<"grid_sample"> {
  let summary = "ONNX GridSample: interpolate the input at grid positions";
  let description = [{
    `input` is [N, C, D1..Dk] and `grid` [N, O1..Ok, k], whose last dim holds
    normalized coordinates in [-1, 1], innermost spatial dim first (x, y,
    ...). The result is [N, C, O1..Ok]. `mode` is `nearest` (ties to even),
    `linear` or `cubic` (Keys, a = -0.75); `padding_mode` says what reads
    outside the input give: `zeros`, `border` (the nearest edge) or
    `reflection` (mirrored at the borders). With `align_corners`, -1 and 1
    are the centers of the corner elements, otherwise their outer edges.
    ```mlir
    %r = kiln.grid_sample %x, %grid {mode = "linear", padding_mode = "zeros",
                                     align_corners = false}
        : (tensor<1x1x3x2xf32>, tensor<1x2x4x2xf32>) -> tensor<1x1x2x4xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, AnyRankedTensor:$grid,
                   StrAttr:$mode, StrAttr:$padding_mode, BoolAttr:$align_corners);
  let results = (outs AnyRankedTensor:$result);
}

#endif // KILN_INDEXING_OPS_TD
