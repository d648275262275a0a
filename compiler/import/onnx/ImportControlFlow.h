//===- ImportControlFlow.h - Run-time If, Loop and Scan --------*- C++ -*-===//
#ifndef KILN_COMPILER_IMPORT_ONNX_IMPORTCONTROLFLOW_H
#define KILN_COMPILER_IMPORT_ONNX_IMPORTCONTROLFLOW_H

#include "compiler/import/onnx/NodeContext.h"

namespace onnx {
class GraphProto;
} // namespace onnx

namespace mlir::kiln::onnx_import {
/// Loop with `carried` values from input 2 as one scf.while whose body is
/// imported once (ImportLoopRunTime.cpp); `tripCount` (rank-0 i64) and
/// `cond` (rank-0 i1) are the node's inputs 0 and 1 as importLoop read them,
/// null when absent. The final carried values, then the `scanOutputs`
/// stacked scan outputs.
Results importRunTimeLoop(NodeContext &c, const onnx::GraphProto &body,
                          size_t carried, int64_t scanOutputs, Value tripCount,
                          Value cond);
/// Scan (opset 9+) over scan inputs whose scan axis has a run-time extent,
/// or more iterations than unrolling takes, as one scf.while
/// (ImportLoopRunTime.cpp): the final states, then the scan outputs.
/// `axes` are normalized; the others as the node's attributes give them.
Results importRunTimeScan(NodeContext &c, const onnx::GraphProto &body,
                          llvm::ArrayRef<Value> states,
                          llvm::ArrayRef<Value> scans,
                          llvm::ArrayRef<int64_t> axes,
                          llvm::ArrayRef<int64_t> directions,
                          llvm::ArrayRef<int64_t> outAxes,
                          llvm::ArrayRef<int64_t> outDirections);

/// Iteration `index` (an i64) of a run-time recurrence over its carried
/// values: the next carried values, then one row per stacked output.
using RecurrenceStep = std::function<FailureOr<llvm::SmallVector<Value>>(
    Value index, mlir::ValueRange carried)>;

/// A recurrence of `steps` (an i64 value) iterations as one scf.while,
/// for ops that step through a run-time extent themselves (RNN, GRU, LSTM
/// over a run-time sequence): the final carried values, then each stacked
/// output [steps, row...] (the row of iteration i at steps - 1 - i when
/// `reversed`). Stacks of static rows are allocated up front.
/// `rowExtents`: the stacked rows' run-time extents (i64, in order) when
/// they are known before the loop, so that their stacks are allocated for
/// the steps up front too.
Results importRunTimeRecurrence(NodeContext &c, Value steps,
                                llvm::ArrayRef<Value> inits, int64_t stacked,
                                bool reversed, RecurrenceStep step,
                                llvm::ArrayRef<Value> rowExtents = {});

// Shared by both (ImportControlFlowTypes.cpp).
/// The type both `a` and `b` fit: dims that differ become run-time ones.
/// Null when the ranks or element types differ.
mlir::RankedTensorType joinTypes(mlir::RankedTensorType a,
                                 mlir::RankedTensorType b);
/// `t` as MLIR prints it.
std::string typeText(mlir::Type t);
/// `v` as `type`: a tensor.cast when only static extents differ.
Value widen(mlir::OpBuilder &b, mlir::Location loc, Value v, mlir::Type type);

/// If on the run-time condition `cond` as one scf.if, each branch imported
/// into its region; an output whose extents differ between the branches
/// gets those dims as run-time extents (ImportIfRunTime.cpp).
Results importRunTimeIf(NodeContext &c, const onnx::GraphProto &thenBody,
                        const onnx::GraphProto &elseBody, Value cond);
} // namespace mlir::kiln::onnx_import

#endif // KILN_COMPILER_IMPORT_ONNX_IMPORTCONTROLFLOW_H
