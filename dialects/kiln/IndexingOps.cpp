//===- IndexingOps.cpp - Shape inference, verifiers and folders of indexing ops -===//

#include "dialects/kiln/KilnOps.h"

using namespace mlir;
using namespace mlir::kiln;
