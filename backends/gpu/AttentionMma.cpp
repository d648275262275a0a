//===- AttentionMma.cpp - kiln.attention on NVIDIA tensor cores -----------===//
//
// The flash-attention kernel for NVIDIA GPUs (sm_80 and up) with f16 or
// bf16 operands (the model's own, or f32 ones at --gpu-precision=bf16 or
// fp16): the FlashAttention-2 schedule of AttentionKernels.cpp with both
// products on mma.sync m16n8k16 (f32 accumulation):
//
//   grid (ceil(Sq/64), batch), 128 threads = 4 warps; warp w owns the
//   block's query rows 16w..16w+15, and lane (g = lane / 4, t = lane % 4)
//   rows g and g + 8 of them. Q's A fragments stay in registers for the
//   whole kernel. Per step the block stages 32 keys of K ([key][d], pairs
//   along d contiguous) and V transposed ([d][key], pairs along the key
//   contiguous) in shared memory, zeros past the last key and the head
//   size; then each warp walks them 16 keys at a time:
//
//   - S (16 rows x 16 keys) = Q·Kᵀ: two n8 tiles of d/16 mma each, their
//     K fragments by one ldmatrix.x4 per 16 dims; the lane holds
//     S[g][2t, 2t+1] and S[g + 8][2t, 2t+1] of each tile.
//   - Online softmax per row: a row's max is a max of the lane's 4 scores
//     and two xor shuffles (lanes 1 and 2 apart: the 4 lanes of group g);
//     the running sum stays per lane, added across the group at the end.
//   - O (16 rows x dv) += P·V: the two S tiles' accumulators, rounded to
//     the operand type, are exactly the A fragment of one m16n8k16 (rows
//     g, g + 8; keys 2t, 2t+1 and 2t+8, 2t+9), so P never leaves registers;
//     one mma per 8 output columns, V's fragments by one ldmatrix.x4 per
//     16 columns.
//
// Causal blocks stop at their last row; the additive mask is read per
// score; a row with every key masked gives NaN as the unfused softmax
// does, or 0 with zero_masked_rows.
//
//===----------------------------------------------------------------------===//
#include "backends/gpu/AttentionKernels.h"
#include "backends/gpu/ContractionKernels.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <limits>

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::gpu_kernels;

