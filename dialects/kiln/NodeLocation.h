//===- NodeLocation.h - The ONNX node behind a location ----------*- C++
//-*-===//
//
// The importer gives every op the location FusedLoc<"OpType">[NameLoc(node)]
// (fusion passes fuse several of them). Passes name the nodes they touch in
// logs and the report through this one helper.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_DIALECTS_KILN_NODELOCATION_H
#define KILN_DIALECTS_KILN_NODELOCATION_H

#include "mlir/IR/Location.h"
#include "mlir/Support/LLVM.h"

#include <string>
#include <vector>

namespace mlir {
class Operation;
} // namespace mlir

namespace mlir::kiln {
/// The first ONNX node name carried by a location ("?" if none).
std::string onnxNodeName(Location loc);
/// Appends to `names` every ONNX node name `loc` carries (fused locations
/// and call sites included), in order, skipping names already there.
void appendOnnxNodeNames(Location loc, std::vector<std::string> &names);
/// "'a', 'b', ..." : the node names of `ops`, in order, for logs.
std::string onnxNodeList(ArrayRef<Operation *> ops);
} // namespace mlir::kiln

#endif // KILN_DIALECTS_KILN_NODELOCATION_H
