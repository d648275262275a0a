//===- NNOps.cpp - Shape inference, verifiers and folders of NN ops defined outside ShapeInference.cpp -===//

#include "dialects/kiln/KilnOps.h"

using namespace mlir;
using namespace mlir::kiln;
