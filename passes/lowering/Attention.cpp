//===- Attention.cpp - kiln attention ops -> linalg on tensors -===//

#include "passes/lowering/Patterns.h"

using namespace mlir;

void mlir::kiln::populateKilnAttentionToLinalgPatterns(
    RewritePatternSet &patterns, TypeConverter &typeConverter) {}
