//===- ContractionCodegen.h - Pieces of kiln-tile-contractions --*- C++ -*-===//
//
// kiln-tile-contractions in three steps, one file each:
//   * ContractionPacking.cpp: B operands as nr-wide column panels
//     ([N/nr][K][nr]): constant weights packed at compile time, convolution
//     inputs through an im2col that writes panels directly;
//   * TileContractions.cpp: the tile loops (thread-pool tiles, K blocks,
//     register tiles);
//   * MicroKernel.cpp: the register tile as a k loop of vector FMAs.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_BACKENDS_CPU_CONTRACTIONCODEGEN_H
#define KILN_BACKENDS_CPU_CONTRACTIONCODEGEN_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"

#include <optional>

namespace mlir::kiln {

/// Loop positions of a contraction C[batch, m, n] += A[m, k] * B[batch, k, n]
/// (A may have the batch loops too). In packed form the N loop is split into
/// `nOuter` (panels) and `n` (lanes inside a panel, extent nr).
/// Per-op cache tiles `array<i64: MC, NC, KC>` (the autotuner's choice).
constexpr llvm::StringLiteral kTileSizesAttr = "kiln.tile_sizes";

struct ContractionLoops {
  SmallVector<unsigned> batch;
  unsigned m, n, k;
  std::optional<unsigned> nOuter;
};

/// A contraction on static f32 tensors with one M, N and K loop whose N loop
/// is the innermost dimension of the result and of B.
std::optional<ContractionLoops> matchContraction(linalg::LinalgOp op);

/// Rewrites `op` (matched, B a constant [K, N]) into the packed form with B
/// packed into [ceil(N/nr)][K][nr] at compile time; returns the new
/// contraction and its loops.
FailureOr<std::pair<linalg::GenericOp, ContractionLoops>>
packConstantRhs(RewriterBase &rewriter, linalg::LinalgOp op,
                const ContractionLoops &loops, int64_t nr);

/// A convolution as an im2col into panels and a packed contraction.
struct PackedConvolution {
  linalg::GenericOp im2col; ///< [N][ceil(OH*OW / nr)][C*KH*KW][nr]
  linalg::GenericOp contraction;
  ContractionLoops loops;
};

/// Rewrites an f32 NCHW convolution as an im2col writing panels followed by
/// the packed contraction with the filter as A.
FailureOr<PackedConvolution>
convToPackedContraction(RewriterBase &rewriter, linalg::Conv2DNchwFchwOp conv,
                        int64_t nr);

/// Rewrites a 1x1, stride-1 convolution as the contraction filter [F, C] x
/// input [N, C, H*W] read in place (no im2col: the input's rows are B).
FailureOr<std::pair<linalg::GenericOp, ContractionLoops>>
pointwiseConvToContraction(RewriterBase &rewriter,
                           linalg::Conv2DNchwFchwOp conv);

/// Tiles the im2col to one panel row per step and vectorizes it along the
/// lanes (a gather per row).
LogicalResult vectorizeIm2col(RewriterBase &rewriter, linalg::GenericOp im2col,
                              int64_t nr);

/// Replaces `tile` (all loops but m, n, k of extent 1, m <= mr, n <= nr) by
/// a k loop accumulating a vector<mr x nr> with outer products.
LogicalResult buildMicroKernel(RewriterBase &rewriter, linalg::LinalgOp tile,
                               const ContractionLoops &loops, int64_t mr,
                               int64_t nr);

} // namespace mlir::kiln

#endif // KILN_BACKENDS_CPU_CONTRACTIONCODEGEN_H
