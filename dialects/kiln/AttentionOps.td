//===- AttentionOps.td - fused attention -*- tablegen -*-===//
#ifndef KILN_ATTENTION_OPS_TD
#define KILN_ATTENTION_OPS_TD

include "dialects/kiln/KilnOpBase.td"

#endif // KILN_ATTENTION_OPS_TD
