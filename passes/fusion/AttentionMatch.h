//===- AttentionMatch.h - Recognizing decomposed attention ------*- C++ -*-===//
//
// The analysis half of kiln-fuse-attention, kept apart from the rewrite so
// other passes (and tests) can ask "is this attention?" without changing IR.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PASSES_FUSION_ATTENTIONMATCH_H
#define KILN_PASSES_FUSION_ATTENTIONMATCH_H

#include "dialects/kiln/KilnOps.h"
#include "dialects/kiln/NodeLocation.h"
#include "mlir/IR/PatternMatch.h"

#include <string>

namespace mlir::kiln {

/// What `softmax(q k^T * scale + mask) v` was spelled with.
struct AttentionMatch {
  Value query;         // [B..., Sq, D]
  Value keyTransposed; // [B..., D, Sk], as the score matmul reads it
  Value value;         // [B..., Sk, Dv]
  double scale = 1.0;
  /// At most one of these: an additive float mask, or an i1 mask selecting
  /// between the scores and `fill` (kept where the mask is `keepWhen`).
  Value additiveMask;
  Value selectMask;
  bool keepWhen = true;
  double fill = 0.0;
  /// The mask is a constant lower triangle: dropped in favour of `causal`.
  bool causal = false;
  /// torch's guard of the softmax made rows masked everywhere 0.
  bool zeroMaskedRows = false;
  /// Matched ops from the output back to the inputs, for logs and cleanup.
  SmallVector<Operation *> ops;
  /// One line saying what was found, for the fusion log.
  std::string summary;
};

/// torch's guard of the probabilities against rows masked everywhere
/// (SdpaDecomposition.cpp): where(not(any(s != -inf)), 0, softmax(s)).
struct RowGuard {
  SoftmaxOp softmax;
  /// The guard's ops from the where back to the equal (each used once).
  SmallVector<Operation *> ops;
  Operation *equal = nullptr; ///< reads the softmax's input
};
std::optional<RowGuard> matchRowGuard(Value probs);

/// Rewrites reshape4(bmm(reshape3(a), reshape3(b))) that flatten and
/// restore two leading dims, next to a softmax, as the 4-D matmul of a and
/// b; returns how many (SdpaDecomposition.cpp).
int64_t unflattenBatchedMatmuls(RewriterBase &rewriter, Operation *root);

/// Matches attention ending at `output` (the MatMul with the values).
/// On failure, `reason` says why when `output` reads a softmax (a candidate
/// worth logging), and is empty otherwise.
FailureOr<AttentionMatch> matchAttention(MatMulOp output, std::string &reason);

/// Replaces the match with one kiln.attention; the transposes of q/k/v stay
/// outside (the key's is composed with the k^T one). Erases what died.
AttentionOp rewriteAttention(RewriterBase &rewriter, MatMulOp output,
                             const AttentionMatch &match);

} // namespace mlir::kiln

#endif // KILN_PASSES_FUSION_ATTENTIONMATCH_H
