//===- Attention.cpp - kiln.attention -> FlashAttention-2 loops on tensors
//-===//
//
// softmax(q k^T * scale + mask) v without the [Sq, Sk] score matrix: for each
// batch index and each block of Bq query rows, walk the keys in blocks of Bk
// keeping, per row, the running max m, the running sum l of exp(s - m) and
// an unnormalized output acc; each block rescales l and acc by
// exp(m_old - m_new). One division by l at the end (FlashAttention-2).
//
// Only [Bk, Bq] score tiles and [Bq, Dv] accumulators exist, so memory is
// linear in the sequence length. Causal attention stops the key loop at the
// diagonal block. Block sizes are static; a sequence that is not a multiple
// of the block gets one tail block of static size (run-time sizes: one
// zero-padded block), so every linalg op has static shapes for the CPU
// backend.
//
// The scale is folded into a transposed copy of the query block, qT [D, Bq],
// made once per block; the scores are computed transposed, sT = k qT, with
// the query rows innermost. Both products are then plain contractions
// (N = queries, then N = Dv) that the CPU backend register-tiles, and the
// row max and sum reduce over the outer dim of sT, so every softmax pass
// over the tile is a vector loop over query lanes, not a scalar reduction.
//
// Every loop-carried tensor is updated in destination-passing style (the
// iter_arg is the `outs` of the op that updates it), so one-shot
// bufferization keeps m, l and acc in place. The (batch index, query block)
// pairs are one scf.forall: the runtime's thread pool runs them in
// parallel, and the per-iteration scratch (score tile, m, l, acc) becomes
// per-thread stack buffers in the backend (kiln-privatize-parallel-allocs).
//
// A key row masked everywhere gives 0/0 = NaN, as the unfused softmax does.
//
//===----------------------------------------------------------------------===//
#include "passes/lowering/LoweringUtils.h"
#include "passes/lowering/Patterns.h"

#include "dialects/kiln/KilnOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <limits>

using namespace mlir;
using namespace mlir::kiln;

namespace {

// 64x64 f32 score tiles (16 KB) and 64-row accumulators stay in L1/L2 and
// give the vectorizer full-width inner loops.
constexpr int64_t kQueryBlock = 64;
constexpr int64_t kKeyBlock = 64;

using utils::IteratorType;

/// The running statistics of one query block.
struct RowState {
  Value max, sum, acc; // [bq], [bq], [bq, Dv] in the accumulator type
};

class FlashAttentionEmitter {
public:
  FlashAttentionEmitter(OpBuilder &b, Location loc, AttentionOp op, Value q,
                        Value k, Value v, Value mask)
      : b(b), loc(loc), ctx(b.getContext()), q(q), k(k), v(v), mask(mask),
        scale(op.getScale().convertToDouble()), causal(op.getCausal()),
        zeroMaskedRows(op.getZeroMaskedRows()) {
    auto qType = cast<RankedTensorType>(q.getType());
    element = qType.getElementType();
    accType = getAccumulatorType(element);
    rank = qType.getRank();
    batch = llvm::to_vector(qType.getShape().drop_back(2));
    sq = qType.getShape().end()[-2];
    headDim = qType.getShape().back();
    sk = cast<RankedTensorType>(k.getType()).getShape().end()[-2];
    valueDim = cast<RankedTensorType>(v.getType()).getShape().back();
    // Symbolic batch or sequence: the extents are read once; the blocks
    // stay static, the last one of each loop zero-padded and masked.
    runTime = !qType.hasStaticShape() ||
              !cast<RankedTensorType>(k.getType()).hasStaticShape();
    for (auto [d, extent] : llvm::enumerate(batch))
      batchSizes.push_back(
          ShapedType::isDynamic(extent)
              ? OpFoldResult(tensor::DimOp::create(b, loc, q, d).getResult())
              : OpFoldResult(b.getIndexAttr(extent)));
    sqValue = ShapedType::isDynamic(sq)
                  ? Value(tensor::DimOp::create(b, loc, q, rank - 2))
                  : index(sq);
    skValue = ShapedType::isDynamic(sk)
                  ? Value(tensor::DimOp::create(b, loc, k, rank - 2))
                  : index(sk);
    if (mask) {
      // Leading unit dims make the mask's dims line up with q's.
      auto maskShape = cast<RankedTensorType>(mask.getType()).getShape();
      SmallVector<int64_t> aligned(rank - maskShape.size(), 1);
      llvm::append_range(aligned, maskShape);
      if (aligned.size() != maskShape.size())
        this->mask = createReshape(b, loc, mask, aligned);
      maskDims = aligned;
    }
  }

