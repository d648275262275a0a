//===- AttentionMma.cpp - kiln.attention on NVIDIA tensor cores -----------===//
//
// The flash-attention kernel for NVIDIA GPUs (sm_80 and up) with f16 or
// bf16 operands (the model's own, or f32 ones at --gpu-precision=bf16 or
// fp16): the FlashAttention-2 schedule with both products on mma.sync
// m16n8k16 (f32 accumulation):
//
//   grid (ceil(Sq/rows), batch), 4 warps; past 64 rows a warp owns two
//   m16 tiles (32 rows; 128 per block) for heads up to 64, else 8 warps of
//   one. Lane (g = lane / 4, t = lane % 4) holds rows g and g + 8 of each
//   of its warp's m16 tiles; Q's A fragments stay in registers for the
//   whole kernel. q, k and v are read, and the result written, through
//   the transposes around the op (AttentionLayouts). K and V go through two
//   shared-memory stages of 64 keys (32 for heads over 64), both
//   [key][column] with rows padded by 8 elements (16 bytes: the 8 rows an
//   ldmatrix phase reads fall in different banks), zeros past the last key
//   and the head size. The block copies them by cp.async, 16 bytes at a
//   time (element by element where a row is not whole 16-byte chunks or
//   the buffer is not 16-byte aligned; f32 K and V come rounded to the
//   operand type by a cast of their own, AttentionKernels' roundKeysAhead);
//   the next stage's copy is issued before the current one's products, so
//   it flies while the tensor cores work, with one barrier per stage. Each
//   warp then takes the whole stage at once:
//
//   - S (16 rows x the stage's keys per m16 tile) = Q·Kᵀ: one n8 tile of
//     d/16 mma per 8 keys, their K fragments by one ldmatrix.x4 per 16
//     keys and 16 dims, shared by the warp's m16 tiles; the lane holds
//     S[g][2t, 2t+1] and S[g + 8][2t, 2t+1] of each tile. Scores are kept
//     times log2(e) (one exp2 per probability); the key and causal checks
//     run only on stages that may hold a masked key.
//   - Online softmax per row: a row's max is a max of the lane's scores
//     and two xor shuffles (lanes 1 and 2 apart: the 4 lanes of group g);
//     the running sum stays per lane, added across the group at the end.
//   - O (16 rows x dv) += P·V: two S tiles' accumulators, rounded to the
//     operand type, are exactly the A fragment of one m16n8k16 (rows g,
//     g + 8; keys 2t, 2t+1 and 2t+8, 2t+9), so P never leaves registers;
//     V's B fragments by one transposing ldmatrix.x4 per 16 keys and 16
//     columns.
//
// Causal blocks stop at their last row; the additive mask is read per
// score; a row with every key masked gives NaN as the unfused softmax
// does, or 0 with zero_masked_rows.
//
//===----------------------------------------------------------------------===//
#include "backends/gpu/AttentionKernels.h"
#include "backends/gpu/ContractionKernels.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <limits>

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::gpu_kernels;

namespace {
constexpr int64_t kWarpRows = 16; // query rows per warp
constexpr int64_t kPad = 8;       // row padding of the stages (elements)
constexpr int64_t kChunk = 8;     // 16-bit elements per 16-byte copy
constexpr double kLog2E = 1.4426950408889634;

class MmaFlashWriter : IndexMath {
public:
  MmaFlashWriter(OpBuilder &b, AttentionOp op, MmaOperand operand,
                 const AttentionLayouts &layouts)
      : IndexMath{b, op.getLoc()}, op(op), operand(operand), shape(op),
        layouts(layouts) {}
  Value write();

private:
  /// K or V on its way to shared memory: the [batch..., sk, width] source
  /// in the operand type (read through `gather`), the [2][keys][padded +
  /// kPad] stages and, at run time, whether its rows are whole 16-byte
  /// chunks (else element copies).
  struct KeyOperand {
    Value source, shared;
    int64_t width, padded;
    Value aligned;
    Value base;
    SmallVector<Value> strides;
    ArrayRef<int64_t> gather;
  };
  KeyOperand keyOperand(Value source, Value shared, int64_t width,
                        int64_t padded, ArrayRef<int64_t> gather);
  /// The chunks this thread copies of a stage: (key, column) in the stage.
  SmallVector<std::pair<Value, Value>> chunksOf(const KeyOperand &o);
  /// The stage of keys from key0 into stage `at` by cp.async (committed
  /// as a group by the caller).
  void issue(const KeyOperand &o, Value key0, Value at);
  /// The 8 source elements of chunk (key, col) read one by one.
  SmallVector<Value> gather(const KeyOperand &o, Value key, Value col,
                            Value keyOk);

