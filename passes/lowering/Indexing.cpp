//===- Indexing.cpp - kiln indexing ops -> linalg on tensors -===//

#include "passes/lowering/Patterns.h"

using namespace mlir;

void mlir::kiln::populateKilnIndexingToLinalgPatterns(
    RewritePatternSet &patterns, TypeConverter &typeConverter) {}
