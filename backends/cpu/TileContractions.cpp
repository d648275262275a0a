//===- TileContractions.cpp - Register-tiled, vectorized contractions -----===//
//
// Every f32 contraction with one M, one N and one K loop (matmul,
// batch_matmul, a convolution through a packed im2col) becomes a loop nest
// around an mr x nr register tile:
//
//   scf.forall (batch, M/MC, N/NC)           -> the runtime's thread pool
//     scf.for K step KC                       cache block
//       scf.for M step mr, scf.for N step nr  register tile
//         micro-kernel (MicroKernel.cpp)      vector<mr x nr> accumulator
//
// B operands that are constants, and convolution inputs, are first put in
// nr-wide panels (ContractionPacking.cpp). An accumulator that starts as a
// fill is not filled: the first K block's register tiles start from the
// fill value.
//
//===----------------------------------------------------------------------===//
#include "backends/cpu/ContractionCodegen.h"
#include "backends/cpu/Passes.h"
#include "backends/cpu/TileSizes.h"
#include "dialects/kiln/QuantizedContraction.h"

#include "compiler/logging/Logging.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_TILECONTRACTIONS
#include "backends/cpu/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;

std::optional<ContractionLoops>
mlir::kiln::matchContraction(linalg::LinalgOp op) {
  if (!op.hasPureTensorSemantics() || op.getNumDpsInits() != 1 ||
      op.getNumDpsInputs() != 2 || !op.hasOnlyProjectedPermutations() ||
      !linalg::isaContractionOpInterface(op))
    return std::nullopt;
  for (Value v : op->getOperands())
    if (auto type = dyn_cast<RankedTensorType>(v.getType());
        !type || !type.hasStaticShape() || !type.getElementType().isF32())
      return std::nullopt;
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (failed(dims) || dims->m.size() != 1 || dims->n.size() != 1 ||
      dims->k.size() != 1)
    return std::nullopt;
  ContractionLoops loops{
      SmallVector<unsigned>(dims->batch.begin(), dims->batch.end()), dims->m[0],
      dims->n[0], dims->k[0], std::nullopt};
  auto innermostIs = [&](OpOperand *operand, unsigned dim) {
    AffineMap map = op.getMatchingIndexingMap(operand);
    return map.getNumResults() > 0 &&
           map.getResults().back() == getAffineDimExpr(dim, op.getContext());
  };
  if (!innermostIs(op.getDpsInitOperand(0), loops.n))
    return std::nullopt;
  for (OpOperand *input : op.getDpsInputOperands())
    if (op.getMatchingIndexingMap(input).isFunctionOfDim(loops.n) &&
        !innermostIs(input, loops.n))
      return std::nullopt;
  return loops;
}