  Type elementType() {
    return operand == MmaOperand::F16 ? Type(b.getF16Type())
                                      : Type(b.getBF16Type());
  }
  Value f32(double value) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(value));
  }
  Value narrow(Value value) {
    return arith::TruncFOp::create(b, loc, elementType(), value);
  }
  /// Two f32 values as one operand register.
  Value registerOf(Value lo, Value hi) {
    Value pair = vector::FromElementsOp::create(
        b, loc, VectorType::get({2}, elementType()),
        ValueRange{narrow(lo), narrow(hi)});
    return mmaRegister(b, loc, operand, pair);
  }
  Value lessEqual(Value x, Value y) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule, x, y);
  }
  /// The max or sum of a row over the 4 lanes of a group.
  Value acrossGroup(Value value, bool max) {
    for (int64_t offset : {1, 2}) {
      Value other = shuffleXor(b, loc, value, offset, 32);
      value = max ? arith::MaximumFOp::create(b, loc, value, other).getResult()
                  : arith::AddFOp::create(b, loc, value, other).getResult();
    }
    return value;
  }
  AttentionOp op;
  MmaOperand operand;
  AttentionShape shape;
  const AttentionLayouts &layouts;
  Value tid, keyEnd;
  SmallVector<Value> batch;
  int64_t threads = 0, stageKeys = 0;
};

MmaFlashWriter::KeyOperand
MmaFlashWriter::keyOperand(Value source, Value shared, int64_t width,
                           int64_t padded, ArrayRef<int64_t> gather) {
  KeyOperand o{source, shared, width, padded, Value(), Value(), {}, gather};
  auto type = cast<MemRefType>(source.getType());
  auto [strides, offset] = type.getStridesAndOffset();
  // Run-time strides and offset (symbolic dims) from the buffer.
  auto metadata = memref::ExtractStridedMetadataOp::create(b, loc, source);
  for (auto [d, stride] : llvm::enumerate(strides))
    o.strides.push_back(ShapedType::isDynamic(stride) ? metadata.getStrides()[d]
                                                      : index(b, loc, stride));
  o.base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, source);
  auto isZero = [&](Value v) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, v,
                                 index(b, loc, 0));
  };
  // Chunks need rows of whole chunks (a static fact: the buffer is
  // contiguous), no offset and a 16-byte aligned start (run-time facts
  // where they are not static ones).
  if (width % kChunk == 0 && (offset == 0 || ShapedType::isDynamic(offset))) {
    o.aligned = isZero(rem(o.base, 16));
    if (ShapedType::isDynamic(offset))
      o.aligned = both(o.aligned, isZero(metadata.getOffset()));
  } else {
    o.aligned = arith::ConstantOp::create(b, loc, b.getBoolAttr(false));
  }
  return o;
}

SmallVector<std::pair<Value, Value>>
MmaFlashWriter::chunksOf(const KeyOperand &o) {
  int64_t perKey = o.padded / kChunk, chunks = stageKeys * perKey;
  SmallVector<std::pair<Value, Value>> places;
  for (int64_t e = 0; e < chunks; e += threads) {
    Value chunk = add(tid, e);
    places.push_back({div(chunk, perKey), mul(rem(chunk, perKey), kChunk)});
  }
  return places;
}

SmallVector<Value> MmaFlashWriter::gather(const KeyOperand &o, Value key,
                                          Value col, Value keyOk) {
  Type source = cast<MemRefType>(o.source.getType()).getElementType();
  Value zero = arith::ConstantOp::create(b, loc, b.getFloatAttr(source, 0.0));
  SmallVector<Value> values;
  for (int64_t i = 0; i < kChunk; ++i) {
    Value c = add(col, i);
    Value ok = both(keyOk, lessThan(b, loc, c, index(b, loc, o.width)));
    values.push_back(guardedLoad(
        b, loc, o.source, gatheredIndices(o.gather, batch, key, c), ok, zero));
  }
  return values;
}

