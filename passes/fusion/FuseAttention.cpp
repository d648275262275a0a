//===- FuseAttention.cpp - decomposed attention -> kiln.attention ---------===//

#include "passes/fusion/Passes.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_FUSEATTENTION
#include "passes/fusion/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;

namespace {
struct FuseAttentionPass
    : mlir::kiln::impl::FuseAttentionBase<FuseAttentionPass> {
  using Base::Base;
  void runOnOperation() override {}
};
} // namespace
