//===- AttentionMfma.cpp - kiln.attention on AMD matrix cores -------------===//
//
// The flash-attention kernel for AMD Instinct GPUs: the FlashAttention-2
// schedule of AttentionKernels.cpp with both products on the matrix cores
// (amdgpu.mfma, f32 accumulation):
//
//   grid (ceil(Sq/64), batch), 256 threads = 4 waves of 64; wave w owns the
//   block's query rows 16w..16w+15. Per step the block stages 32 keys of K
//   and V in LDS (zeros past the last key, head sizes padded to the MFMA
//   depth; 16 keys when 32 would take over 20 KiB), then each wave walks
//   them 16 at a time:
//
//   - Sᵀ (16 keys x 16 rows) = K·Qᵀ: d/4 MFMAs 16x16x4 (f32) or d/16
//     16x16x16 (f16/bf16). Q is the B operand: the lane's fragments stay in
//     registers for the whole kernel.
//   - Online softmax. In the CDNA accumulator layout lane L holds
//     Sᵀ[4(L/16) + e][L % 16], i.e. row L % 16's scores for 4 of the 16
//     keys, so a row's max is a max of 4 registers and two xor shuffles
//     (lanes 16 and 32 apart); every register the lane rescales belongs to
//     that row. The running sum stays per lane and is added up across the
//     four lanes once, at the end.
//   - Oᵀ (16 columns x 16 rows) += Vᵀ·Pᵀ per 16 output columns. Pᵀ is the
//     B operand and already where it must be: the lane's 4 probabilities
//     fill its k slots (the k order of an MFMA is free, so V's A fragment
//     is read from LDS in the same order). One 16x16x16 MFMA, or four
//     16x16x4.
//
// Causal blocks stop at their last row; the additive mask is read per
// score. fp32 and tf32 use the f32 MFMA (CDNA has no tf32); bf16 and fp16
// (the precision, or the model's own f16/bf16 operands) feed K, Q, V and P
// to the MFMA in that type; the softmax and the accumulators stay f32.
//
//===----------------------------------------------------------------------===//
#include "backends/gpu/AttentionKernels.h"

#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
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
constexpr int64_t kWaveRows = 16; // query rows per wave
constexpr int64_t kThreads = 256; // 4 waves of 64
constexpr int64_t kWave = 64;
constexpr int64_t kStage = 32; // keys staged in LDS per step (at most)
// LDS per block above which the stage is halved to 16 keys (head sizes
// over 64 in f32), so that 3 blocks still share a CU's 64 KiB.
constexpr int64_t kStageBytes = 20 * 1024;
constexpr int64_t kStep = 16;    // keys per MFMA tile
constexpr int64_t kColumns = 16; // output columns per MFMA tile

class MfmaFlashWriter : IndexMath {
public:
  MfmaFlashWriter(OpBuilder &b, AttentionOp op, MfmaOperand operand)
      : IndexMath{b, op.getLoc()}, op(op), operand(operand), shape(op) {}
  Value write();

private:
  Type elementType() { return mfmaElementType(b, operand); }
  /// Values of an A or B operand one lane holds per MFMA (K / 4).
  int64_t perLane() { return mfmaPerLane(operand); }
  int64_t depth() { return 4 * perLane(); }
  Value f32(double value) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(value));
  }
  /// An f32 value in the MFMA operand type.
  Value narrow(Value value) {
    Type element = elementType();
    return element.isF32() ? value
                           : arith::TruncFOp::create(b, loc, element, value);
  }
  /// One lane's operand: a scalar for the f32 MFMA, else a vector of 4.
  Value operandOf(ArrayRef<Value> values) {
    if (values.size() == 1)
      return values.front();
    return vector::FromElementsOp::create(
        b, loc, VectorType::get({int64_t(values.size())}, elementType()),
        values);
  }
  AttentionOp op;
  MfmaOperand operand;
  AttentionShape shape;
  Value tid;
  int64_t keysPerStage = kStage;
};

