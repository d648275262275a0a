//===- Attention.cpp - kiln.attention -> FlashAttention-2 loops on tensors
//-===//
//
// softmax(q k^T * scale + mask) v without the [Sq, Sk] score matrix: for each
// batch index and each block of Bq query rows, walk the keys in blocks of Bk
// keeping, per row, the running max m, the running sum l of exp(s - m) and
// an unnormalized output acc; each block rescales l and acc by
// exp(m_old - m_new). One division by l at the end (FlashAttention-2).
//
// Only [Bq, Bk] score tiles and [Bq, Dv] accumulators exist, so memory is
// linear in the sequence length. Causal attention stops the key loop at the
// diagonal block. Block sizes are static; a sequence that is not a multiple
// of the block gets one peeled tail block of static size, so every linalg op
// has static shapes for the CPU backend.
//
// Every loop-carried tensor is updated in destination-passing style (the
// iter_arg is the `outs` of the op that updates it), so one-shot
// bufferization keeps m, l and acc in place. The batch indices (batch x
// heads) are one scf.forall: the runtime's thread pool runs them in
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
        scale(op.getScale().convertToDouble()), causal(op.getCausal()) {
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
    int64_t batches = 1;
    for (int64_t d : batch)
      batches = ShapedType::isDynamic(d) ? 2 : batches * d;
    if (batches == 1) {
      SmallVector<Value> index(batch.size(), this->index(0));
      outIndex = index;
      return queryBlocks(out, index);
    }
    return batchLoop(out);
  }

