//===- IndexingOps.td - gather/scatter/pad/resize and other indexing ops -*- tablegen -*-===//
#ifndef KILN_INDEXING_OPS_TD
#define KILN_INDEXING_OPS_TD

include "dialects/kiln/KilnOpBase.td"

#endif // KILN_INDEXING_OPS_TD