  Value emit() {
    SmallVector<int64_t> shape(batch);
    shape.append({sq, valueDim});
    SmallVector<Value> dynamicSizes;
    for (auto [extent, size] : llvm::zip(batch, batchSizes))
      if (ShapedType::isDynamic(extent))
        dynamicSizes.push_back(cast<Value>(size));
    if (ShapedType::isDynamic(sq))
      dynamicSizes.push_back(sqValue);
    Value out = createEmptyTensor(b, loc, RankedTensorType::get(shape, element),
                                  dynamicSizes);
    return blockLoop(out);
  }

private:
  Value index(int64_t i) { return arith::ConstantIndexOp::create(b, loc, i); }
  TypedAttr floatAttr(double x) { return b.getFloatAttr(accType, x); }
  Value extend(OpBuilder &nb, Value x) {
    if (x.getType() == accType)
      return x;
    return arith::ExtFOp::create(nb, loc, accType, x);
  }
  AffineMap map(unsigned numDims, ArrayRef<int64_t> dims) {
    return mapOfDims(ctx, numDims, dims);
  }
  /// A max of -inf means "nothing kept yet": subtract 0 instead, so exp
  /// gives 0 rather than exp(-inf - -inf) = NaN.
  Value finiteMax(OpBuilder &nb, Value max) {
    Value negInf = arith::ConstantOp::create(
        nb, loc,
        nb.getFloatAttr(accType, -std::numeric_limits<double>::infinity()));
    Value zero =
        arith::ConstantOp::create(nb, loc, nb.getFloatAttr(accType, 0.0));
    Value isNegInf =
        arith::CmpFOp::create(nb, loc, arith::CmpFPredicate::OEQ, max, negInf);
    return arith::SelectOp::create(nb, loc, isNegInf, zero, max);
  }

  /// A 2-D tile of a rank-`rank` operand at (batch index..., row, 0).
  Value tile(Value source, ArrayRef<Value> batchIndex, OpFoldResult row,
             int64_t rows, int64_t cols) {
    SmallVector<OpFoldResult> offsets(batchIndex.begin(), batchIndex.end());
    SmallVector<OpFoldResult> sizes(batchIndex.size(), b.getIndexAttr(1));
    offsets.append({row, b.getIndexAttr(0)});
    sizes.append({b.getIndexAttr(rows), b.getIndexAttr(cols)});
    SmallVector<OpFoldResult> strides(rank, b.getIndexAttr(1));
    auto type = RankedTensorType::get(
        {rows, cols},
        cast<RankedTensorType>(source.getType()).getElementType());
    return tensor::ExtractSliceOp::create(b, loc, type, source, offsets, sizes,
                                          strides);
  }