private:
  Value index(int64_t i) { return arith::ConstantIndexOp::create(b, loc, i); }
  /// Batch indices of the result tile being written (zeros: the result
  /// is the iteration's own slice).
  SmallVector<Value> outIndex;
  TypedAttr floatAttr(double x) { return b.getFloatAttr(accType, x); }
  Value floatConst(double x) {
    return arith::ConstantOp::create(b, loc, floatAttr(x));
  }
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

  /// One scf.forall over every batch index (the runtime's thread pool runs
  /// the (batch, head) pairs in parallel); each iteration computes its
  /// [Sq, Dv] slice of the result and inserts it in parallel.
  Value batchLoop(Value out) {
    SmallVector<OpFoldResult> bounds(batchSizes);
    auto loop =
        scf::ForallOp::create(b, loc, bounds, ValueRange{out}, std::nullopt);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    SmallVector<Value> batchIndex(loop.getInductionVars());
    // The iteration's slice of the result, rank kept (unit batch dims).
    SmallVector<OpFoldResult> offsets(batchIndex.begin(), batchIndex.end());
    offsets.append({b.getIndexAttr(0), b.getIndexAttr(0)});
    SmallVector<OpFoldResult> sizes(batch.size(), b.getIndexAttr(1));
    sizes.append({ShapedType::isDynamic(sq) ? OpFoldResult(sqValue)
                                            : OpFoldResult(b.getIndexAttr(sq)),
                  b.getIndexAttr(valueDim)});
    SmallVector<OpFoldResult> strides(rank, b.getIndexAttr(1));
    SmallVector<int64_t> sliceShape(batch.size(), 1);
    sliceShape.append({sq, valueDim});
    Value shared = loop.getRegionOutArgs()[0];
    Value slice = tensor::ExtractSliceOp::create(
        b, loc, RankedTensorType::get(sliceShape, element), shared, offsets,
        sizes, strides);
    outIndex.assign(batch.size(), index(0));
    Value result = queryBlocks(slice, batchIndex);
    b.setInsertionPointToEnd(loop.getTerminator().getBody());
    tensor::ParallelInsertSliceOp::create(b, loc, result, shared, offsets,
                                          sizes, strides);
    return loop.getResult(0);
  }

  Value queryBlocks(Value out, ArrayRef<Value> batchIndex) {
    if (runTime)
      return queryBlocksRunTime(out, batchIndex);
    int64_t bq = std::min(kQueryBlock, sq);
    int64_t full = bq ? sq / bq : 0, tail = bq ? sq % bq : 0;
    if (full > 1) {
      auto loop = scf::ForOp::create(b, loc, index(0), index(full * bq),
                                     index(bq), ValueRange{out});
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      Value next = queryBlock(loop.getRegionIterArgs()[0], batchIndex,
                              loop.getInductionVar(), bq);
      scf::YieldOp::create(b, loc, next);
      out = loop.getResult(0);
    } else if (full == 1) {
      out = queryBlock(out, batchIndex, index(0), bq);
    }
    if (tail)
      out = queryBlock(out, batchIndex, index(full * bq), tail);
    return out;
  }

  /// Run-time Sq: full blocks of kQueryBlock rows in a loop, then the rest
  /// as one block zero-padded to kQueryBlock rows (its extra rows are
  /// computed and dropped).
  Value queryBlocksRunTime(Value out, ArrayRef<Value> batchIndex) {
    int64_t bq = kQueryBlock;
    Value full = arith::MulIOp::create(
        b, loc, arith::DivUIOp::create(b, loc, sqValue, index(bq)), index(bq));
    auto loop =
        scf::ForOp::create(b, loc, index(0), full, index(bq), ValueRange{out});
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      Value next = queryBlock(loop.getRegionIterArgs()[0], batchIndex,
                              loop.getInductionVar(), bq);
      scf::YieldOp::create(b, loc, next);
    }
    out = loop.getResult(0);
    Value rest = arith::SubIOp::create(b, loc, sqValue, full);
    Value any = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, rest,
                                      index(0));
    auto ifOp = scf::IfOp::create(
        b, loc, any,
        [&](OpBuilder &nb, Location) {
          OpBuilder::InsertionGuard guard(b);
          b.restoreInsertionPoint(nb.saveInsertionPoint());
          Value next = queryBlock(out, batchIndex, full, bq, rest);
          scf::YieldOp::create(b, loc, next);
        },
        [&](OpBuilder &nb, Location) { scf::YieldOp::create(nb, loc, out); });
    return ifOp.getResult(0);
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

  /// Attention for rows [row0, row0 + bq), written into `out`; with
  /// `validRows`, only that many rows exist (the tile is padded).
  Value queryBlock(Value out, ArrayRef<Value> batchIndex, Value row0,
                   int64_t bq, Value validRows = {}) {
    Value qTile = validRows
                      ? paddedTile(q, batchIndex, row0, validRows, bq, headDim)
                      : tile(q, batchIndex, row0, bq, headDim);
    queryRows = validRows;
    RowState state{
        createFilledTensor(b, loc, {bq},
                           floatAttr(-std::numeric_limits<double>::infinity())),
        createFilledTensor(b, loc, {bq}, floatAttr(0.0)),
        createFilledTensor(b, loc, {bq, valueDim}, floatAttr(0.0))};
    state = keyBlocks(qTile, batchIndex, row0, bq, state);

    // out[rows] = acc / l, in the result's element type.
    Value outTile = validRows
                        ? Value(tensor::EmptyOp::create(
                              b, loc, ArrayRef<int64_t>{bq, valueDim}, element))
                        : tile(out, outIndex, row0, bq, valueDim);
    auto normalize = linalg::GenericOp::create(
        b, loc, outTile.getType(), ValueRange{state.acc, state.sum}, outTile,
        ArrayRef<AffineMap>{map(2, {0, 1}), map(2, {0}), map(2, {0, 1})},
        parallelIterators(2), [&](OpBuilder &nb, Location nl, ValueRange args) {
          Value o = arith::DivFOp::create(nb, nl, args[0], args[1]);
          if (o.getType() != element)
            o = arith::TruncFOp::create(nb, nl, element, o);
          linalg::YieldOp::create(nb, nl, o);
        });
    SmallVector<OpFoldResult> offsets(outIndex.begin(), outIndex.end());
    offsets.append({row0, b.getIndexAttr(0)});
    SmallVector<OpFoldResult> sizes(outIndex.size(), b.getIndexAttr(1));
    sizes.append(
        {validRows ? OpFoldResult(validRows) : OpFoldResult(b.getIndexAttr(bq)),
         b.getIndexAttr(valueDim)});
    SmallVector<OpFoldResult> strides(rank, b.getIndexAttr(1));
    Value result = normalize.getResult(0);
    if (validRows) // the rows that exist
      result = tensor::ExtractSliceOp::create(
          b, loc, result,
          ArrayRef<OpFoldResult>{b.getIndexAttr(0), b.getIndexAttr(0)},
          ArrayRef<OpFoldResult>{validRows, b.getIndexAttr(valueDim)},
          ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1)});
    return tensor::InsertSliceOp::create(b, loc, result, out, offsets, sizes,
                                         strides);
  }

  /// Run-time Sk: full blocks of kKeyBlock keys in a loop (stopping at the
  /// diagonal when causal), then the rest as one block zero-padded to
  /// kKeyBlock keys whose padding is masked out.
  RowState keyBlocksRunTime(Value qTile, ArrayRef<Value> batchIndex, Value row0,
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
      RowState next =
          keyBlock(qTile, batchIndex, row0, bq, loop.getInductionVar(), bk,
                   {args[0], args[1], args[2]});
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
              keyBlock(qTile, batchIndex, row0, bq, full, bk, state, rest);
          scf::YieldOp::create(b, loc,
                               ValueRange{next.max, next.sum, next.acc});
        },
        [&](OpBuilder &nb, Location) {
          scf::YieldOp::create(nb, loc,
                               ValueRange{state.max, state.sum, state.acc});
        });
    return {ifOp.getResult(0), ifOp.getResult(1), ifOp.getResult(2)};
  }

  RowState keyBlocks(Value qTile, ArrayRef<Value> batchIndex, Value row0,
                     int64_t bq, RowState state) {
    if (runTime)
      return keyBlocksRunTime(qTile, batchIndex, row0, bq, state);
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
      RowState next =
          keyBlock(qTile, batchIndex, row0, bq, loop.getInductionVar(), bk,
                   {args[0], args[1], args[2]});
      scf::YieldOp::create(b, loc, ValueRange{next.max, next.sum, next.acc});
      state = {loop.getResult(0), loop.getResult(1), loop.getResult(2)};
    }
    if (!tail)
      return state;
    Value col0 = index(full * bk);
    if (!causal)
      return keyBlock(qTile, batchIndex, row0, bq, col0, tail, state);
    // The tail block matters only if some row of this block reaches it.
    Value lastRow = arith::AddIOp::create(b, loc, row0, index(bq - 1));
    Value reaches =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, lastRow, col0);
    auto ifOp = scf::IfOp::create(
        b, loc, reaches,
        [&](OpBuilder &nb, Location) {
          OpBuilder::InsertionGuard guard(b);
          b.restoreInsertionPoint(nb.saveInsertionPoint());
          RowState next =
              keyBlock(qTile, batchIndex, row0, bq, col0, tail, state);
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

  /// One step of the recurrence over keys [col0, col0 + bk).
  RowState keyBlock(Value qTile, ArrayRef<Value> batchIndex, Value row0,
                    int64_t bq, Value col0, int64_t bk, RowState state,
                    Value validKeys = {}) {
    Value kTile = validKeys
                      ? paddedTile(k, batchIndex, col0, validKeys, bk, headDim)
                      : tile(k, batchIndex, col0, bk, headDim);
    Value vTile = validKeys
                      ? paddedTile(v, batchIndex, col0, validKeys, bk, valueDim)
                      : tile(v, batchIndex, col0, bk, valueDim);
    auto red = IteratorType::reduction, par = IteratorType::parallel;

    // s = q_tile k_tile^T over (i, j, c), k_tile transposed to [c, j] first
    // so that every operand is read along j or not at all: the backend then
    // puts j innermost (kiln-interchange-contractions) and the loop
    // vectorizes over keys instead of reducing a dot product per score.
    auto kType = cast<RankedTensorType>(kTile.getType());
    Value kT = tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{headDim, bk},
                                       kType.getElementType());
    kT = linalg::TransposeOp::create(b, loc, kTile, kT, ArrayRef<int64_t>{1, 0})
             .getResult()[0];
    Value scores = createFilledTensor(b, loc, {bq, bk}, floatAttr(0.0));
    scores =
        linalg::GenericOp::create(
            b, loc, scores.getType(), ValueRange{qTile, kT}, scores,
            ArrayRef<AffineMap>{map(3, {0, 2}), map(3, {2, 1}), map(3, {0, 1})},
            ArrayRef<IteratorType>{par, par, red},
            [&](OpBuilder &nb, Location nl, ValueRange args) {
              Value prod = arith::MulFOp::create(nb, nl, extend(nb, args[0]),
                                                 extend(nb, args[1]));
              linalg::YieldOp::create(
                  nb, nl, Value(arith::AddFOp::create(nb, nl, args[2], prod)));
            })
            .getResult(0);

    // s = s * scale + mask, -inf above the diagonal when causal.
    SmallVector<Value> maskInputs;
    SmallVector<AffineMap> maskMaps;
    if (mask) {
      SmallVector<int64_t> dims;
      maskInputs.push_back(
          maskTile(batchIndex, row0, bq, col0, bk, dims, validKeys));
      maskMaps.push_back(map(2, dims));
    }
    maskMaps.push_back(map(2, {0, 1}));
    scores = linalg::GenericOp::create(
                 b, loc, scores.getType(), maskInputs, scores, maskMaps,
                 parallelIterators(2),
                 [&](OpBuilder &nb, Location nl, ValueRange args) {
                   Value s = arith::MulFOp::create(
                       nb, nl, args.back(),
                       arith::ConstantOp::create(
                           nb, nl, nb.getFloatAttr(accType, scale)));
                   if (mask)
                     s = arith::AddFOp::create(nb, nl, s, extend(nb, args[0]));
                   Value negInf = arith::ConstantOp::create(
                       nb, nl,
                       nb.getFloatAttr(
                           accType, -std::numeric_limits<double>::infinity()));
                   if (causal) {
                     Value row = arith::AddIOp::create(
                         nb, nl, row0, linalg::IndexOp::create(nb, nl, 0));
                     Value col = arith::AddIOp::create(
                         nb, nl, col0, linalg::IndexOp::create(nb, nl, 1));
                     Value future = arith::CmpIOp::create(
                         nb, nl, arith::CmpIPredicate::ugt, col, row);
                     s = arith::SelectOp::create(nb, nl, future, negInf, s);
                   }
                   if (validKeys) { // padding keys of the last block
                     Value padding = arith::CmpIOp::create(
                         nb, nl, arith::CmpIPredicate::uge,
                         linalg::IndexOp::create(nb, nl, 1), validKeys);
                     s = arith::SelectOp::create(nb, nl, padding, negInf, s);
                   }
                   linalg::YieldOp::create(nb, nl, s);
                 })
                 .getResult(0);

    // Block row max, then alpha = exp(m_old - m_new) and m = m_new.
    Value blockMax = createFilledTensor(
        b, loc, {bq}, floatAttr(-std::numeric_limits<double>::infinity()));
    blockMax = createReductionGeneric(
        b, loc, {{scores, map(2, {0, 1})}}, blockMax, {1},
        [&](OpBuilder &nb, Location nl, ValueRange args) {
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

    // p = exp(s - m_new), in the score tile.
    Value probs = inPlace(scores, {newMax}, {map(2, {0})}, 2,
                          [&](OpBuilder &nb, Location nl, ValueRange args) {
                            Value diff = arith::SubFOp::create(
                                nb, nl, args[1], finiteMax(nb, args[0]));
                            return math::ExpOp::create(nb, nl, diff);
                          });

    // l = l * alpha + rowsum(p).
    Value sum =
        inPlace(state.sum, {alpha}, {map(1, {0})}, 1,
                [&](OpBuilder &nb, Location nl, ValueRange args) {
                  return arith::MulFOp::create(nb, nl, args[1], args[0]);
                });
    sum = createReductionGeneric(
        b, loc, {{probs, map(2, {0, 1})}}, sum, {1},
        [&](OpBuilder &nb, Location nl, ValueRange args) {
          return arith::AddFOp::create(nb, nl, args[1], args[0]);
        });

    // acc = acc * alpha + p v_tile over (i, c, j).
    Value acc =
        inPlace(state.acc, {alpha}, {map(2, {0})}, 2,
                [&](OpBuilder &nb, Location nl, ValueRange args) {
                  return arith::MulFOp::create(nb, nl, args[1], args[0]);
                });
    acc =
        linalg::GenericOp::create(
            b, loc, acc.getType(), ValueRange{probs, vTile}, acc,
            ArrayRef<AffineMap>{map(3, {0, 2}), map(3, {2, 1}), map(3, {0, 1})},
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
  bool causal;
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
