//===- LowerVectorOps.cpp - Vector ops of kernels to what LLVM takes -----===//
//
// The device conversions (convert-gpu-to-nvvm, -rocdl) convert vector ops
// one to one into the LLVM dialect but, unlike convert-vector-to-llvm, do
// not first lower the higher-level ones. This pass applies the same
// progressive lowerings to the kernels: 1-D transfers to loads/stores (or
// masked ones), permutation maps, broadcasts, masks, contractions to FMAs,
// reductions, transposes and shape casts.
//
//===----------------------------------------------------------------------===//
#include "backends/gpu/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_LOWERVECTOROPS
#include "backends/gpu/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;

namespace {
struct LowerVectorOpsPass
    : public kiln::impl::LowerVectorOpsBase<LowerVectorOpsPass> {
  using Base::Base;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    vector::populateVectorToVectorCanonicalizationPatterns(patterns);
    vector::populateVectorBroadcastLoweringPatterns(patterns);
    vector::populateVectorContractLoweringPatterns(
        patterns, vector::VectorContractLowering::OuterProduct);
    vector::populateVectorOuterProductLoweringPatterns(patterns);
    vector::populateVectorMultiReductionLoweringPatterns(
        patterns, vector::VectorMultiReductionLowering::InnerReduction);
    vector::populateVectorMaskOpLoweringPatterns(patterns);
    vector::populateVectorShapeCastLoweringPatterns(patterns);
    vector::populateVectorInterleaveLoweringPatterns(patterns);
    vector::populateVectorTransposeLoweringPatterns(
        patterns, vector::VectorTransposeLowering::EltWise);
    vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
    vector::populateVectorTransferLoweringPatterns(patterns,
                                                   /*maxTransferRank=*/1);
    vector::populateVectorStepLoweringPatterns(patterns);
    vector::populateVectorGatherLoweringPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
