//===- StringKernels.h - Calls of the runtime's string kernels ---*- C++
//-*-===//
//
// String ops lower to calls of private declarations marked
// `kiln.string_kernel = "<callback name>"` (passes/lowering/Strings.cpp);
// later passes recognize those calls through this one helper.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_DIALECTS_KILN_STRINGKERNELS_H
#define KILN_DIALECTS_KILN_STRINGKERNELS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::kiln {

/// The runtime string kernel `op` calls ("strings_to_numbers", ...), or ""
/// when `op` is not such a call.
inline StringRef stringKernelOf(Operation *op) {
  auto call = dyn_cast<func::CallOp>(op);
  if (!call)
    return "";
  auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
      call, call.getCalleeAttr());
  auto kernel = callee ? callee->getAttrOfType<StringAttr>("kiln.string_kernel")
                       : StringAttr();
  return kernel ? kernel.getValue() : "";
}

} // namespace mlir::kiln

#endif // KILN_DIALECTS_KILN_STRINGKERNELS_H