  /// One scf.forall over every (batch index, query block): the runtime's
  /// thread pool runs them in parallel, so even one head keeps every thread
  /// busy. Each iteration computes its [rows, Dv] tile of the result and
  /// inserts it in parallel. Causal blocks get cheaper towards the top, so
  /// iterations 2a and 2a + 1 take blocks a and n - 1 - a: every run of
  /// consecutive iterations the pool hands a thread has about equal work.
  Value blockLoop(Value out) {
    int64_t bq = runTime ? kQueryBlock : std::min(kQueryBlock, sq);
    // Full blocks, then (static) a tail of sq % bq rows or (run-time) the
    // rest zero-padded to bq rows.
    Value blocks =
        runTime ? Value(arith::CeilDivUIOp::create(b, loc, sqValue, index(bq)))
                : index(llvm::divideCeil(sq, bq));
    SmallVector<OpFoldResult> bounds(batchSizes);
    bounds.push_back(blocks);
    auto loop =
        scf::ForallOp::create(b, loc, bounds, ValueRange{out}, std::nullopt);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    SmallVector<Value> batchIndex(loop.getInductionVars());
    Value block = batchIndex.pop_back_val();
    if (causal) {
      Value half = arith::DivUIOp::create(b, loc, block, index(2));
      Value odd = arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::ne,
          arith::RemUIOp::create(b, loc, block, index(2)), index(0));
      Value mirrored = arith::SubIOp::create(
          b, loc, arith::SubIOp::create(b, loc, blocks, index(1)), half);
      block = arith::SelectOp::create(b, loc, odd, mirrored, half);
    }
    Value row0 = arith::MulIOp::create(b, loc, block, index(bq));
    Value result;
    OpFoldResult rows;
    int64_t tail = runTime ? 0 : sq % bq;
    if (!runTime && !tail) {
      result = queryBlock(batchIndex, row0, bq);
      rows = b.getIndexAttr(bq);
    } else {
      // The last block is short: its own static tile, or padded.
      Value rest = arith::MinUIOp::create(
          b, loc, arith::SubIOp::create(b, loc, sqValue, row0), index(bq));
      Value whole = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                          rest, index(bq));
      auto dynamicTile =
          RankedTensorType::get({ShapedType::kDynamic, valueDim}, element);
      auto branch = [&](OpBuilder &nb, function_ref<Value()> body) {
        OpBuilder::InsertionGuard inner(b);
        b.restoreInsertionPoint(nb.saveInsertionPoint());
        Value tile = tensor::CastOp::create(b, loc, dynamicTile, body());
        scf::YieldOp::create(b, loc, tile);
      };
      auto ifOp = scf::IfOp::create(
          b, loc, whole,
          [&](OpBuilder &nb, Location) {
            branch(nb, [&] { return queryBlock(batchIndex, row0, bq); });
          },
          [&](OpBuilder &nb, Location) {
            branch(nb, [&] {
              return tail ? queryBlock(batchIndex, row0, tail)
                          : queryBlock(batchIndex, row0, bq, rest);
            });
          });
      result = ifOp.getResult(0);
      rows = rest;
    }
    b.setInsertionPointToEnd(loop.getTerminator().getBody());
    SmallVector<OpFoldResult> offsets(batchIndex.begin(), batchIndex.end());
    offsets.append({row0, b.getIndexAttr(0)});
    SmallVector<OpFoldResult> sizes(batch.size(), b.getIndexAttr(1));
    sizes.append({rows, b.getIndexAttr(valueDim)});
    SmallVector<OpFoldResult> strides(rank, b.getIndexAttr(1));
    tensor::ParallelInsertSliceOp::create(
        b, loc, result, loop.getRegionOutArgs()[0], offsets, sizes, strides);
    return loop.getResult(0);
  }

  /// Rows [row0, row0 + rows) of `source` at `batchIndex`, zero-padded to
  /// `staticRows` rows: the tile of a block that runs past the extent.
  Value paddedTile(Value source, ArrayRef<Value> batchIndex, Value row0,
                   Value rows, int64_t staticRows, int64_t cols) {
    SmallVector<OpFoldResult> offsets(batchIndex.begin(), batchIndex.end());
    SmallVector<OpFoldResult> sizes(batchIndex.size(), b.getIndexAttr(1));
    offsets.append({row0, b.getIndexAttr(0)});
    sizes.append({rows, b.getIndexAttr(cols)});
    SmallVector<OpFoldResult> strides(rank, b.getIndexAttr(1));
    Type elementType =
        cast<RankedTensorType>(source.getType()).getElementType();
    Value slice = tensor::ExtractSliceOp::create(
        b, loc,
        RankedTensorType::get({ShapedType::kDynamic, cols}, elementType),
        source, offsets, sizes, strides);
    Value missing = arith::SubIOp::create(b, loc, index(staticRows), rows);
    Value zero = arith::ConstantOp::create(
        b, loc, cast<TypedAttr>(b.getZeroAttr(elementType)));
    Value pad = tensor::PadOp::create(
        b, loc, RankedTensorType(), slice,
        ArrayRef<OpFoldResult>{b.getIndexAttr(0), b.getIndexAttr(0)},
        ArrayRef<OpFoldResult>{missing, b.getIndexAttr(0)}, zero);
    return tensor::CastOp::create(
        b, loc, RankedTensorType::get({staticRows, cols}, elementType), pad);
  }

  /// Attention for rows [row0, row0 + bq) as a [bq, Dv] tile; with
  /// `validRows`, only that many rows exist (the tile is padded, and the
  /// result is its first `validRows` rows).
  Value queryBlock(ArrayRef<Value> batchIndex, Value row0, int64_t bq,
                   Value validRows = {}) {
    Value qTile = validRows
                      ? paddedTile(q, batchIndex, row0, validRows, bq, headDim)
                      : tile(q, batchIndex, row0, bq, headDim);
    queryRows = validRows;
    RowState state{
        createFilledTensor(b, loc, {bq},
                           floatAttr(-std::numeric_limits<double>::infinity())),
        createFilledTensor(b, loc, {bq}, floatAttr(0.0)),
        createFilledTensor(b, loc, {bq, valueDim}, floatAttr(0.0))};
    state = keyBlocks(scaledTranspose(qTile, bq), batchIndex, row0, bq, state);

    // out = acc / l, in the result's element type.
    Value outTile = tensor::EmptyOp::create(
        b, loc, ArrayRef<int64_t>{bq, valueDim}, element);
    auto normalize = linalg::GenericOp::create(
        b, loc, outTile.getType(), ValueRange{state.acc, state.sum}, outTile,
        ArrayRef<AffineMap>{map(2, {0, 1}), map(2, {0}), map(2, {0, 1})},
        parallelIterators(2), [&](OpBuilder &nb, Location nl, ValueRange args) {
          Value o = arith::DivFOp::create(nb, nl, args[0], args[1]);
          // A row with every key masked out sums to 0 (max -inf: exp of
          // -inf - 0): 0 rather than 0/0 when asked.
          if (zeroMaskedRows) {
            Value zero = arith::ConstantOp::create(
                nb, nl, nb.getFloatAttr(args[1].getType(), 0.0));
            Value empty = arith::CmpFOp::create(
                nb, nl, arith::CmpFPredicate::OEQ, args[1], zero);
            o = arith::SelectOp::create(nb, nl, empty, zero, o);
          }
          if (o.getType() != element)
            o = arith::TruncFOp::create(nb, nl, element, o);
          linalg::YieldOp::create(nb, nl, o);
        });
    Value result = normalize.getResult(0);
    if (!validRows)
      return result;
    return tensor::ExtractSliceOp::create(
        b, loc, result,
        ArrayRef<OpFoldResult>{b.getIndexAttr(0), b.getIndexAttr(0)},
        ArrayRef<OpFoldResult>{validRows, b.getIndexAttr(valueDim)},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1)});
  }

  /// Run-time Sk: full blocks of kKeyBlock keys in a loop (stopping at the
  /// diagonal when causal), then the rest as one block zero-padded to
  /// kKeyBlock keys whose padding is masked out.
  RowState keyBlocksRunTime(Value qT, ArrayRef<Value> batchIndex, Value row0,
                            int64_t bq, RowState state) {
    int64_t bk = kKeyBlock;
    Value full = arith::MulIOp::create(
        b, loc, arith::DivUIOp::create(b, loc, skValue, index(bk)), index(bk));
    Value end = full;
    if (causal) {
      Value reach = arith::AddIOp::create(b, loc, row0, index(bq + bk - 1));
      Value blocks = arith::DivUIOp::create(b, loc, reach, index(bk));
      end = arith::MinUIOp::create(
          b, loc, arith::MulIOp::create(b, loc, blocks, index(bk)), full);
    }
    auto loop = scf::ForOp::create(b, loc, index(0), end, index(bk),
                                   ValueRange{state.max, state.sum, state.acc});
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      ValueRange args = loop.getRegionIterArgs();
      RowState next = keyBlock(qT, batchIndex, row0, bq, loop.getInductionVar(),
                               bk, {args[0], args[1], args[2]});
      scf::YieldOp::create(b, loc, ValueRange{next.max, next.sum, next.acc});
    }
    state = {loop.getResult(0), loop.getResult(1), loop.getResult(2)};
    Value rest = arith::SubIOp::create(b, loc, skValue, full);
    Value needed = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt,
                                         rest, index(0));
    if (causal) {
      // Only if some row of this block reaches the tail.
      Value lastRow = arith::AddIOp::create(b, loc, row0, index(bq - 1));
      needed = arith::AndIOp::create(
          b, loc, needed,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, lastRow,
                                full));
    }
    auto ifOp = scf::IfOp::create(
        b, loc, needed,
        [&](OpBuilder &nb, Location) {
          OpBuilder::InsertionGuard guard(b);
          b.restoreInsertionPoint(nb.saveInsertionPoint());
          RowState next =
              keyBlock(qT, batchIndex, row0, bq, full, bk, state, rest);
          scf::YieldOp::create(b, loc,
                               ValueRange{next.max, next.sum, next.acc});
        },
        [&](OpBuilder &nb, Location) {
          scf::YieldOp::create(nb, loc,
                               ValueRange{state.max, state.sum, state.acc});
        });
    return {ifOp.getResult(0), ifOp.getResult(1), ifOp.getResult(2)};
  }

  RowState keyBlocks(Value qT, ArrayRef<Value> batchIndex, Value row0,
                     int64_t bq, RowState state) {
    if (runTime)
      return keyBlocksRunTime(qT, batchIndex, row0, bq, state);
    int64_t bk = std::min(kKeyBlock, sk);
    int64_t full = sk / bk, tail = sk % bk;
    Value end = index(full * bk);
    if (causal) {
      // Key blocks starting past the block's last row are fully masked:
      // stop at ceil((row0 + bq) / bk) * bk.
      Value reach = arith::AddIOp::create(b, loc, row0, index(bq + bk - 1));
      Value blocks = arith::DivUIOp::create(b, loc, reach, index(bk));
      Value stop = arith::MulIOp::create(b, loc, blocks, index(bk));
      end = arith::MinUIOp::create(b, loc, stop, end);
    }
    if (full > 0) {
      auto loop =
          scf::ForOp::create(b, loc, index(0), end, index(bk),
                             ValueRange{state.max, state.sum, state.acc});
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      ValueRange args = loop.getRegionIterArgs();
      RowState next = keyBlock(qT, batchIndex, row0, bq, loop.getInductionVar(),
                               bk, {args[0], args[1], args[2]});
      scf::YieldOp::create(b, loc, ValueRange{next.max, next.sum, next.acc});
      state = {loop.getResult(0), loop.getResult(1), loop.getResult(2)};
    }
    if (!tail)
      return state;
    Value col0 = index(full * bk);
    if (!causal)
      return keyBlock(qT, batchIndex, row0, bq, col0, tail, state);
    // The tail block matters only if some row of this block reaches it.
    Value lastRow = arith::AddIOp::create(b, loc, row0, index(bq - 1));
    Value reaches =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, lastRow, col0);
    auto ifOp = scf::IfOp::create(
        b, loc, reaches,
        [&](OpBuilder &nb, Location) {
          OpBuilder::InsertionGuard guard(b);
          b.restoreInsertionPoint(nb.saveInsertionPoint());
          RowState next = keyBlock(qT, batchIndex, row0, bq, col0, tail, state);
          scf::YieldOp::create(b, loc,
                               ValueRange{next.max, next.sum, next.acc});
        },
        [&](OpBuilder &nb, Location) {
          scf::YieldOp::create(nb, loc,
                               ValueRange{state.max, state.sum, state.acc});
        });
    return {ifOp.getResult(0), ifOp.getResult(1), ifOp.getResult(2)};
  }

  /// The mask's [rows, cols] tile for this block; broadcast dims stay size
  /// 1 and are dropped, `dims` says which of (row, col) remain.
  Value maskTile(ArrayRef<Value> batchIndex, Value row0, int64_t bq, Value col0,
                 int64_t bk, SmallVectorImpl<int64_t> &dims,
                 Value validKeys = {}) {
    SmallVector<OpFoldResult> offsets, sizes;
    for (auto [i, idx] : llvm::enumerate(batchIndex)) {
      offsets.push_back(maskDims[i] == 1 ? OpFoldResult(b.getIndexAttr(0))
                                         : OpFoldResult(idx));
      sizes.push_back(b.getIndexAttr(1));
    }
    SmallVector<int64_t> shape;
    // Rows or keys of a padded block that do not exist are read as zeros.
    SmallVector<OpFoldResult> missing;
    SmallVector<int64_t> staticShape;
    auto addDim = [&](int64_t maskSize, Value start, int64_t size, int64_t loop,
                      Value valid) {
      if (maskSize == 1) {
        offsets.push_back(b.getIndexAttr(0));
        sizes.push_back(b.getIndexAttr(1));
        return;
      }
      offsets.push_back(start);
      sizes.push_back(valid ? OpFoldResult(valid)
                            : OpFoldResult(b.getIndexAttr(size)));
      shape.push_back(valid ? ShapedType::kDynamic : size);
      staticShape.push_back(size);
      missing.push_back(
          valid ? OpFoldResult(arith::SubIOp::create(b, loc, index(size), valid)
                                   .getResult())
                : OpFoldResult(b.getIndexAttr(0)));
      dims.push_back(loop);
    };
    addDim(maskDims[rank - 2], row0, bq, 0, queryRows);
    addDim(maskDims[rank - 1], col0, bk, 1, validKeys);
    SmallVector<OpFoldResult> strides(rank, b.getIndexAttr(1));
    Type elementType = cast<RankedTensorType>(mask.getType()).getElementType();
    auto type = RankedTensorType::get(shape, elementType);
    Value tile = tensor::ExtractSliceOp::create(b, loc, type, mask, offsets,
                                                sizes, strides);
    if (shape == staticShape)
      return tile;
    Value zero = arith::ConstantOp::create(
        b, loc, cast<TypedAttr>(b.getZeroAttr(elementType)));
    SmallVector<OpFoldResult> low(shape.size(), b.getIndexAttr(0));
    Value pad = tensor::PadOp::create(b, loc, RankedTensorType(), tile, low,
                                      missing, zero);
    return tensor::CastOp::create(
        b, loc, RankedTensorType::get(staticShape, elementType), pad);
  }

  /// One step of the recurrence over keys [col0, col0 + bk). The score
  /// tile is kept transposed, [bk, bq] with the query rows innermost: the
  /// row statistics (max, sum) reduce over the outer dim, so every pass over
  /// the tile is a loop over contiguous query lanes that vectorizes without
  /// reassociating a reduction.
  RowState keyBlock(Value qT, ArrayRef<Value> batchIndex, Value row0,
                    int64_t bq, Value col0, int64_t bk, RowState state,
                    Value validKeys = {}) {
    Value kTile = validKeys
                      ? paddedTile(k, batchIndex, col0, validKeys, bk, headDim)
                      : tile(k, batchIndex, col0, bk, headDim);
    Value vTile = validKeys
                      ? paddedTile(v, batchIndex, col0, validKeys, bk, valueDim)
                      : tile(v, batchIndex, col0, bk, valueDim);
    auto red = IteratorType::reduction, par = IteratorType::parallel;

    // sT[j, i] = sum_c k[j, c] qT[c, i] over (j, i, c): a contraction with
    // the queries as its N dim (read along rows of qT), which the CPU
    // backend register-tiles.
    Value scores = createFilledTensor(b, loc, {bk, bq}, floatAttr(0.0));
    scores =
        linalg::GenericOp::create(
            b, loc, scores.getType(), ValueRange{kTile, qT}, scores,
            ArrayRef<AffineMap>{map(3, {0, 2}), map(3, {2, 1}), map(3, {0, 1})},
            ArrayRef<IteratorType>{par, par, red},
            [&](OpBuilder &nb, Location nl, ValueRange args) {
              Value prod =
                  arith::MulFOp::create(nb, nl, extend(nb, args[0]), args[1]);
              linalg::YieldOp::create(
                  nb, nl, Value(arith::AddFOp::create(nb, nl, args[2], prod)));
            })
            .getResult(0);

    // s += mask, -inf above the diagonal when causal and for the padding
    // keys of a padded block (the scale is already in qT).
    if (mask || causal || validKeys) {
      SmallVector<Value> maskInputs;
      SmallVector<AffineMap> maskMaps;
      if (mask) {
        SmallVector<int64_t> dims; // 0 = query row, 1 = key: loops 1 and 0
        maskInputs.push_back(
            maskTile(batchIndex, row0, bq, col0, bk, dims, validKeys));
        for (int64_t &d : dims)
          d = 1 - d;
        maskMaps.push_back(map(2, dims));
      }
      maskMaps.push_back(map(2, {0, 1}));
      scores =
          linalg::GenericOp::create(
              b, loc, scores.getType(), maskInputs, scores, maskMaps,
              parallelIterators(2),
              [&](OpBuilder &nb, Location nl, ValueRange args) {
                Value s = args.back();
                if (mask)
                  s = arith::AddFOp::create(nb, nl, s, extend(nb, args[0]));
                Value negInf = arith::ConstantOp::create(
                    nb, nl,
                    nb.getFloatAttr(accType,
                                    -std::numeric_limits<double>::infinity()));
                if (causal) {
                  Value row = arith::AddIOp::create(
                      nb, nl, row0, linalg::IndexOp::create(nb, nl, 1));
                  Value col = arith::AddIOp::create(
                      nb, nl, col0, linalg::IndexOp::create(nb, nl, 0));
                  Value future = arith::CmpIOp::create(
                      nb, nl, arith::CmpIPredicate::ugt, col, row);
                  s = arith::SelectOp::create(nb, nl, future, negInf, s);
                }
                if (validKeys) { // padding keys of the last block
                  Value padding = arith::CmpIOp::create(
                      nb, nl, arith::CmpIPredicate::uge,
                      linalg::IndexOp::create(nb, nl, 0), validKeys);
                  s = arith::SelectOp::create(nb, nl, padding, negInf, s);
                }
                linalg::YieldOp::create(nb, nl, s);
              })
              .getResult(0);
    }

    // Block row max, then alpha = exp(m_old - m_new) and m = m_new.
    Value blockMax = createFilledTensor(
        b, loc, {bq}, floatAttr(-std::numeric_limits<double>::infinity()));
    blockMax = reduceKeys(
        scores, blockMax, [&](OpBuilder &nb, Location nl, ValueRange args) {
          return arith::MaximumFOp::create(nb, nl, args[0], args[1]);
        });
    Value alpha = createEmptyTensor(b, loc, {bq}, accType);
    alpha = linalg::GenericOp::create(
                b, loc, alpha.getType(), ValueRange{state.max, blockMax}, alpha,
                ArrayRef<AffineMap>{map(1, {0}), map(1, {0}), map(1, {0})},
                parallelIterators(1),
                [&](OpBuilder &nb, Location nl, ValueRange args) {
                  Value newMax =
                      arith::MaximumFOp::create(nb, nl, args[0], args[1]);
                  Value diff = arith::SubFOp::create(nb, nl, args[0],
                                                     finiteMax(nb, newMax));
                  linalg::YieldOp::create(
                      nb, nl, Value(math::ExpOp::create(nb, nl, diff)));
                })
                .getResult(0);
    Value newMax =
        inPlace(state.max, {blockMax}, {map(1, {0})}, 1,
                [&](OpBuilder &nb, Location nl, ValueRange args) {
                  return arith::MaximumFOp::create(nb, nl, args[1], args[0]);
                });

    // l = l * alpha, then in one pass over the tile (keys outside, query
    // lanes inside) p = exp(s - m_new) in place and l += rowsum(p).
    Value sum =
        inPlace(state.sum, {alpha}, {map(1, {0})}, 1,
                [&](OpBuilder &nb, Location nl, ValueRange args) {
                  return arith::MulFOp::create(nb, nl, args[1], args[0]);
                });
    auto expSum = linalg::GenericOp::create(
        b, loc, TypeRange{scores.getType(), sum.getType()}, ValueRange{newMax},
        ValueRange{scores, sum},
        ArrayRef<AffineMap>{map(2, {1}), map(2, {0, 1}), map(2, {1})},
        ArrayRef<IteratorType>{IteratorType::reduction, IteratorType::parallel},
        [&](OpBuilder &nb, Location nl, ValueRange args) {
          Value diff =
              arith::SubFOp::create(nb, nl, args[1], finiteMax(nb, args[0]));
          Value p = math::ExpOp::create(nb, nl, diff);
          linalg::YieldOp::create(
              nb, nl, ValueRange{p, arith::AddFOp::create(nb, nl, args[2], p)});
        });
    Value probs = expSum.getResult(0);
    sum = expSum.getResult(1);

    // acc = acc * alpha + p v_tile over (i, c, j), p read as pT[j, i].
    Value acc =
        inPlace(state.acc, {alpha}, {map(2, {0})}, 2,
                [&](OpBuilder &nb, Location nl, ValueRange args) {
                  return arith::MulFOp::create(nb, nl, args[1], args[0]);
                });
    acc =
        linalg::GenericOp::create(
            b, loc, acc.getType(), ValueRange{probs, vTile}, acc,
            ArrayRef<AffineMap>{map(3, {2, 0}), map(3, {2, 1}), map(3, {0, 1})},
            ArrayRef<IteratorType>{par, par, red},
            [&](OpBuilder &nb, Location nl, ValueRange args) {
              Value prod =
                  arith::MulFOp::create(nb, nl, args[0], extend(nb, args[1]));
              linalg::YieldOp::create(
                  nb, nl, Value(arith::AddFOp::create(nb, nl, args[2], prod)));
            })
            .getResult(0);
    return {newMax, sum, acc};
  }

  /// Reduces a transposed [bk, bq] tile over its keys into `init` [bq]:
  /// the key loop outside, the query lanes inside. The body gets the tile's
  /// element, then the running value.
  Value reduceKeys(Value tile, Value init, ScalarBuilder body) {
    return linalg::GenericOp::create(
               b, loc, init.getType(), ValueRange{tile}, init,
               ArrayRef<AffineMap>{map(2, {0, 1}), map(2, {1})},
               ArrayRef<IteratorType>{IteratorType::reduction,
                                      IteratorType::parallel},
               [&](OpBuilder &nb, Location nl, ValueRange args) {
                 linalg::YieldOp::create(nb, nl, body(nb, nl, args));
               })
        .getResult(0);
  }

  /// qT[c, i] = q[row0 + i, c] * scale in the accumulator type: the score
  /// contraction's B operand, built once per query block.
  Value scaledTranspose(Value qTile, int64_t bq) {
    Value qT = createEmptyTensor(b, loc, {headDim, bq}, accType);
    return linalg::GenericOp::create(
               b, loc, qT.getType(), ValueRange{qTile}, qT,
               ArrayRef<AffineMap>{map(2, {1, 0}), map(2, {0, 1})},
               parallelIterators(2),
               [&](OpBuilder &nb, Location nl, ValueRange args) {
                 Value scaled = arith::MulFOp::create(
                     nb, nl, extend(nb, args[0]),
                     arith::ConstantOp::create(
                         nb, nl, nb.getFloatAttr(accType, scale)));
                 linalg::YieldOp::create(nb, nl, scaled);
               })
        .getResult(0);
  }

  /// An all-parallel generic updating `target` in place from `inputs`; the
  /// body gets the inputs' elements, then the target's.
  Value inPlace(Value target, ArrayRef<Value> inputs,
                ArrayRef<AffineMap> inputMaps, unsigned loops,
                ScalarBuilder body) {
    SmallVector<AffineMap> maps(inputMaps);
    SmallVector<int64_t> all = llvm::to_vector(llvm::seq<int64_t>(0, loops));
    maps.push_back(map(loops, all));
    return linalg::GenericOp::create(
               b, loc, target.getType(), inputs, target, maps,
               parallelIterators(loops),
               [&](OpBuilder &nb, Location nl, ValueRange args) {
                 linalg::YieldOp::create(nb, nl, body(nb, nl, args));
               })
        .getResult(0);
  }

  OpBuilder &b;
  Location loc;
  MLIRContext *ctx;
  Value q, k, v, mask;
  double scale;
  bool causal, zeroMaskedRows;
  Type element, accType;
  int64_t rank, sq, sk, headDim, valueDim;
  SmallVector<int64_t> batch, maskDims;
  /// Symbolic dims: the batch extents, Sq and Sk as values, and the rows of
  /// the query block being emitted when it is a padded one.
  bool runTime = false;
  SmallVector<OpFoldResult> batchSizes;
  Value sqValue, skValue, queryRows;
};

