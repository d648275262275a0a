//===- FuseAttention.cpp - decomposed attention -> kiln.attention ---------===//
//
// Visits every kiln.matmul whose lhs is a softmax (or torch's guarded one,
// after its 3-D bmms are made 4-D again: SdpaDecomposition.cpp), in program
// order, and asks AttentionMatch whether it ends an attention. Each decision is
// logged under KILN_LOGS=fusion with the ONNX node names, fused or not (with
// the reason), so a model that misses the fast path says why.
//
// A walk rather than the greedy driver: one visit per candidate keeps the
// log to one line each, and a match never enables another.
//
//===----------------------------------------------------------------------===//
#include "passes/fusion/AttentionMatch.h"
#include "passes/fusion/Passes.h"

#include "compiler/logging/Logging.h"
#include "compiler/logging/Report.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_FUSEATTENTION
#include "passes/fusion/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;

namespace {
struct FuseAttentionPass
    : mlir::kiln::impl::FuseAttentionBase<FuseAttentionPass> {
  using Base::Base;

  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    // torch's SDPA decomposition: its bmms in 4-D first.
    if (int64_t n = unflattenBatchedMatmuls(rewriter, getOperation()))
      KILN_LOG("fusion", Info)
          << "unflattened " << n << " batched matmul(s) of attention\n";
    SmallVector<MatMulOp> candidates;
    getOperation().walk([&](MatMulOp op) {
      if (op.getLhs().getDefiningOp<SoftmaxOp>() || matchRowGuard(op.getLhs()))
        candidates.push_back(op);
    });
    for (MatMulOp output : candidates) {
      std::string reason;
      std::string at = onnxNodeName(output.getLoc());
      FailureOr<AttentionMatch> match = matchAttention(output, reason);
      if (failed(match)) {
        if (!reason.empty())
          KILN_LOG("fusion", Info)
              << "not fusing attention at '" << at << "': " << reason << "\n";
        continue;
      }
      AttentionOp fused = rewriteAttention(rewriter, output, *match);
      report::count("attention_fused");
      KILN_LOG("fusion", Info) << "fused attention at '" << at << "'"
                               << (fused.getCausal() ? " (causal)" : "") << ": "
                               << match->summary << "\n";
    }
  }
};
} // namespace
