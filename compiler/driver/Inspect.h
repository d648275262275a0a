//===- Inspect.h - `kiln inspect`: summarize a model or artifact -*- C++
//-*-===//
#ifndef KILN_COMPILER_DRIVER_INSPECT_H
#define KILN_COMPILER_DRIVER_INSPECT_H

#include <string>

namespace mlir::kiln {
/// Prints inputs/outputs, op histogram, parameter count and opset of an ONNX
/// file, or the descriptor of a compiled artifact. Returns the exit code.
int inspectFile(const std::string &path);
} // namespace mlir::kiln

#endif // KILN_COMPILER_DRIVER_INSPECT_H
