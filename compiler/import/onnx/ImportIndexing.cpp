//===- ImportIndexing.cpp - Gather/Scatter/Pad/Resize and other indexing ops ===//

#include "compiler/import/onnx/NodeContext.h"

#include "onnx/onnx.pb.h"

using namespace mlir;
using namespace mlir::kiln::onnx_import;

void mlir::kiln::onnx_import::registerIndexingHandlers(
    llvm::StringMap<OpHandler> &t) {}
