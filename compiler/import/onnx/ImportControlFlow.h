//===- ImportControlFlow.h - If and Loop as run-time control flow -*- C++
//-*-===//
#ifndef KILN_COMPILER_IMPORT_ONNX_IMPORTCONTROLFLOW_H
#define KILN_COMPILER_IMPORT_ONNX_IMPORTCONTROLFLOW_H

#include "compiler/import/onnx/NodeContext.h"

namespace onnx {
class GraphProto;
} // namespace onnx

namespace mlir::kiln::onnx_import {
/// Loop (trip count in input 0, condition in input 1, `carried` values
/// from input 2) as one scf.while whose body is imported once
/// (ImportLoopRunTime.cpp); the final carried values, then the
/// `scanOutputs` stacked scan outputs.
Results importRunTimeLoop(NodeContext &c, const onnx::GraphProto &body,
                          size_t carried, int64_t scanOutputs);
/// If on the run-time condition `cond` as one scf.if, each branch imported
/// into its region; an output whose extents differ between the branches
/// gets those dims as run-time extents (ImportLoopRunTime.cpp).
Results importRunTimeIf(NodeContext &c, const onnx::GraphProto &thenBody,
                        const onnx::GraphProto &elseBody, Value cond);
} // namespace mlir::kiln::onnx_import

#endif // KILN_COMPILER_IMPORT_ONNX_IMPORTCONTROLFLOW_H
