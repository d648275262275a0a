//===- GraphPicture.h - `kiln inspect --graph`: the kernel graph -*- C++
//-*-===//
//
// Draws a model as the -O2 compile sees it after fusion: one box per
// kernel (its name and the ONNX nodes it computes), graph inputs and
// outputs as ellipses, edges labelled with the tensor shapes that flow
// between kernels. Fused attention, merged contractions, layout
// conversions and epilogues are coloured and named in the box; a
// concatenation written in place and other views are small dashed boxes on
// the edges they sit on. Over 40 kernels, kernels are clustered by layer
// (the first two components of their ONNX node names, as torch exports
// name them). Written as Graphviz dot, or rendered by Graphviz's `dot`
// when the file ends in .svg, .png or .pdf.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_COMPILER_DRIVER_GRAPHPICTURE_H
#define KILN_COMPILER_DRIVER_GRAPHPICTURE_H

#include <string>

namespace mlir::kiln {

/// Writes the kernel graph of the model (ONNX or kiln IR) at `modelPath` to
/// `outPath`. Prints errors; returns the exit code.
int writeGraphPicture(const std::string &modelPath, const std::string &outPath);

} // namespace mlir::kiln

#endif // KILN_COMPILER_DRIVER_GRAPHPICTURE_H