Value MfmaFlashWriter::write() {
  int64_t d = shape.d, dv = shape.dv;
  int64_t dPad = llvm::alignTo(d, depth());
  int64_t dvPad = llvm::alignTo(dv, kColumns);
  AttentionBuffers buffers(b, loc, op, shape);
  Value q = buffers.q, k = buffers.k, v = buffers.v, mask = buffers.mask,
        out = buffers.out;

  // Rows padded by 4 elements against LDS bank conflicts of the column
  // reads.
  Type element = elementType();
  int64_t rowBytes =
      (dPad + 4 + dvPad + 4) * element.getIntOrFloatBitWidth() / 8;
  if (kStage * rowBytes > kStageBytes)
    keysPerStage = kStep;
  gpu::LaunchOp launch = createLaunch(
      b, loc,
      {arith::CeilDivUIOp::create(b, loc, shape.sqValue, index(b, loc, kRows)),
       shape.batchTotalValue},
      {kThreads},
      {workgroupMemRef({keysPerStage, dPad + 4}, element),
       workgroupMemRef({keysPerStage, dvPad + 4}, element)});
  Value sharedK = launch.getWorkgroupAttributions()[0];
  Value sharedV = launch.getWorkgroupAttributions()[1];
  tid = launch.getThreadIds().x;
  Value wave = div(tid, kWave), lane = rem(tid, kWave);
  Value lane16 = rem(lane, 16), quad = div(lane, 16);
  Value row0 = mul(launch.getBlockIds().x, kRows);
  Value row = add(add(row0, mul(wave, kWaveRows)), lane16);
  SmallVector<Value> batch = shape.batchValues.empty()
                                 ? SmallVector<Value>()
                                 : delinearize(b, loc, launch.getBlockIds().y,
                                               ValueRange(shape.batchValues));
  Value zero = f32(0.0), negInf = f32(-std::numeric_limits<double>::infinity());
  Value rowOk = lessThan(b, loc, row, shape.sqValue);
  Value skBound = shape.skValue;

  // Q as the B operand of Sᵀ = K·Qᵀ: for MFMA s the lane holds
  // Q[row][s * depth + perLane * quad + e].
  SmallVector<Value> qFragments;
  for (int64_t s = 0; s < dPad / depth(); ++s) {
    SmallVector<Value> values;
    for (int64_t e = 0; e < perLane(); ++e) {
      Value dim = add(mul(quad, perLane()), s * depth() + e);
      Value ok = both(rowOk, lessThan(b, loc, dim, index(b, loc, d)));
      values.push_back(
          narrow(guardedLoadF32(b, loc, q, withIndices(batch, row, dim), ok)));
    }
    qFragments.push_back(operandOf(values));
  }

  // Causal: keys past the block's last row are masked for every row.
  Value keyEnd = skBound;
  if (op.getCausal())
    keyEnd = arith::MinUIOp::create(b, loc, skBound, add(row0, kRows));

  int64_t tiles = dvPad / kColumns;
  SmallVector<Value> state = {negInf, zero}; // m, the lane's part of l
  state.append(tiles * 4, zero);             // Oᵀ accumulators
  auto fillStage = [&](Value key0) {
    stageKeys(b, loc, tid, kThreads, k, sharedK, batch, key0, keysPerStage,
              skBound, d, dPad, element);
    stageKeys(b, loc, tid, kThreads, v, sharedV, batch, key0, keysPerStage,
              skBound, dv, dvPad, element);
  };
  auto walkStep = [&](Value key0, Value j0,
                      ValueRange carried) -> SmallVector<Value> {
    auto accType = VectorType::get({4}, b.getF32Type());

    // Sᵀ = K·Qᵀ: the lane gets row `row`'s scores for keys
    // j0 + 4 * quad + e.
    Value scores = arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(accType, 0.0f));
    Value keyRow = add(j0, lane16);
    for (int64_t s = 0; s < dPad / depth(); ++s) {
      SmallVector<Value> values;
      for (int64_t e = 0; e < perLane(); ++e)
        values.push_back(memref::LoadOp::create(
            b, loc, sharedK,
            ValueRange{keyRow, add(mul(quad, perLane()), s * depth() + e)}));
      scores = amdgpu::MFMAOp::create(b, loc, 16, 16, depth(), /*blocks=*/1,
                                      operandOf(values), qFragments[s], scores);
    }
    Value scale = f32(op.getScale().convertToDouble());
    SmallVector<Value> s;
    Value laneMax = negInf;
    for (int64_t e = 0; e < 4; ++e) {
      Value score = arith::MulFOp::create(
          b, loc,
          vector::ExtractOp::create(b, loc, scores, ArrayRef<int64_t>{e}),
          scale);
      Value key = add(add(key0, j0), add(mul(quad, 4), e));
      score =
          finishScore(b, loc, op, shape, score, mask, batch, row, rowOk, key);
      s.push_back(score);
      laneMax = arith::MaximumFOp::create(b, loc, laneMax, score);
    }
    // The row's max over the 4 lanes holding it (L, L^16, L^32, L^48).
    Value rowMax = laneMax;
    for (int64_t offset : {16, 32})
      rowMax = arith::MaximumFOp::create(
          b, loc, rowMax, shuffleXor(b, loc, rowMax, offset, kWave));
    OnlineMax next = updateRunningMax(b, loc, carried[0], rowMax);
    Value correction = next.correction;
    Value sum = arith::MulFOp::create(b, loc, carried[1], correction);
    SmallVector<Value> p;
    for (Value score : s) {
      Value prob = math::ExpOp::create(
          b, loc, arith::SubFOp::create(b, loc, score, next.subtract));
      sum = arith::AddFOp::create(b, loc, sum, prob);
      p.push_back(narrow(prob));
    }
    SmallVector<Value> updated = {next.max, sum};

    // Oᵀ += Vᵀ·Pᵀ per 16 columns: MFMA i's k slot perLane * quad + e is
    // key j0 + 4 * quad + i * perLane + e, the lane's probability
    // i * perLane + e.
    for (int64_t t = 0; t < tiles; ++t) {
      SmallVector<Value> acc;
      for (int64_t e = 0; e < 4; ++e)
        acc.push_back(
            arith::MulFOp::create(b, loc, carried[2 + t * 4 + e], correction));
      Value o = vector::FromElementsOp::create(b, loc, accType, acc);
      Value column = add(lane16, t * kColumns);
      for (int64_t i = 0; i < 4 / perLane(); ++i) {
        SmallVector<Value> values, probs;
        for (int64_t e = 0; e < perLane(); ++e) {
          values.push_back(memref::LoadOp::create(
              b, loc, sharedV,
              ValueRange{add(add(j0, mul(quad, 4)), i * perLane() + e),
                         column}));
          probs.push_back(p[i * perLane() + e]);
        }
        o = amdgpu::MFMAOp::create(b, loc, 16, 16, depth(), /*blocks=*/1,
                                   operandOf(values), operandOf(probs), o);
      }
      for (int64_t e = 0; e < 4; ++e)
        updated.push_back(
            vector::ExtractOp::create(b, loc, o, ArrayRef<int64_t>{e}));
    }
    return updated;
  };
  SmallVector<Value> final = walkKeyStages(b, loc, keyEnd, keysPerStage, kStep,
                                           state, fillStage, walkStep);

  // l across the row's four lanes, then one division; a row with every key
  // masked gives 0/0 = NaN, as the unfused softmax does, or 0 with
  // zero_masked_rows.
  Value sum = final[1];
  for (int64_t offset : {16, 32})
    sum = arith::AddFOp::create(b, loc, sum,
                                shuffleXor(b, loc, sum, offset, kWave));
  // Accumulator (t, e) is Oᵀ[16t + 4 * quad + e][row].
  for (int64_t t = 0; t < tiles; ++t)
    for (int64_t e = 0; e < 4; ++e) {
      Value column = add(mul(quad, 4), t * kColumns + e);
      Value ok = rowOk;
      if (dv % kColumns)
        ok = both(ok, lessThan(b, loc, column, index(b, loc, dv)));
      auto store = scf::IfOp::create(b, loc, ok, /*withElseRegion=*/false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&store.getThenRegion().front());
      Value result = normalizedOutput(b, loc, op, final[2 + t * 4 + e], sum);
      if (!shape.element.isF32())
        result = arith::TruncFOp::create(b, loc, shape.element, result);
      memref::StoreOp::create(b, loc, result, out,
                              withIndices(batch, row, column));
    }
  b.setInsertionPointAfter(launch);
  return asTensor(b, loc, out);
}
} // namespace

Value gpu_kernels::writeMfmaAttention(OpBuilder &b, AttentionOp op,
                                      MfmaOperand operand) {
  return MfmaFlashWriter(b, op, operand).write();
}