void MmaFlashWriter::issue(const KeyOperand &o, Value key0, Value at) {
  int64_t chunks = stageKeys * (o.padded / kChunk);
  int64_t bytes = elementType().getIntOrFloatBitWidth() / 8;
  for (auto [e, place] : llvm::enumerate(chunksOf(o))) {
    auto [j, col] = place;
    // The last round of a stage whose chunks do not divide evenly among
    // the threads: only the threads with a chunk left.
    std::optional<OpBuilder::InsertionGuard> partial;
    if (int64_t(e + 1) * threads > chunks) {
      partial.emplace(b);
      auto someLeft = scf::IfOp::create(
          b, loc,
          lessThan(b, loc, add(tid, e * threads), index(b, loc, chunks)),
          /*withElseRegion=*/false);
      b.setInsertionPointToStart(&someLeft.getThenRegion().front());
    }
    Value key = add(key0, j);
    Value keyOk = lessThan(b, loc, key, keyEnd);
    auto choice = scf::IfOp::create(b, loc, o.aligned, /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&choice.getThenRegion().front());
    // Past the last key or the width: zero-filled.
    Value ok = both(keyOk, lessThan(b, loc, col, index(b, loc, o.width)));
    copyChunkAsync(b, loc, o.base, index(b, loc, 0), o.strides,
                   gatheredIndices(o.gather, batch, key, col), bytes, ok,
                   sharedPointer(b, loc, o.shared, ValueRange{at, j, col}));
    b.setInsertionPointToStart(&choice.getElseRegion().front());
    Value chunk = vector::FromElementsOp::create(
        b, loc, VectorType::get({kChunk}, elementType()),
        gather(o, key, col, keyOk));
    vector::StoreOp::create(b, loc, chunk, o.shared, ValueRange{at, j, col},
                            /*nontemporal=*/false, llvm::Align(16));
  }
}

