//===- Diagnostics.h - User-facing error text -------------------*- C++ -*-===//
#ifndef KILN_COMPILER_DRIVER_DIAGNOSTICS_H
#define KILN_COMPILER_DRIVER_DIAGNOSTICS_H

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"

#include <string>

namespace mlir::kiln {
/// "node 'conv1' (Conv)" for a location the ONNX importer made; the file
/// position or "" otherwise.
std::string describeLocation(Location loc);

/// Prints MLIR diagnostics as one line each: "error: <message> at node
/// 'NAME' (OpType)", so a failure deep in the pipeline still names the node.
class NodeDiagnosticHandler : public ScopedDiagnosticHandler {
public:
  explicit NodeDiagnosticHandler(MLIRContext *ctx);
  bool sawError() const { return errors > 0; }

private:
  int errors = 0;
};
} // namespace mlir::kiln

#endif // KILN_COMPILER_DRIVER_DIAGNOSTICS_H
