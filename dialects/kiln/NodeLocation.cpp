//===- NodeLocation.cpp - The ONNX node behind a location -----------------===//
#include "dialects/kiln/NodeLocation.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Operation.h"

std::string mlir::kiln::onnxNodeName(Location loc) {
  if (auto name = dyn_cast<NameLoc>(loc))
    return name.getName().str();
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location inner : fused.getLocations()) {
      std::string name = onnxNodeName(inner);
      if (name != "?")
        return name;
    }
  return "?";
}

std::string mlir::kiln::onnxNodeList(ArrayRef<Operation *> ops) {
  std::string s;
  for (Operation *op : ops)
    s += (s.empty() ? "'" : ", '") + onnxNodeName(op->getLoc()) + "'";
  return s;
}