Value MmaFlashWriter::write() {
  int64_t sq = shape.sq, d = shape.d, dv = shape.dv;
  // A run-time sequence is taken as long (past 64 rows).
  bool manyRows = ShapedType::isDynamic(sq) || sq > 64;
  int64_t dPad = llvm::alignTo(d, 16), dvPad = llvm::alignTo(dv, 16);
  AttentionBuffers buffers(b, loc, op, shape, layouts);
  Value q = buffers.q, k = buffers.k, v = buffers.v, mask = buffers.mask,
        out = buffers.out;

  // Heads up to 64 past 64 rows: 4 warps of two m16 tiles (32 rows), each
  // K and V fragment read from shared memory serving both; else one m16
  // tile per warp, 8 warps past 64 rows.
  const int64_t mTiles = std::max(dPad, dvPad) <= 64 && manyRows ? 2 : 1;
  int64_t warps = manyRows && mTiles == 1 ? 8 : 4;
  int64_t warpRows = kWarpRows * mTiles, rowsPerBlock = warps * warpRows;
  threads = 32 * warps;
  // Two stages of K and V within 48 KiB of static shared memory.
  stageKeys = std::max(dPad, dvPad) > 64 ? 32 : 64;
  Type element = elementType();
  gpu::LaunchOp launch =
      createLaunch(b, loc,
                   {arith::CeilDivUIOp::create(b, loc, shape.sqValue,
                                               index(b, loc, rowsPerBlock)),
                    shape.batchTotalValue},
                   {threads},
                   {workgroupMemRef({2, stageKeys, dPad + kPad}, element),
                    workgroupMemRef({2, stageKeys, dvPad + kPad}, element)});
  Value sharedK = launch.getWorkgroupAttributions()[0];
  Value sharedV = launch.getWorkgroupAttributions()[1];
  tid = launch.getThreadIds().x;
  Value warp = div(tid, 32), lane = rem(tid, 32);
  Value group = div(lane, 4), thread = rem(lane, 4);
  Value row0 = mul(launch.getBlockIds().x, rowsPerBlock);
  Value warpRow0 = add(row0, mul(warp, warpRows));
  batch = shape.batchValues.empty()
              ? SmallVector<Value>()
              : delinearize(b, loc, launch.getBlockIds().y,
                            ValueRange(shape.batchValues));
  Value zero = f32(0.0), negInf = f32(-std::numeric_limits<double>::infinity());
  // ldmatrix.x4: lane l gives row l % 8 of matrix l / 8. K's [key][d]
  // stage: matrices keys +0/+0/+8/+8, dims +0/+8/+0/+8 (two n8 tiles' B
  // fragments); V's [key][dv] stage, transposed: keys +0/+8/+0/+8,
  // columns +0/+0/+8/+8 (two 8-column tiles' B fragments).
  Value quad = div(lane, 8), eighth = rem(lane, 8);
  Value ldKeyK = add(eighth, mul(div(quad, 2), 8));
  Value ldColK = mul(rem(quad, 2), 8);
  Value ldKeyV = add(eighth, mul(rem(quad, 2), 8));
  Value ldColV = mul(div(quad, 2), 8);
  Value rows = shape.sqValue, dBound = index(b, loc, d);
  // The lane's rows: g and g + 8 of each m16 tile.
  SmallVector<Value> rowLo, rowHi, okLo, okHi;
  for (int64_t m = 0; m < mTiles; ++m) {
    rowLo.push_back(add(add(warpRow0, 16 * m), group));
    rowHi.push_back(add(rowLo.back(), 8));
    okLo.push_back(lessThan(b, loc, rowLo.back(), rows));
    okHi.push_back(lessThan(b, loc, rowHi.back(), rows));
  }

  // Q's A fragments, d/16 per m16 tile: rows g and g + 8, dims 2t, 2t+1
  // and 2t+8, 2t+9 of each 16.
  auto loadQ = [&](Value row, Value rowOk, int64_t dim) {
    Value column = add(mul(thread, 2), dim);
    Value ok = both(rowOk, lessThan(b, loc, column, dBound));
    Value lo = guardedLoadF32(
        b, loc, q, gatheredIndices(layouts.gathers[0], batch, row, column), ok);
    Value next = add(column, 1);
    ok = both(rowOk, lessThan(b, loc, next, dBound));
    Value hi = guardedLoadF32(
        b, loc, q, gatheredIndices(layouts.gathers[0], batch, row, next), ok);
    return registerOf(lo, hi);
  };
  SmallVector<SmallVector<SmallVector<Value>>> qFragments(mTiles);
  for (int64_t m = 0; m < mTiles; ++m)
    for (int64_t s = 0; s < dPad / 16; ++s)
      qFragments[m].push_back({loadQ(rowLo[m], okLo[m], 16 * s),
                               loadQ(rowHi[m], okHi[m], 16 * s),
                               loadQ(rowLo[m], okLo[m], 16 * s + 8),
                               loadQ(rowHi[m], okHi[m], 16 * s + 8)});

  // Causal: keys past the block's last row are masked for every row.
  keyEnd = shape.skValue;
  if (op.getCausal())
    keyEnd = arith::MinUIOp::create(b, loc, keyEnd, add(row0, rowsPerBlock));

  assert(getElementTypeOrSelf(k.getType()) == element &&
         getElementTypeOrSelf(v.getType()) == element &&
         "K and V come in the operand type (roundKeysAhead)");
  KeyOperand keys = keyOperand(k, sharedK, d, dPad, layouts.gathers[1]);
  KeyOperand values = keyOperand(v, sharedV, dv, dvPad, layouts.gathers[2]);
  // The stage of keys from key0 on its way into stage `at`, as one group.
  auto issueBoth = [&](Value key0, Value at) {
    issue(keys, key0, at);
    issue(values, key0, at);
    NVVM::CpAsyncCommitGroupOp::create(b, loc);
  };
  Value first = index(b, loc, 0);
  issueBoth(first, first);

  int64_t tiles = dvPad / 8, keyTiles = stageKeys / 8;
  // Per m16 tile: m and the lane's part of l for rows g and g + 8, then
  // O's accumulators (tile n: rows g, g + 8 at columns 8n + 2t, 8n + 2t +
  // 1).
  const int64_t perTile = 4 + tiles * 4;
  SmallVector<Value> state;
  for (int64_t m = 0; m < mTiles; ++m) {
    state.append({negInf, zero, negInf, zero});
    state.append(tiles * 4, zero);
  }
  auto loop = scf::ForOp::create(b, loc, first, keyEnd,
                                 index(b, loc, stageKeys), state);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value key0 = loop.getInductionVar();
    ValueRange carried = loop.getRegionIterArgs();
    Value current = rem(div(key0, stageKeys), 2);
    Value other = arith::SubIOp::create(b, loc, index(b, loc, 1), current);
    Value nextKey0 = add(key0, stageKeys);
    // After the barrier this stage is in shared memory and every warp is
    // done with the other one: the next stage goes there.
    NVVM::CpAsyncWaitGroupOp::create(b, loc, 0);
    gpu::BarrierOp::create(b, loc);
    {
      // (Not past the last stage: its copies would only write zeros.)
      auto more = scf::IfOp::create(b, loc, lessThan(b, loc, nextKey0, keyEnd),
                                    /*withElseRegion=*/false);
      OpBuilder::InsertionGuard next(b);
      b.setInsertionPointToStart(&more.getThenRegion().front());
      issueBoth(nextKey0, other);
    }

    // S = Q·Kᵀ in n8 tiles; score e of tile n is row g (e < 2) or g + 8,
    // key key0 + 8n + 2t + e % 2. Scores are kept times log2(e), so that
    // each probability is one exp2. products[m]: m16 tile m's.
    SmallVector<SmallVector<Value>> products(mTiles);
    for (int64_t c = 0; c < keyTiles / 2; ++c) {
      SmallVector<SmallVector<Value>> kFragments;
      for (int64_t s = 0; s < dPad / 16; ++s)
        kFragments.push_back(
            ldMatrixX4(b, loc, operand, sharedK,
                       {current, add(ldKeyK, 16 * c), add(ldColK, 16 * s)},
                       /*transpose=*/false));
      for (int64_t n = 0; n < 2; ++n)
        for (int64_t m = 0; m < mTiles; ++m) {
          SmallVector<Value> acc(4, zero);
          for (int64_t s = 0; s < dPad / 16; ++s)
            acc = mmaSync(b, loc, operand, qFragments[m][s],
                          {kFragments[s][2 * n], kFragments[s][2 * n + 1]}, acc,
                          16);
          llvm::append_range(products[m], acc);
        }
    }
    // A stage whose keys all exist and, causal, none comes after the
    // warp's first row (the usual case) skips the per-score key checks.
    Value inside = lessEqual(add(key0, stageKeys), shape.skValue);
    if (op.getCausal())
      inside = both(inside, lessEqual(add(key0, stageKeys - 1), warpRow0));
    int64_t perM = keyTiles * 4;
    SmallVector<Type> scoreTypes(mTiles * perM, b.getF32Type());
    Value scale = f32(op.getScale().convertToDouble() * kLog2E);
    auto finish = scf::IfOp::create(b, loc, scoreTypes, inside,
                                    /*withElseRegion=*/true);
    for (bool known : {true, false}) {
      OpBuilder::InsertionGuard branch(b);
      b.setInsertionPointToStart(known ? &finish.getThenRegion().front()
                                       : &finish.getElseRegion().front());
      SmallVector<Value> finished;
      for (int64_t m = 0; m < mTiles; ++m)
        for (auto [i, product] : llvm::enumerate(products[m])) {
          int64_t e = i % 4, tile = i / 4;
          bool hi = e >= 2;
          Value key = add(add(key0, mul(thread, 2)), 8 * tile + e % 2);
          Value score = arith::MulFOp::create(b, loc, product, scale);
          finished.push_back(finishScore(
              b, loc, op, shape, score, mask, batch, hi ? rowHi[m] : rowLo[m],
              hi ? okHi[m] : okLo[m], key, kLog2E, known));
        }
      scf::YieldOp::create(b, loc, finished);
    }
    SmallVector<Value> updated;
    // Per m16 tile: the online softmax, then O rescaled.
    SmallVector<SmallVector<Value>> p(mTiles), acc(mTiles);
    for (int64_t m = 0; m < mTiles; ++m) {
      ValueRange scores = finish.getResults().slice(m * perM, perM);
      ValueRange mine = carried.slice(m * perTile, perTile);
      Value maxLo = negInf, maxHi = negInf;
      for (auto [i, score] : llvm::enumerate(scores)) {
        Value &max = i % 4 >= 2 ? maxHi : maxLo;
        max = arith::MaximumFOp::create(b, loc, max, score);
      }
      OnlineMax nextLo = updateRunningMax(
          b, loc, mine[0], acrossGroup(maxLo, /*max=*/true), /*base2=*/true);
      OnlineMax nextHi = updateRunningMax(
          b, loc, mine[2], acrossGroup(maxHi, /*max=*/true), /*base2=*/true);
      Value sumLo = arith::MulFOp::create(b, loc, mine[1], nextLo.correction);
      Value sumHi = arith::MulFOp::create(b, loc, mine[3], nextHi.correction);
      // (l sums the f32 probabilities; P·V uses them rounded to the
      // operand type, as FlashAttention-2 does.)
      for (auto [e, score] : llvm::enumerate(scores)) {
        bool hi = e % 4 >= 2;
        Value prob = math::Exp2Op::create(
            b, loc,
            arith::SubFOp::create(b, loc, score,
                                  hi ? nextHi.subtract : nextLo.subtract));
        Value &sum = hi ? sumHi : sumLo;
        sum = arith::AddFOp::create(b, loc, sum, prob);
        p[m].push_back(prob);
      }
      for (int64_t t = 0; t < tiles; ++t)
        for (int64_t e = 0; e < 4; ++e)
          acc[m].push_back(arith::MulFOp::create(b, loc, mine[4 + t * 4 + e],
                                                 e >= 2 ? nextHi.correction
                                                        : nextLo.correction));
      updated.append({nextLo.max, sumLo, nextHi.max, sumHi});
    }
    // O += P·V per 16 keys: P's A fragment is tile 2c's rows g and g + 8,
    // then tile 2c + 1's; each V fragment serves every m16 tile.
    for (int64_t c = 0; c < keyTiles / 2; ++c) {
      SmallVector<SmallVector<Value>> pFragments;
      for (int64_t m = 0; m < mTiles; ++m) {
        ArrayRef<Value> pc = ArrayRef<Value>(p[m]).slice(8 * c, 8);
        pFragments.push_back(
            {registerOf(pc[0], pc[1]), registerOf(pc[2], pc[3]),
             registerOf(pc[4], pc[5]), registerOf(pc[6], pc[7])});
      }
      for (int64_t t = 0; t < tiles; t += 2) {
        SmallVector<Value> words =
            ldMatrixX4(b, loc, operand, sharedV,
                       {current, add(ldKeyV, 16 * c), add(ldColV, 8 * t)},
                       /*transpose=*/true);
        for (int64_t h = 0; h < 2; ++h)
          for (int64_t m = 0; m < mTiles; ++m) {
            MutableArrayRef<Value> tile =
                MutableArrayRef<Value>(acc[m]).slice((t + h) * 4, 4);
            SmallVector<Value> next =
                mmaSync(b, loc, operand, pFragments[m],
                        {words[2 * h], words[2 * h + 1]}, tile, 16);
            std::copy(next.begin(), next.end(), tile.begin());
          }
      }
    }
    // The loop carries each tile's (m, l) pair then its accumulators.
    SmallVector<Value> yielded;
    for (int64_t m = 0; m < mTiles; ++m) {
      yielded.append(updated.begin() + 4 * m, updated.begin() + 4 * m + 4);
      llvm::append_range(yielded, acc[m]);
    }
    scf::YieldOp::create(b, loc, yielded);
  }
  // No copies in flight past the loop.
  NVVM::CpAsyncWaitGroupOp::create(b, loc, 0);

  // l across the row's four lanes, then one division per output.
  for (int64_t m = 0; m < mTiles; ++m) {
    ValueRange final = loop.getResults().slice(m * perTile, perTile);
    Value sumLo = acrossGroup(final[1], /*max=*/false);
    Value sumHi = acrossGroup(final[3], /*max=*/false);
    for (int64_t t = 0; t < tiles; ++t)
      for (int64_t e = 0; e < 4; ++e) {
        bool hi = e >= 2;
        Value column = add(mul(thread, 2), 8 * t + e % 2);
        Value ok = hi ? okHi[m] : okLo[m];
        if (dv % 16)
          ok = both(ok, lessThan(b, loc, column, index(b, loc, dv)));
        auto store = scf::IfOp::create(b, loc, ok, /*withElseRegion=*/false);
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(&store.getThenRegion().front());
        Value result = normalizedOutput(b, loc, op, final[4 + t * 4 + e],
                                        hi ? sumHi : sumLo);
        if (!shape.element.isF32())
          result = arith::TruncFOp::create(b, loc, shape.element, result);
        memref::StoreOp::create(b, loc, result, out,
                                gatheredIndices(layouts.gathers[3], batch,
                                                hi ? rowHi[m] : rowLo[m],
                                                column));
      }
  }
  b.setInsertionPointAfter(launch);
  return asTensor(b, loc, out);
}
} // namespace

Value gpu_kernels::writeMmaAttention(OpBuilder &b, AttentionOp op,
                                     MmaOperand operand,
                                     const AttentionLayouts &layouts) {
  return MmaFlashWriter(b, op, operand, layouts).write();
}
