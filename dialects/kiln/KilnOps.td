//===- KilnOps.td - All ops of the kiln dialect -----------*- tablegen -*-===//
//
// One file per op family; this file only gathers them for mlir-tblgen.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_OPS_TD
#define KILN_OPS_TD

include "dialects/kiln/ElementwiseOps.td"
include "dialects/kiln/NNOps.td"
include "dialects/kiln/ReductionOps.td"
include "dialects/kiln/DataMovementOps.td"
include "dialects/kiln/IndexingOps.td"
include "dialects/kiln/AttentionOps.td"
include "dialects/kiln/StringOps.td"

#endif // KILN_OPS_TD