struct AttentionLowering : OpConversionPattern<AttentionOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(AttentionOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto resultType = op.getType();
    if (resultType.hasStaticShape() && resultType.getNumElements() == 0) {
      rewriter.replaceOp(op, createEmptyTensor(rewriter, op.getLoc(),
                                               resultType.getShape(),
                                               resultType.getElementType()));
      return success();
    }
    if (op.getKey().getType().getShape().end()[-2] == 0)
      return rewriter.notifyMatchFailure(op, "attention over zero keys");
    // kiln-lower-to-linalg's target lists linalg/tensor/arith/math as legal
    // but not scf, and the conversion driver rejects a pattern whose new ops
    // it cannot legalize. The loops are built with a plain builder, outside
    // the driver's bookkeeping; only the replacement goes through the
    // rewriter. Nothing here needs legalizing and the pattern cannot fail
    // after this point, so no rollback can be needed.
    OpBuilder builder(op);
    FlashAttentionEmitter emitter(builder, op.getLoc(), op, adaptor.getQuery(),
                                  adaptor.getKey(), adaptor.getValue(),
                                  adaptor.getMask());
    rewriter.replaceOp(op, emitter.emit());
    return success();
  }
};

} // namespace

void mlir::kiln::populateKilnAttentionToLinalgPatterns(
    RewritePatternSet &patterns, TypeConverter &typeConverter) {
  // kiln-lower-to-linalg does not declare scf as a dependent dialect; load it
  // here, where patterns are built before the conversion runs.
  patterns.getContext()->getOrLoadDialect<scf::SCFDialect>();
  patterns.add<AttentionLowering>(typeConverter, patterns.getContext());
}