namespace {

/// Tile sizes of one level, one entry per loop of `op` (0 = not tiled).
SmallVector<OpFoldResult> sizesFor(Builder &b, unsigned numLoops,
                                   ArrayRef<std::pair<unsigned, int64_t>> set) {
  SmallVector<OpFoldResult> sizes(numLoops, b.getIndexAttr(0));
  for (auto [dim, size] : set)
    sizes[dim] = b.getIndexAttr(size);
  return sizes;
}

FailureOr<linalg::LinalgOp>
tileOnce(RewriterBase &rewriter, linalg::LinalgOp op,
         ArrayRef<OpFoldResult> sizes, bool forall,
         std::optional<std::pair<unsigned, unsigned>> firstTwo = std::nullopt) {
  scf::SCFTilingOptions options;
  options.setTileSizes(sizes);
  if (firstTwo) {
    SmallVector<int64_t> order = {firstTwo->first, firstTwo->second};
    for (unsigned d = 0; d < sizes.size(); ++d)
      if (d != firstTwo->first && d != firstTwo->second)
        order.push_back(d);
    options.setInterchange(order);
  }
  options.setLoopType(forall ? scf::SCFTilingOptions::LoopType::ForallOp
                             : scf::SCFTilingOptions::LoopType::ForOp);
  rewriter.setInsertionPoint(op);
  FailureOr<scf::SCFTilingResult> tiled = scf::tileUsingSCF(
      rewriter, cast<TilingInterface>(op.getOperation()), options);
  if (failed(tiled))
    return failure();
  rewriter.replaceOp(op, tiled->replacements);
  return cast<linalg::LinalgOp>(tiled->tiledOps.back());
}

/// When `op`'s accumulator is a fill (possibly reshaped, as B panels view
/// it), points the accumulator at the fill's destination and returns the
/// fill value: the register tiles of the first K block start from it, so the
/// result is not written with the value and read back (a 2048^2 MatMul
/// saved a 16 MB store and load). Null when the accumulator is anything else.
Value unfillAccumulator(RewriterBase &rewriter, linalg::LinalgOp op) {
  OpOperand *init = op.getDpsInitOperand(0);
  SmallVector<Operation *> reshapes;
  Value value = init->get();
  while (Operation *def = value.getDefiningOp()) {
    if (!isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(def))
      break;
    reshapes.push_back(def);
    value = def->getOperand(0);
  }
  auto fill = value.getDefiningOp<linalg::FillOp>();
  if (!fill || !fill.hasPureTensorSemantics() ||
      !fill.getInputs()[0].getType().isF32())
    return Value();
  rewriter.setInsertionPoint(op);
  Value dest = fill.getOutputs()[0];
  for (Operation *reshape : llvm::reverse(reshapes)) {
    IRMapping mapping;
    mapping.map(reshape->getOperand(0), dest);
    dest = rewriter.clone(*reshape, mapping)->getResult(0);
  }
  rewriter.modifyOpInPlace(op, [&] { init->set(dest); });
  return fill.getInputs()[0];
}

/// Thread-pool tiles, K blocks, register tiles, then the micro-kernel.
LogicalResult tileContraction(RewriterBase &rewriter, linalg::LinalgOp op,
                              const ContractionLoops &loops,
                              const ContractionTileSizes &tiles,
                              const Epilogue *epilogue) {
  Value seed = unfillAccumulator(rewriter, op);
  unsigned numLoops = op.getNumLoops();
  SmallVector<int64_t> bounds = op.getStaticLoopRanges();
  int64_t mSize = bounds[loops.m], kSize = bounds[loops.k];
  // Packed: the N loop splits into panels (tiled) and nr lanes (not).
  unsigned nTiled = loops.nOuter ? *loops.nOuter : loops.n;
  int64_t nUnit = loops.nOuter ? 1 : tiles.nr;
  int64_t nSize = bounds[nTiled];
  int64_t mr = std::min(tiles.mr, mSize), nr = std::min(nUnit, nSize);
  // As many M tiles as MC asks for, of equal height (a multiple of mr): the
  // pool splits the tiles into equal runs per thread, so a short last tile
  // (M = 197 with MC = 128: 128 + 69) would leave one thread idle for a
  // third of the op.
  int64_t mc = std::max<int64_t>(mr, std::min(tiles.mc, mSize) / mr * mr);
  int64_t mTiles = llvm::divideCeil(mSize, mc);
  mc =
      std::min<int64_t>(mc, llvm::alignTo(llvm::divideCeil(mSize, mTiles), mr));
  int64_t nc =
      loops.nOuter ? std::max<int64_t>(1, tiles.nc / tiles.nr) : tiles.nc;
  nc = std::max<int64_t>(nr, std::min(nc, nSize) / nr * nr);
  // bf16 k-pairs, int8 k-quads: the K loop counts groups. An int8 block
  // takes KC quads, as many bytes of B as an f32 block (4 KC k, i32 sums of
  // at most 4 KC products of 255 x 128; KC capped at 8192 quads so that
  // they cannot overflow whatever the tile sizes say).
  int64_t group = loops.pair ? bounds[*loops.pair] : 1;
  int64_t kc = std::min(
      group == 4 ? std::min<int64_t>(tiles.kc, 8192) : tiles.kc / group, kSize);

  Builder b(op.getContext());
  SmallVector<std::pair<unsigned, int64_t>> outer = {{loops.m, mc},
                                                     {nTiled, nc}};
  for (unsigned d : loops.batch)
    outer.push_back({d, 1});
  FailureOr<linalg::LinalgOp> tiled =
      tileOnce(rewriter, op, sizesFor(b, numLoops, outer), /*forall=*/true);
  // The first K block (when there are several) is where a seeded
  // accumulator starts from the seed.
  Value firstBlock;
  if (succeeded(tiled) && kc < kSize) {
    tiled = tileOnce(rewriter, *tiled, sizesFor(b, numLoops, {{loops.k, kc}}),
                     false);
    if (succeeded(tiled) && seed) {
      auto kLoop = (*tiled)->getParentOfType<scf::ForOp>();
      rewriter.setInsertionPointToStart(kLoop.getBody());
      firstBlock = arith::CmpIOp::create(
          rewriter, kLoop.getLoc(), arith::CmpIPredicate::eq,
          kLoop.getInductionVar(), kLoop.getLowerBound());
    }
  }
  if (succeeded(tiled))
    tiled =
        tileOnce(rewriter, *tiled,
                 sizesFor(b, numLoops, {{loops.m, mr}, {nTiled, nr}}), false);
  if (failed(tiled))
    return op.emitError("kiln-tile-contractions: tiling failed");
  int64_t lanes = loops.nOuter ? bounds[loops.n] : nr;
  return buildMicroKernel(rewriter, *tiled, loops, mr, lanes, epilogue, seed,
                          firstBlock);
}

} // namespace

