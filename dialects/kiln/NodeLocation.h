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

#include <string>

namespace mlir::kiln {
/// The first ONNX node name carried by a location ("?" if none).
std::string onnxNodeName(Location loc);
} // namespace mlir::kiln

#endif // KILN_DIALECTS_KILN_NODELOCATION_H
