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

void mlir::kiln::appendOnnxNodeNames(Location loc,
                                     std::vector<std::string> &names) {
  if (auto name = dyn_cast<NameLoc>(loc)) {
    if (!llvm::is_contained(names, name.getName().str()))
      names.push_back(name.getName().str());
  } else if (auto fused = dyn_cast<FusedLoc>(loc)) {
    for (Location inner : fused.getLocations())
      appendOnnxNodeNames(inner, names);
  } else if (auto callSite = dyn_cast<CallSiteLoc>(loc)) {
    appendOnnxNodeNames(callSite.getCallee(), names);
  }
}

std::string mlir::kiln::onnxNodeList(ArrayRef<Operation *> ops) {
  std::string s;
  for (Operation *op : ops)
    s += (s.empty() ? "'" : ", '") + onnxNodeName(op->getLoc()) + "'";
  return s;
}
