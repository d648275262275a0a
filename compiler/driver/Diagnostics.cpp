//===- Diagnostics.cpp - User-facing error text ---------------------------===//

#include "compiler/driver/Diagnostics.h"
#include "compiler/driver/Progress.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

std::string mlir::kiln::describeLocation(Location loc) {
  if (auto fused = dyn_cast<FusedLoc>(loc)) {
    auto opType = dyn_cast_if_present<StringAttr>(fused.getMetadata());
    for (Location inner : fused.getLocations())
      if (auto name = dyn_cast<NameLoc>(inner))
        return "node '" + name.getName().str() + "'" +
               (opType ? " (" + opType.str() + ")" : "");
  }
  if (auto name = dyn_cast<NameLoc>(loc))
    return "tensor '" + name.getName().str() + "'";
  if (auto file = dyn_cast<FileLineColLoc>(loc))
    if (file.getLine() > 0)
      return (file.getFilename().str() + ":" + std::to_string(file.getLine()));
  return "";
}

mlir::kiln::NodeDiagnosticHandler::NodeDiagnosticHandler(MLIRContext *ctx)
    : ScopedDiagnosticHandler(ctx) {
  setHandler([this](Diagnostic &diag) {
    const char *severity = "note";
    switch (diag.getSeverity()) {
    case DiagnosticSeverity::Error:
      severity = "error";
      ++errors;
      break;
    case DiagnosticSeverity::Warning:
      severity = "warning";
      break;
    case DiagnosticSeverity::Remark:
      severity = "remark";
      break;
    case DiagnosticSeverity::Note:
      break;
    }
    std::string where = describeLocation(diag.getLocation());
    Progress::clear();
    llvm::errs() << severity << ": " << diag.str();
    if (!where.empty())
      llvm::errs() << " at " << where;
    llvm::errs() << "\n";
    return success();
  });
}
