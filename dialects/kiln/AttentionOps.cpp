//===- AttentionOps.cpp - Shape inference, verifiers and folders of kiln.attention -===//

#include "dialects/kiln/KilnOps.h"

using namespace mlir;
using namespace mlir::kiln;
