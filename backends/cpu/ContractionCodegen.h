//===- ContractionCodegen.h - Pieces of kiln-tile-contractions --*- C++ -*-===//
//
// kiln-tile-contractions in three steps, one file each:
//   * ContractionPacking.cpp: B operands as nr-wide column panels
//     ([N/nr][K][nr]): constant weights packed at compile time, convolution
//     inputs through an im2col that writes panels directly;
//   * TileContractions.cpp: the tile loops (thread-pool tiles, K blocks,
//     register tiles);
//   * MicroKernel.cpp: the register tile as a k loop of vector FMAs;
//   * EpilogueFusion.cpp: matching an elementwise consumer and applying it
//     to the register tiles before they are stored;
//   * EpilogueTiles.cpp: the consumer's body on row vectors, shared with
//     the NHWC convolution kernels (NhwcCodegen.h).
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

/// True when every operand of `op` is a statically shaped f32 tensor: what
/// the contraction and Winograd rewrites of the CPU backend need.
bool hasStaticF32Operands(Operation *op);
/// What the NHWC convolution kernels take: tensors, every operand f32 with
/// a static last dim (the channels; the batch, height and width may be
/// run-time extents), a static filter (input 1).
bool hasNhwcKernelOperands(linalg::LinalgOp op);

/// With `pair` (bf16 k-pairs or int8 k-quads, see WeightPacking), `k` walks
/// groups of the reduction and `pair` (extent 2 or 4) the elements of each.
struct ContractionLoops {
  SmallVector<unsigned> batch;
  unsigned m, n, k;
  std::optional<unsigned> nOuter;
  std::optional<unsigned> pair = std::nullopt;
};

/// A contraction on static f32 tensors with one M, N and K loop whose N loop
/// is the innermost dimension of the result and of B.
std::optional<ContractionLoops> matchContraction(linalg::LinalgOp op);

/// How packConstantRhs stores the weights: f32 panels [ceil(N/nr)][K][nr];
/// the same panels in bf16 (converted to f32 as the micro-kernel loads them);
/// or bf16 k-pairs [ceil(N/nr)][K/2][nr][2] (element (k, lane) at
/// [k/2][lane][k%2]) for vdpbf16ps, A then converted to a bf16 [M, K]
/// first (K must be even); or, for the int8 contractions of
/// kiln.quantized_matmul (kInt8ContractionAttr), int8 k-quads
/// [ceil(N/nr)][K/4][nr][4] for VNNI's vpdpbusd, A read as it is (K a
/// multiple of 4).
enum class WeightPacking { F32, Bf16, Bf16Pairs, Int8Quads };
/// Rewrites `op` (matched, B a constant [K, N]) into the packed form with B
/// packed at compile time as `packing` says; returns the new contraction and
/// its loops. With `releaseWeights`, the unpacked constant, once unused, is
/// erased and its data freed if nothing else in the function refers to it
/// (releaseIfUnreferenced: the function must be the only IR of its context),
/// so packing does not double the weights in memory.
FailureOr<std::pair<linalg::GenericOp, ContractionLoops>>
packConstantRhs(RewriterBase &rewriter, linalg::LinalgOp op,
                const ContractionLoops &loops, int64_t nr,
                bool releaseWeights = false,
                WeightPacking packing = WeightPacking::F32);

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

/// An elementwise linalg.generic consuming a contraction's result, applied
/// in the register tiles on the last K block (EpilogueFusion.cpp).
struct Epilogue {
  /// Result dimensions (of the contraction's accumulator) whose row-major
  /// linear index is one dimension of the values the consumer reads;
  /// `valid` elements of `size` are real (the rest is panel padding).
  struct Group {
    SmallVector<unsigned> accDims;
    int64_t size, valid;
  };
  /// A consumer input with each group it reads collapsed into one dimension.
  struct Operand {
    Value value;
    SmallVector<unsigned> groups; ///< per dimension of `value`
  };
  linalg::GenericOp consumer;
  unsigned resultInput;          ///< the consumer input reading the contraction
  SmallVector<Operand> operands; ///< per consumer input (none at resultInput)
  SmallVector<Group> groups;
  unsigned nGroup = 0;            ///< the group holding the N (lane) loop
  SmallVector<int64_t> fullShape; ///< of the contraction's accumulator
  int64_t kSize = 0;              ///< the full reduction extent
};

/// Matches the single elementwise consumer of `producer`'s result (through
/// reshapes and panel slices) whose lanes run along result dimension
/// `laneDim`, and prepares its operands (collapses inserted before
/// `producer`). On failure `why` says why, and nothing was changed.
FailureOr<Epilogue> matchEpilogue(RewriterBase &rewriter, Operation *producer,
                                  unsigned laneDim, std::string &why);

/// matchEpilogue for a tiled contraction: lanes along its N loop, applied on
/// the last block of its K loop.
FailureOr<Epilogue> matchEpilogue(RewriterBase &rewriter, linalg::LinalgOp op,
                                  const ContractionLoops &loops,
                                  std::string &why);

/// The consumer's body on one row vector `acc` of the producer's result
/// (EpilogueTiles.cpp): `coords` are the absolute result coordinates of its
/// first lane, the lanes running along the epilogue's lane group. Operands
/// along the lanes are read as vectors (masked past the end), the others
/// broadcast.
Value applyEpilogue(OpBuilder &b, Location loc, const Epilogue &epilogue,
                    Value acc, ArrayRef<Value> coords, int64_t lanes);

/// Logs (KILN_LOGS=fusion) that `epilogue` was fused into the kernel of the
/// op at `anchor`, counts it in the report and moves the consumer's nodes
/// into that kernel.
void recordEpilogue(Location anchor, const Epilogue &epilogue);

/// Logs why the op at `anchor` took no epilogue.
void recordNoEpilogue(Location anchor, StringRef why);

/// Writes the mr row vectors of a register tile; returns the new tensor.
using StoreRows =
    function_ref<Value(OpBuilder &, Location, ArrayRef<Value> rows)>;

/// Stores the accumulators `accs` of `tile` through `store`; with an
/// epilogue, on the last K block (`kExtent` ends at K) the consumer's body
/// is applied to them first (one branch per register tile).
Value storeTile(RewriterBase &rewriter, Location loc, linalg::LinalgOp tile,
                const ContractionLoops &loops, const Epilogue *epilogue,
                ArrayRef<Value> rows, ArrayRef<Value> accs, int64_t nr,
                Value kExtent, StoreRows store);

/// Replaces `tile` (all loops but m, n, k of extent 1, m <= mr, n <= nr) by
/// a k loop accumulating a vector<mr x nr> with outer products.
/// With `epilogue`, the tile's stores apply it (see storeTile). With `seed`
/// (an f32 scalar), the accumulators start from that value instead of
/// reading the accumulator tensor (whose fill was removed) when the i1
/// `firstBlock` holds, or always when it is null (no K blocks).
LogicalResult buildMicroKernel(RewriterBase &rewriter, linalg::LinalgOp tile,
                               const ContractionLoops &loops, int64_t mr,
                               int64_t nr, const Epilogue *epilogue = nullptr,
                               Value seed = Value(),
                               Value firstBlock = Value());

} // namespace mlir::kiln

#endif // KILN_BACKENDS_CPU_CONTRACTIONCODEGEN_H
