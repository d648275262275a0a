//===- ImportIndexing.h - Shared by the indexing op handlers ----*- C++ -*-===//
#ifndef KILN_COMPILER_IMPORT_ONNX_IMPORTINDEXING_H
#define KILN_COMPILER_IMPORT_ONNX_IMPORTINDEXING_H

#include "compiler/import/onnx/NodeContext.h"

namespace mlir::kiln::onnx_import {
/// kiln.reshape to `shape`, or `v` itself when it already has that shape.
FailureOr<Value> reshapeTo(NodeContext &c, Value v,
                           llvm::ArrayRef<int64_t> shape);
/// Input `i` cast to a 1-D tensor of element type `to`, when it is a 1-D
/// tensor of static length with elements of `to`'s kind (integers for an
/// integer `to`, floats for a float one); null otherwise. For shape-like
/// inputs computed at run time (pads, bounds, scales).
Value vectorInput(NodeContext &c, size_t i, mlir::Type to);
/// A constant i64 tensor.
Value i64Tensor(NodeContext &c, llvm::ArrayRef<int64_t> shape,
                llvm::ArrayRef<int64_t> values);

/// Slice whose bounds are run-time values, gathered into the result shape
/// the model declares (ImportSliceRunTime.cpp). Failure with no error set
/// when the model declares no usable shape.
Results importRunTimeSlice(NodeContext &c);

/// Pad (opset 11+) whose pads are a run-time value, gathered into the
/// result shape the model declares (ImportPadRunTime.cpp); `value` is the
/// rank-0 fill. Failure with no error set when the model declares no usable
/// shape.
Results importRunTimePad(NodeContext &c, llvm::StringRef mode, Value value);

/// Pad, Resize/Upsample, GridSample, DepthToSpace/SpaceToDepth
/// (ImportIndexingLayout.cpp).
void registerIndexingLayoutHandlers(llvm::StringMap<OpHandler> &table);
/// TfIdfVectorizer (ImportTfIdf.cpp).
void registerTfIdfHandlers(llvm::StringMap<OpHandler> &table);
} // namespace mlir::kiln::onnx_import

#endif // KILN_COMPILER_IMPORT_ONNX_IMPORTINDEXING_H