LogicalResult mlir::kiln::vectorizeIm2col(RewriterBase &rewriter,
                                          linalg::GenericOp im2col,
                                          int64_t nr) {
  Builder b(im2col.getContext());
  // [N][panels][K][nr]: a parallel tile per panel, one K row per step.
  FailureOr<linalg::LinalgOp> tiled = tileOnce(
      rewriter, im2col, sizesFor(b, 4, {{0, 1}, {1, 1}}), /*forall=*/true);
  if (succeeded(tiled))
    tiled = tileOnce(rewriter, *tiled, sizesFor(b, 4, {{2, 1}}), false);
  if (failed(tiled))
    return im2col.emitError("kiln-tile-contractions: tiling im2col failed");
  rewriter.setInsertionPoint(*tiled);
  FailureOr<linalg::VectorizationResult> vectorized =
      linalg::vectorize(rewriter, *tiled, /*inputVectorSizes=*/{},
                        /*inputScalableVecDims=*/{},
                        /*vectorizeNDExtract=*/true);
  if (failed(vectorized))
    return (*tiled)->emitError("kiln-tile-contractions: vectorizing im2col "
                               "failed");
  rewriter.replaceOp(*tiled, vectorized->replacements);
  return success();
}

namespace {
/// Transfers read and write the tiles' parent tensors directly.
void cleanUp(func::FuncOp func) {
  MLIRContext *ctx = func.getContext();
  RewritePatternSet patterns(ctx);
  tensor::populateFoldTensorSubsetIntoVectorTransferPatterns(patterns);
  scf::ForOp::getCanonicalizationPatterns(patterns, ctx);
  affine::AffineMinOp::getCanonicalizationPatterns(patterns, ctx);
  tensor::ExtractSliceOp::getCanonicalizationPatterns(patterns, ctx);
  vector::TransferReadOp::getCanonicalizationPatterns(patterns, ctx);
  vector::TransferWriteOp::getCanonicalizationPatterns(patterns, ctx);
  (void)applyPatternsGreedily(func, std::move(patterns));
}

/// The epilogue of `op` if its result's one use is an elementwise generic
/// the register tiles can apply; logs the decision and counts it.
std::optional<Epilogue> fuseEpilogue(RewriterBase &rewriter,
                                     linalg::LinalgOp op,
                                     const ContractionLoops &loops) {
  std::string why;
  FailureOr<Epilogue> epilogue = matchEpilogue(rewriter, op, loops, why);
  if (failed(epilogue)) {
    recordNoEpilogue(op.getLoc(), why);
    return std::nullopt;
  }
  recordEpilogue(op.getLoc(), *epilogue);
  return std::move(*epilogue);
}

struct TileContractions
    : public kiln::impl::TileContractionsBase<TileContractions> {
  using TileContractionsBase::TileContractionsBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    ContractionTileSizes tiles = contractionTileSizes(vectorBits, registers);
    if (cacheTileM > 0)
      tiles.mc = cacheTileM;
    if (cacheTileN > 0)
      tiles.nc = cacheTileN;
    if (cacheTileK > 0)
      tiles.kc = cacheTileK;
    IRRewriter rewriter(&getContext());
    // `kiln.tile_sizes = array<i64: MC, NC, KC>` (set by the autotuner)
    // overrides the cache tiles of one op; rewrites carry it over.
    auto tilesOf = [&](Operation *op) {
      ContractionTileSizes t = tiles;
      auto a = op->getAttrOfType<DenseI64ArrayAttr>(kTileSizesAttr);
      if (a && a.size() == 3 &&
          llvm::all_of(a.asArrayRef(), [](int64_t v) { return v > 0; }))
        std::tie(t.mc, t.nc, t.kc) = std::make_tuple(a[0], a[1], a[2]);
      return t;
    };
    auto carryTiles = [](Attribute tileSizes, Operation *to) {
      if (tileSizes)
        to->setAttr(kTileSizesAttr, tileSizes);
    };

    SmallVector<std::pair<linalg::LinalgOp, ContractionLoops>> work;
    SmallVector<linalg::Conv2DNchwFchwOp> convs;
    SmallVector<linalg::GenericOp> im2cols;
    func.walk([&](linalg::Conv2DNchwFchwOp conv) { convs.push_back(conv); });
    for (linalg::Conv2DNchwFchwOp conv : convs) {
      Attribute tileSizes = conv->getAttr(kTileSizesAttr);
      if (auto direct = pointwiseConvToContraction(rewriter, conv);
          succeeded(direct)) {
        carryTiles(tileSizes, direct->first);
        work.push_back(*direct);
        continue;
      }
      FailureOr<PackedConvolution> packed =
          convToPackedContraction(rewriter, conv, tiles.nr);
      if (failed(packed))
        continue;
      carryTiles(tileSizes, packed->contraction);
      work.push_back({packed->contraction, packed->loops});
      im2cols.push_back(packed->im2col);
    }
    SmallVector<std::pair<linalg::LinalgOp, ContractionLoops>> plain;
    func.walk([&](linalg::LinalgOp op) {
      if (isa<linalg::GenericOp>(op) &&
          llvm::any_of(work, [&](auto &w) { return w.first == op; }))
        return;
      if (std::optional<ContractionLoops> loops = matchContraction(op))
        plain.push_back({op, *loops});
    });
    // kiln.quantized_matmul's int8 products: packed into k-quads for VNNI
    // (only then: otherwise they stay loops).
    func.walk([&](linalg::GenericOp op) {
      // vpdpbusd multiplies unsigned bytes of A: signed ones stay loops.
      auto unsignedLhs = op->getAttrOfType<BoolAttr>(kInt8ContractionAttr);
      if (!int8Dot || !unsignedLhs || !unsignedLhs.getValue() ||
          !op.hasPureTensorSemantics() ||
          !llvm::all_of(op->getOperandTypes(), [](Type t) {
            return cast<RankedTensorType>(t).hasStaticShape();
          }))
        return;
      ContractionLoops loops{{}, 0, 1, 2, std::nullopt};
      Attribute tileSizes = op->getAttr(kTileSizesAttr);
      auto packed = packConstantRhs(rewriter, op, loops, tiles.nr,
                                    releaseWeights, WeightPacking::Int8Quads);
      if (succeeded(packed)) {
        carryTiles(tileSizes, packed->first);
        work.push_back(*packed);
      }
    });
    for (auto &[op, loops] : plain) {
      Attribute tileSizes = op->getAttr(kTileSizesAttr);
      WeightPacking packing = !bf16Weights ? WeightPacking::F32
                              : bf16Dot    ? WeightPacking::Bf16Pairs
                                           : WeightPacking::Bf16;
      auto packed = packConstantRhs(rewriter, op, loops, tiles.nr,
                                    releaseWeights, packing);
      if (failed(packed) && packing == WeightPacking::Bf16Pairs)
        packed = packConstantRhs(rewriter, op, loops, tiles.nr, releaseWeights,
                                 WeightPacking::Bf16);
      if (succeeded(packed)) {
        carryTiles(tileSizes, packed->first);
        work.push_back(*packed);
      } else
        work.push_back({op, loops});
    }
    std::vector<Epilogue> fused;
    for (auto &[op, loops] : work) {
      Type weights = op.getDpsInputOperand(1)->get().getType();
      bool bf16 = getElementTypeOrSelf(weights).isBF16();
      KILN_LOG("codegen", Info)
          << "tiling " << op->getName() << " at " << op.getLoc() << " ("
          << tiles.mr << "x" << tiles.nr << " register tile, " << tilesOf(op).mc
          << "x" << tilesOf(op).nc << "x" << tilesOf(op).kc << " cache tile"
          << (loops.nOuter ? ", B in panels" : "")
          << (!loops.pair ? (bf16 ? ", bf16 weights" : "")
              : getElementTypeOrSelf(weights).isInteger(8)
                  ? ", int8 k-quads (vpdpbusd)"
                  : ", bf16 k-pairs (vdpbf16ps)")
          << ")\n";
      std::optional<Epilogue> epilogue;
      if (fuseEpilogues)
        epilogue = fuseEpilogue(rewriter, op, loops);
      if (failed(tileContraction(rewriter, op, loops, tilesOf(op),
                                 epilogue ? &*epilogue : nullptr)))
        return signalPassFailure();
      if (epilogue)
        fused.push_back(std::move(*epilogue));
    }
    // The accumulators now hold the consumers' values.
    for (Epilogue &epilogue : fused) {
      linalg::GenericOp consumer = epilogue.consumer;
      rewriter.replaceOp(consumer,
                         consumer.getDpsInputs()[epilogue.resultInput]);
    }
    for (linalg::GenericOp im2col : im2cols)
      if (failed(vectorizeIm2col(rewriter, im2col, tiles.nr)))
        return signalPassFailure();
    if (!work.empty())
      cleanUp(func);
  }
};

} // namespace
