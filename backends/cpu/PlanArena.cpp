//===- PlanArena.cpp - One arena for all intermediate buffers -------------===//
#include "backends/cpu/Passes.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_PLANARENA
#include "backends/cpu/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;

namespace {
struct PlanArenaPass : public kiln::impl::PlanArenaBase<PlanArenaPass> {
  using Base::Base;
  void runOnOperation() override {}
};
} // namespace