namespace {
constexpr int64_t kRows = 64;     // query rows per block
constexpr int64_t kWarpRows = 16; // query rows per warp
constexpr int64_t kThreads = 128; // 4 warps
constexpr int64_t kStage = 32;    // keys staged per step
constexpr int64_t kStep = 16;     // keys per S tile pair
constexpr int64_t kPad = 8;       // row padding of the stages (elements)

class MmaFlashWriter : IndexMath {
public:
  MmaFlashWriter(OpBuilder &b, AttentionOp op, MmaOperand operand)
      : IndexMath{b, op.getLoc()}, op(op), operand(operand), shape(op) {}
  Value write();

private:
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
  /// Elements (row, col) and (row, col + 1) of a stage as one register.
  Value sharedPair(Value shared, Value row, Value col) {
    Value pair = vector::LoadOp::create(
        b, loc, VectorType::get({2}, elementType()), shared,
        ValueRange{row, col}, /*nontemporal=*/false, llvm::Align(4));
    return mmaRegister(b, loc, operand, pair);
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
  Value tid;
};

Value MmaFlashWriter::write() {
  int64_t sq = shape.sq, sk = shape.sk, d = shape.d, dv = shape.dv;
  int64_t dPad = llvm::alignTo(d, 16), dvPad = llvm::alignTo(dv, 8);
  AttentionBuffers buffers(b, loc, op, shape);
  Value q = buffers.q, k = buffers.k, v = buffers.v, mask = buffers.mask,
        out = buffers.out;

  // Rows padded by 8 elements: the fragment reads of a warp (row g, word
  // t) fall in different banks.
  Type element = elementType();
  gpu::LaunchOp launch =
      createLaunch(b, loc,
                   {index(b, loc, llvm::divideCeil(sq, kRows)),
                    index(b, loc, shape.batchTotal)},
                   {kThreads},
                   {workgroupMemRef({kStage, dPad + kPad}, element),
                    workgroupMemRef({dvPad, kStage + kPad}, element)});
  Value sharedK = launch.getWorkgroupAttributions()[0];
  Value sharedVt = launch.getWorkgroupAttributions()[1];
  tid = launch.getThreadIds().x;
  Value warp = div(tid, 32), lane = rem(tid, 32);
  Value group = div(lane, 4), thread = rem(lane, 4);
  Value row0 = mul(launch.getBlockIds().x, kRows);
  Value rowLo = add(add(row0, mul(warp, kWarpRows)), group);
  Value rowHi = add(rowLo, 8);
  SmallVector<Value> batch =
      shape.batchSizes.empty()
          ? SmallVector<Value>()
          : delinearize(b, loc, launch.getBlockIds().y, shape.batchSizes);
  Value zero = f32(0.0), negInf = f32(-std::numeric_limits<double>::infinity());
  // ldmatrix.x4 of an [n][k] stage: lane l gives row l % 8 (+8 for the
  // second n8 tile, l >= 16) at k +8 for odd matrices.
  Value quad = div(lane, 8);
  Value ldRow = add(rem(lane, 8), mul(div(quad, 2), 8));
  Value ldCol = mul(rem(quad, 2), 8);
  Value rows = index(b, loc, sq), dBound = index(b, loc, d);
  Value okLo = lessThan(b, loc, rowLo, rows);
  Value okHi = lessThan(b, loc, rowHi, rows);

  // Q's A fragments, d/16 of them: rows g and g + 8, dims 2t, 2t+1 and
  // 2t+8, 2t+9 of each 16.
  auto loadQ = [&](Value row, Value rowOk, int64_t dim) {
    Value column = add(mul(thread, 2), dim);
    Value ok = both(rowOk, lessThan(b, loc, column, dBound));
    Value lo = guardedLoadF32(b, loc, q, withIndices(batch, row, column), ok);
    Value next = add(column, 1);
    ok = both(rowOk, lessThan(b, loc, next, dBound));
    Value hi = guardedLoadF32(b, loc, q, withIndices(batch, row, next), ok);
    return registerOf(lo, hi);
  };
  SmallVector<SmallVector<Value>> qFragments;
  for (int64_t s = 0; s < dPad / 16; ++s)
    qFragments.push_back(
        {loadQ(rowLo, okLo, 16 * s), loadQ(rowHi, okHi, 16 * s),
         loadQ(rowLo, okLo, 16 * s + 8), loadQ(rowHi, okHi, 16 * s + 8)});

  // Causal: keys past the block's last row are masked for every row.
  Value skBound = index(b, loc, sk);
  Value keyEnd = skBound;
  if (op.getCausal())
    keyEnd = arith::MinUIOp::create(b, loc, skBound, add(row0, kRows));

  int64_t tiles = dvPad / 8;
  // m and the lane's part of l for rows g and g + 8, then O's accumulators
  // (tile n: rows g, g + 8 at columns 8n + 2t, 8n + 2t + 1).
  SmallVector<Value> state = {negInf, zero, negInf, zero};
  state.append(tiles * 4, zero);
  auto fillStage = [&](Value key0) {
    stageKeys(b, loc, tid, kThreads, k, sharedK, batch, key0, kStage, sk, d,
              dPad, element);
    stageKeys(b, loc, tid, kThreads, v, sharedVt, batch, key0, kStage, sk, dv,
              dvPad, element, /*transposed=*/true);
  };
  auto walkStep = [&](Value key0, Value j0,
                      ValueRange carried) -> SmallVector<Value> {
    // S = Q·Kᵀ, two tiles of 8 keys; score e of tile n is row g (e < 2)
    // or g + 8, key j0 + 8n + 2t + e % 2.
    Value scale = f32(op.getScale().convertToDouble());
    SmallVector<Value> scores;
    Value maxLo = negInf, maxHi = negInf;
    // Kᵀ's B fragments of both tiles per 16 dims: one ldmatrix.x4 of the
    // [key][d] stage (matrices: keys +0/+8, dims +0/+8).
    SmallVector<SmallVector<Value>> kFragments;
    for (int64_t s = 0; s < dPad / 16; ++s)
      kFragments.push_back(ldMatrixX4(b, loc, operand, sharedK,
                                      {add(j0, ldRow), add(ldCol, 16 * s)},
                                      /*transpose=*/false));
    for (int64_t n = 0; n < 2; ++n) {
      SmallVector<Value> acc(4, zero);
      for (int64_t s = 0; s < dPad / 16; ++s)
        acc =
            mmaSync(b, loc, operand, qFragments[s],
                    {kFragments[s][2 * n], kFragments[s][2 * n + 1]}, acc, 16);
      for (int64_t e = 0; e < 4; ++e) {
        bool hi = e >= 2;
        Value key = add(add(add(key0, j0), mul(thread, 2)), 8 * n + e % 2);
        Value score = arith::MulFOp::create(b, loc, acc[e], scale);
        score = finishScore(b, loc, op, shape, score, mask, batch,
                            hi ? rowHi : rowLo, hi ? okHi : okLo, key);
        scores.push_back(score);
        Value &m = hi ? maxHi : maxLo;
        m = arith::MaximumFOp::create(b, loc, m, score);
      }
    }
    OnlineMax nextLo =
        updateRunningMax(b, loc, carried[0], acrossGroup(maxLo, /*max=*/true));
    OnlineMax nextHi =
        updateRunningMax(b, loc, carried[2], acrossGroup(maxHi, /*max=*/true));
    Value sumLo = arith::MulFOp::create(b, loc, carried[1], nextLo.correction);
    Value sumHi = arith::MulFOp::create(b, loc, carried[3], nextHi.correction);
    // (l sums the f32 probabilities; P·V uses them rounded to the operand
    // type, as FlashAttention-2 does.)
    SmallVector<Value> p;
    for (auto [e, score] : llvm::enumerate(scores)) {
      bool hi = e % 4 >= 2;
      Value prob = math::ExpOp::create(
          b, loc,
          arith::SubFOp::create(b, loc, score,
                                hi ? nextHi.subtract : nextLo.subtract));
      Value &sum = hi ? sumHi : sumLo;
      sum = arith::AddFOp::create(b, loc, sum, prob);
      p.push_back(prob);
    }
    SmallVector<Value> updated = {nextLo.max, sumLo, nextHi.max, sumHi};

    // P's A fragment: tile 0's rows g and g + 8, then tile 1's.
    SmallVector<Value> pFragment = {
        registerOf(p[0], p[1]), registerOf(p[2], p[3]), registerOf(p[4], p[5]),
        registerOf(p[6], p[7])};
    // V's B fragments from the [d][key] stage: one ldmatrix.x4 per two
    // 8-column tiles (an odd last tile by pair loads).
    Value keyCol = add(j0, mul(thread, 2));
    SmallVector<Value> vFragments;
    for (int64_t t = 0; t + 1 < tiles; t += 2)
      llvm::append_range(vFragments,
                         ldMatrixX4(b, loc, operand, sharedVt,
                                    {add(ldRow, 8 * t), add(j0, ldCol)},
                                    /*transpose=*/false));
    if (tiles % 2) {
      Value column = add(group, 8 * (tiles - 1));
      vFragments.push_back(sharedPair(sharedVt, column, keyCol));
      vFragments.push_back(sharedPair(sharedVt, column, add(keyCol, 8)));
    }
    for (int64_t t = 0; t < tiles; ++t) {
      SmallVector<Value> acc;
      for (int64_t e = 0; e < 4; ++e)
        acc.push_back(arith::MulFOp::create(b, loc, carried[4 + t * 4 + e],
                                            e >= 2 ? nextHi.correction
                                                   : nextLo.correction));
      acc = mmaSync(b, loc, operand, pFragment,
                    {vFragments[2 * t], vFragments[2 * t + 1]}, acc, 16);
      updated.append(acc.begin(), acc.end());
    }
    return updated;
  };
  SmallVector<Value> final =
      walkKeyStages(b, loc, keyEnd, kStage, kStep, state, fillStage, walkStep);

  // l across the row's four lanes, then one division per output.
  Value sumLo = acrossGroup(final[1], /*max=*/false);
  Value sumHi = acrossGroup(final[3], /*max=*/false);
  for (int64_t t = 0; t < tiles; ++t)
    for (int64_t e = 0; e < 4; ++e) {
      bool hi = e >= 2;
      Value column = add(mul(thread, 2), 8 * t + e % 2);
      Value ok = hi ? okHi : okLo;
      if (dv % 8)
        ok = both(ok, lessThan(b, loc, column, index(b, loc, dv)));
      auto store = scf::IfOp::create(b, loc, ok, /*withElseRegion=*/false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&store.getThenRegion().front());
      Value result = normalizedOutput(b, loc, op, final[4 + t * 4 + e],
                                      hi ? sumHi : sumLo);
      if (!shape.element.isF32())
        result = arith::TruncFOp::create(b, loc, shape.element, result);
      memref::StoreOp::create(b, loc, result, out,
                              withIndices(batch, hi ? rowHi : rowLo, column));
    }
  b.setInsertionPointAfter(launch);
  return asTensor(b, loc, out);
}
} // namespace

Value gpu_kernels::writeMmaAttention(OpBuilder &b, AttentionOp op,
                                     MmaOperand operand) {
  return MmaFlashWriter(b, op, operand).write();
}
