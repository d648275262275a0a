//===- AttentionKernels.cpp - kiln.attention as one flash kernel ----------===//
//
// softmax(q kᵀ · scale + mask) v as one FlashAttention-2-style kernel, memory
// linear in the sequence length:
//
//   grid (ceil(Sq/64), batch), 64 threads, one query row per thread: the
//   row of q and its output accumulator live in registers; the block walks
//   the keys in tiles of 16 keys staged through shared memory (K and V),
//   computes each row's scores 4 keys at a time, keeps the running max m and
//   sum l, rescales the accumulator once per 4 keys by exp(m_old - m_new)
//   and adds p·V; one division by l at the end. Causal attention stops each
//   block's key loop at its last row (the tiles above the diagonal are never
//   loaded); the mask (additive, broadcast to [B..., Sq, Sk]) is read per
//   score.
//
// Runs at the lowering stage for GPU targets, on kiln.attention ops with
// f32 operands and head sizes up to 64 (the row state in registers); other
// attention ops keep the generic lowering. The kernel is written on buffers
// (to_buffer / alloc / to_tensor) like the contraction kernels.
//
// The pass picks the kernel per op: this one, the MFMA one
// (AttentionMfma.cpp) or the tensor-core one (AttentionMma.cpp). This file
// also holds what they share (the mask indexing, the score finishing, the
// online-softmax step, key staging) and, for the tensor-core kernel, the
// layouts it reads and writes through transposes (AttentionLayouts) and the
// casts that round f32 K and V ahead (roundKeysAhead).
//
//===----------------------------------------------------------------------===//
#include "backends/gpu/AttentionKernels.h"
#include "backends/gpu/Passes.h"

#include "compiler/logging/Logging.h"
#include "compiler/logging/Report.h"
#include "dialects/kiln/KilnOps.h"
#include "dialects/kiln/NodeLocation.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <limits>

namespace mlir::kiln {
#define GEN_PASS_DEF_ATTENTIONKERNELS
#include "backends/gpu/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::gpu_kernels;

gpu_kernels::AttentionShape::AttentionShape(AttentionOp op) {
  element = cast<RankedTensorType>(op.getQuery().getType()).getElementType();
  auto q = cast<RankedTensorType>(op.getQuery().getType()).getShape();
  auto k = cast<RankedTensorType>(op.getKey().getType()).getShape();
  auto v = cast<RankedTensorType>(op.getValue().getType()).getShape();
  size_t rank = q.size();
  if (rank < 2)
    return;
  batchSizes.assign(q.begin(), q.end() - 2);
  for (int64_t size : batchSizes)
    batchTotal =
        ShapedType::isDynamic(size) || ShapedType::isDynamic(batchTotal)
            ? ShapedType::kDynamic
            : batchTotal * size;
  sq = q[rank - 2];
  d = q[rank - 1];
  sk = k[rank - 2];
  dv = v[rank - 1];
  if (Value mask = op.getMask()) {
    auto shape = cast<RankedTensorType>(mask.getType()).getShape();
    maskShape.assign(shape.begin(), shape.end());
  }
}

void gpu_kernels::AttentionShape::materialize(OpBuilder &b, Location loc,
                                              AttentionOp op) {
  SmallVector<Value> q = tensorExtents(b, loc, op.getQuery());
  size_t rank = q.size();
  batchValues.assign(q.begin(), q.end() - 2);
  sqValue = q[rank - 2];
  skValue = tensorExtents(b, loc, op.getKey())[rank - 2];
  batchTotalValue = index(b, loc, 1);
  for (Value size : batchValues)
    batchTotalValue = arith::MulIOp::create(b, loc, batchTotalValue, size);
  if (Value mask = op.getMask())
    maskValues = tensorExtents(b, loc, mask);
}

SmallVector<Value>
gpu_kernels::attentionMaskIndices(OpBuilder &b, Location loc,
                                  const AttentionShape &shape, ValueRange batch,
                                  Value row, Value key) {
  SmallVector<Value> full(batch.begin(), batch.end());
  full.push_back(row);
  full.push_back(key);
  SmallVector<Value> indices;
  size_t offset = full.size() - shape.maskShape.size();
  for (auto [i, size] : llvm::enumerate(shape.maskShape)) {
    Value at = full[offset + i];
    if (size == 1)
      at = index(b, loc, 0);
    else if (ShapedType::isDynamic(size))
      at = arith::SelectOp::create(
          b, loc,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                shape.maskValues[i], index(b, loc, 1)),
          index(b, loc, 0), at);
    indices.push_back(at);
  }
  return indices;
}

Value gpu_kernels::finishScore(OpBuilder &b, Location loc, AttentionOp op,
                               const AttentionShape &shape, Value score,
                               Value mask, ValueRange batch, Value row,
                               Value rowOk, Value key, double maskScale,
                               bool inside) {
  Value keyOk = inside ? Value() : lessThan(b, loc, key, shape.skValue);
  if (mask) {
    Value term = guardedLoadF32(
        b, loc, mask, attentionMaskIndices(b, loc, shape, batch, row, key),
        inside ? rowOk : arith::AndIOp::create(b, loc, keyOk, rowOk));
    if (maskScale != 1.0) {
      // A finite mask stays finite when scaled (torch's finfo.min times
      // log2(e) would overflow to -inf and turn a row masked everywhere
      // from uniform into NaN); infinities stay infinite.
      auto f32 = [&](double v) {
        return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
      };
      double largest = std::numeric_limits<float>::max();
      Value scaled = arith::MulFOp::create(b, loc, term, f32(maskScale));
      Value clamped = arith::MinimumFOp::create(
          b, loc, arith::MaximumFOp::create(b, loc, scaled, f32(-largest)),
          f32(largest));
      Value finite = arith::CmpFOp::create(
          b, loc, arith::CmpFPredicate::OLT, math::AbsFOp::create(b, loc, term),
          f32(std::numeric_limits<double>::infinity()));
      term = arith::SelectOp::create(b, loc, finite, clamped, scaled);
    }
    score = arith::AddFOp::create(b, loc, score, term);
  }
  if (inside)
    return score;
  Value masked = arith::XOrIOp::create(
      b, loc, keyOk, arith::ConstantOp::create(b, loc, b.getBoolAttr(true)));
  if (op.getCausal())
    masked = arith::OrIOp::create(
        b, loc, masked,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, key, row));
  Value negInf = arith::ConstantOp::create(
      b, loc, b.getF32FloatAttr(-std::numeric_limits<float>::infinity()));
  return arith::SelectOp::create(b, loc, masked, negInf, score);
}

void gpu_kernels::stageKeys(OpBuilder &b, Location loc, Value tid,
                            int64_t threads, Value source, Value shared,
                            ValueRange batch, Value key0, int64_t keys,
                            Value sk, int64_t width, int64_t padded,
                            Type element) {
  IndexMath math{b, loc};
  auto copy = scf::ForOp::create(b, loc, tid, index(b, loc, keys * padded),
                                 index(b, loc, threads));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(copy.getBody());
  Value e = copy.getInductionVar();
  Value j = math.div(e, padded), c = math.rem(e, padded);
  Value key = math.add(key0, j);
  Value ok = lessThan(b, loc, key, sk);
  if (width != padded)
    ok = math.both(ok, lessThan(b, loc, c, index(b, loc, width)));
  Value value = guardedLoadF32(b, loc, source, withIndices(batch, key, c), ok);
  if (!element.isF32())
    value = arith::TruncFOp::create(b, loc, element, value);
  memref::StoreOp::create(b, loc, value, shared, ValueRange{j, c});
}

AttentionLayouts AttentionLayouts::of(AttentionOp op, bool throughTransposes) {
  AttentionLayouts layouts;
  Value operands[3] = {op.getQuery(), op.getKey(), op.getValue()};
  // A transpose keeping the last dim (the one the kernels read in rows).
  auto keepsLastDim = [](TransposeOp t) {
    ArrayRef<int64_t> perm = t.getPerm();
    return !perm.empty() && perm.back() == int64_t(perm.size()) - 1 &&
           cast<RankedTensorType>(t.getInput().getType()).hasStaticShape() &&
           t.getType().hasStaticShape();
  };
  for (int i = 0; i < 3; ++i) {
    layouts.sources[i] = operands[i];
    auto transpose = operands[i].getDefiningOp<TransposeOp>();
    if (!throughTransposes || !transpose || !keepsLastDim(transpose))
      continue;
    // Result dim j is input dim perm[j]: input index perm[j] is logical
    // index j.
    ArrayRef<int64_t> perm = transpose.getPerm();
    SmallVector<int64_t> gather(perm.size());
    for (auto [j, from] : llvm::enumerate(perm))
      gather[from] = j;
    layouts.sources[i] = transpose.getInput();
    layouts.gathers[i] = gather;
  }
  if (throughTransposes && op.getResult().hasOneUse())
    if (auto transpose = dyn_cast<TransposeOp>(*op.getResult().user_begin()))
      if (keepsLastDim(transpose)) {
        layouts.outTranspose = transpose;
        layouts.gathers[3].assign(transpose.getPerm().begin(),
                                  transpose.getPerm().end());
      }
  return layouts;
}

SmallVector<Value> gpu_kernels::gatheredIndices(ArrayRef<int64_t> gather,
                                                ValueRange batch, Value row,
                                                Value col) {
  SmallVector<Value> logical = withIndices(batch, row, col);
  if (gather.empty())
    return logical;
  SmallVector<Value> indices;
  for (int64_t from : gather)
    indices.push_back(logical[from]);
  return indices;
}

gpu_kernels::AttentionBuffers::AttentionBuffers(
    OpBuilder &b, Location loc, AttentionOp op, AttentionShape &shape,
    const AttentionLayouts &layouts) {
  shape.materialize(b, loc, op);
  q = readOnlyBuffer(b, loc, layouts.sources[0]);
  k = readOnlyBuffer(b, loc, layouts.sources[1]);
  v = readOnlyBuffer(b, loc, layouts.sources[2]);
  if (op.getMask())
    mask = readOnlyBuffer(b, loc, op.getMask());
  SmallVector<int64_t> outShape(shape.batchSizes);
  outShape.append({shape.sq, shape.dv});
  if (TransposeOp transpose = layouts.outTranspose) {
    ArrayRef<int64_t> dims = transpose.getType().getShape();
    outShape.assign(dims.begin(), dims.end());
  }
  // Run-time extents (never through a transpose: AttentionLayouts keeps
  // static ones only) from the operands.
  SmallVector<Value> dynamic;
  for (auto [i, size] : llvm::enumerate(outShape))
    if (ShapedType::isDynamic(size))
      dynamic.push_back(i < shape.batchValues.size() ? shape.batchValues[i]
                                                     : shape.sqValue);
  out =
      memref::AllocOp::create(b, loc, MemRefType::get(outShape, shape.element),
                              dynamic, b.getI64IntegerAttr(64));
}

SmallVector<Value> gpu_kernels::walkKeyStages(
    OpBuilder &b, Location loc, Value keyEnd, int64_t stageKeys, int64_t step,
    ValueRange state, function_ref<void(Value key0)> fillStage,
    function_ref<SmallVector<Value>(Value key0, Value j0, ValueRange state)>
        walkStep) {
  auto keys = scf::ForOp::create(b, loc, index(b, loc, 0), keyEnd,
                                 index(b, loc, stageKeys), state);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(keys.getBody());
  Value key0 = keys.getInductionVar();
  fillStage(key0);
  gpu::BarrierOp::create(b, loc);
  Value keysHere =
      arith::MinUIOp::create(b, loc, index(b, loc, stageKeys),
                             arith::SubIOp::create(b, loc, keyEnd, key0));
  auto steps =
      scf::ForOp::create(b, loc, index(b, loc, 0), keysHere,
                         index(b, loc, step), keys.getRegionIterArgs());
  {
    OpBuilder::InsertionGuard stepGuard(b);
    b.setInsertionPointToStart(steps.getBody());
    scf::YieldOp::create(
        b, loc,
        walkStep(key0, steps.getInductionVar(), steps.getRegionIterArgs()));
  }
  SmallVector<Value> next(steps.getResults());
  gpu::BarrierOp::create(b, loc);
  scf::YieldOp::create(b, loc, next);
  return SmallVector<Value>(keys.getResults());
}

OnlineMax gpu_kernels::updateRunningMax(OpBuilder &b, Location loc,
                                        Value oldMax, Value scoresMax,
                                        bool base2) {
  Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0f));
  Value negInf = arith::ConstantOp::create(
      b, loc, b.getF32FloatAttr(-std::numeric_limits<float>::infinity()));
  Value max = arith::MaximumFOp::create(b, loc, oldMax, scoresMax);
  Value noneKept =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, max, negInf);
  Value subtract = arith::SelectOp::create(b, loc, noneKept, zero, max);
  Value difference = arith::SubFOp::create(b, loc, oldMax, subtract);
  Value correction = base2
                         ? math::Exp2Op::create(b, loc, difference).getResult()
                         : math::ExpOp::create(b, loc, difference).getResult();
  return {max, subtract, correction};
}

Value gpu_kernels::normalizedOutput(OpBuilder &b, Location loc, AttentionOp op,
                                    Value acc, Value sum) {
  Value out = arith::DivFOp::create(b, loc, acc, sum);
  if (!op.getZeroMaskedRows())
    return out;
  Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0f));
  Value empty =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, sum, zero);
  return arith::SelectOp::create(b, loc, empty, zero, out);
}

namespace {
constexpr int64_t kRows = 64;         // query rows (threads) per block
constexpr int64_t kKeys = 16;         // keys per shared-memory tile
constexpr int64_t kGroup = 4;         // keys per online-softmax update
constexpr int64_t kMaxHead = 64;      // head sizes kept in registers (SIMT)
constexpr int64_t kMaxMfmaHead = 128; // matrix-core kernels (MFMA, mma.sync)

/// Whether the flash kernels take `op`: f32 operands (or, with `halves`,
/// all f16 or all bf16), static head sizes up to `maxHead`, at most 65535
/// batch entries (grid y; a run-time batch past that fails at launch with
/// the kernel named). The batch dims and sequence lengths may be run-time
/// extents.
bool supported(AttentionOp op, int64_t maxHead, bool halves) {
  Type element = getElementTypeOrSelf(op.getQuery().getType());
  if (!element.isF32() && !(halves && (element.isF16() || element.isBF16())))
    return false;
  for (Value v : op->getOperands()) {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    if (!type || type.getElementType() != element)
      return false;
  }
  if (cast<RankedTensorType>(op.getQuery().getType()).getRank() < 2)
    return false;
  AttentionShape shape(op);
  return !ShapedType::isDynamic(shape.d) && !ShapedType::isDynamic(shape.dv) &&
         shape.d <= maxHead && shape.dv <= maxHead &&
         (ShapedType::isDynamic(shape.batchTotal) || shape.batchTotal <= 65535);
}

class FlashKernelWriter {
public:
  FlashKernelWriter(OpBuilder &b, AttentionOp op) : b(b), op(op), shape(op) {}
  Value write();

private:
  Value f32(double value) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(value));
  }

  OpBuilder &b;
  AttentionOp op;
  Location loc = op.getLoc();
  AttentionShape shape;
};

Value FlashKernelWriter::write() {
  int64_t d = shape.d, dv = shape.dv;
  AttentionBuffers buffers(b, loc, op, shape);
  Value q = buffers.q, k = buffers.k, v = buffers.v, mask = buffers.mask,
        out = buffers.out;

  Type f32Type = b.getF32Type();
  gpu::LaunchOp launch = createLaunch(
      b, loc,
      {arith::CeilDivUIOp::create(b, loc, shape.sqValue, index(b, loc, kRows)),
       shape.batchTotalValue},
      {kRows},
      {workgroupMemRef({kKeys, d}, f32Type),
       workgroupMemRef({kKeys, dv}, f32Type)});
  Value sharedK = launch.getWorkgroupAttributions()[0];
  Value sharedV = launch.getWorkgroupAttributions()[1];
  Value tid = launch.getThreadIds().x;
  Value row0 = arith::MulIOp::create(b, loc, launch.getBlockIds().x,
                                     index(b, loc, kRows));
  Value row = arith::AddIOp::create(b, loc, row0, tid);
  SmallVector<Value> batch = shape.batchValues.empty()
                                 ? SmallVector<Value>()
                                 : delinearize(b, loc, launch.getBlockIds().y,
                                               ValueRange(shape.batchValues));
  auto at = [&](ValueRange lead, Value i, Value j) {
    SmallVector<Value> indices(lead.begin(), lead.end());
    indices.push_back(i);
    indices.push_back(j);
    return indices;
  };
  Value zero = f32(0.0), negInf = f32(-std::numeric_limits<double>::infinity());
  Value rowOk = lessThan(b, loc, row, shape.sqValue);
  Value skBound = shape.skValue;

  // The thread's query row, in registers.
  SmallVector<Value> qRow;
  for (int64_t i = 0; i < d; ++i)
    qRow.push_back(
        guardedLoad(b, loc, q, at(batch, row, index(b, loc, i)), rowOk, zero));

  // Causal: keys past the block's last row are masked for every row.
  Value keyEnd = skBound;
  if (op.getCausal())
    keyEnd = arith::MinUIOp::create(
        b, loc, skBound,
        arith::AddIOp::create(b, loc, row0, index(b, loc, kRows)));

  SmallVector<Value> state = {negInf, zero}; // m, l
  state.append(dv, zero);                    // acc
  auto keys = scf::ForOp::create(b, loc, index(b, loc, 0), keyEnd,
                                 index(b, loc, kKeys), state);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(keys.getBody());
    Value key0 = keys.getInductionVar();
    ValueRange carried = keys.getRegionIterArgs();
    // Stage the tile's K and V rows (zeros past the last key).
    auto stage = [&](Value source, Value shared, int64_t width) {
      auto copy = scf::ForOp::create(b, loc, tid, index(b, loc, kKeys * width),
                                     index(b, loc, kRows));
      OpBuilder::InsertionGuard copyGuard(b);
      b.setInsertionPointToStart(copy.getBody());
      Value e = copy.getInductionVar();
      Value j = arith::DivUIOp::create(b, loc, e, index(b, loc, width));
      Value c = arith::RemUIOp::create(b, loc, e, index(b, loc, width));
      Value key = arith::AddIOp::create(b, loc, key0, j);
      Value value = guardedLoad(b, loc, source, at(batch, key, c),
                                lessThan(b, loc, key, skBound), zero);
      memref::StoreOp::create(b, loc, value, shared, ValueRange{j, c});
    };
    stage(k, sharedK, d);
    stage(v, sharedV, dv);
    gpu::BarrierOp::create(b, loc);

    // The tile's keys in groups of 4: their scores, then the online
    // softmax update (one rescale of m, l and acc per group). A loop over
    // groups rather than the whole tile unrolled keeps the row state and
    // four scores in registers; its bound, the tile's keys left before
    // keyEnd, is not a constant, so LLVM does not unroll it either (AMDGPU
    // would then load the whole tile into registers up front).
    Value tileKeys =
        arith::MinUIOp::create(b, loc, index(b, loc, kKeys),
                               arith::SubIOp::create(b, loc, keyEnd, key0));
    auto groups = scf::ForOp::create(b, loc, index(b, loc, 0), tileKeys,
                                     index(b, loc, kGroup), carried);
    {
      OpBuilder::InsertionGuard groupGuard(b);
      b.setInsertionPointToStart(groups.getBody());
      Value j0 = groups.getInductionVar();
      ValueRange rowState = groups.getRegionIterArgs();
      Value scale = f32(op.getScale().convertToDouble());
      SmallVector<Value> scores;
      Value groupMax = negInf;
      for (int64_t j = 0; j < kGroup; ++j) {
        Value jj = arith::AddIOp::create(b, loc, j0, index(b, loc, j));
        Value s = zero;
        for (int64_t i = 0; i < d; ++i)
          s = math::FmaOp::create(
              b, loc, qRow[i],
              memref::LoadOp::create(b, loc, sharedK,
                                     ValueRange{jj, index(b, loc, i)}),
              s);
        s = arith::MulFOp::create(b, loc, s, scale);
        Value key = arith::AddIOp::create(b, loc, key0, jj);
        s = finishScore(b, loc, op, shape, s, mask, batch, row, rowOk, key);
        scores.push_back(s);
        groupMax = arith::MaximumFOp::create(b, loc, groupMax, s);
      }
      OnlineMax next = updateRunningMax(b, loc, rowState[0], groupMax);
      Value correction = next.correction;
      Value sum = arith::MulFOp::create(b, loc, rowState[1], correction);
      SmallVector<Value> probs;
      for (Value s : scores) {
        Value p = math::ExpOp::create(
            b, loc, arith::SubFOp::create(b, loc, s, next.subtract));
        probs.push_back(p);
        sum = arith::AddFOp::create(b, loc, sum, p);
      }
      SmallVector<Value> updated = {next.max, sum};
      for (int64_t c = 0; c < dv; ++c) {
        Value acc = arith::MulFOp::create(b, loc, rowState[2 + c], correction);
        for (int64_t j = 0; j < kGroup; ++j)
          acc = math::FmaOp::create(
              b, loc, probs[j],
              memref::LoadOp::create(
                  b, loc, sharedV,
                  ValueRange{
                      arith::AddIOp::create(b, loc, j0, index(b, loc, j)),
                      index(b, loc, c)}),
              acc);
        updated.push_back(acc);
      }
      scf::YieldOp::create(b, loc, updated);
    }
    SmallVector<Value> next(groups.getResults());
    gpu::BarrierOp::create(b, loc);
    scf::YieldOp::create(b, loc, next);
  }

  // One division by l (normalizedOutput: a row with every key masked gives
  // NaN, or 0 with zero_masked_rows).
  auto store = scf::IfOp::create(b, loc, rowOk, /*withElseRegion=*/false);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&store.getThenRegion().front());
    Value sum = keys.getResult(1);
    for (int64_t c = 0; c < dv; ++c)
      memref::StoreOp::create(
          b, loc, normalizedOutput(b, loc, op, keys.getResult(2 + c), sum), out,
          at(batch, row, index(b, loc, c)));
  }
  b.setInsertionPointAfter(launch);
  return asTensor(b, loc, out);
}

struct AttentionKernelsPass
    : public kiln::impl::AttentionKernelsBase<AttentionKernelsPass> {
  using Base::Base;

  /// f32 K and V of a tensor-core kernel rounded to its operand type by a
  /// kiln.cast of their own (one per tensor; the elementwise fusion may
  /// merge it into the op that makes the tensor): the kernel then copies
  /// them to shared memory by cp.async, half the bytes and no f32 values
  /// held in registers across its products. The kernel used to round the
  /// same way while staging, so the results do not change.
  void roundKeysAhead(AttentionOp op, AttentionLayouts &layouts,
                      MmaOperand operand) {
    Type narrow = operand == MmaOperand::F16
                      ? Type(Float16Type::get(&getContext()))
                      : Type(BFloat16Type::get(&getContext()));
    for (int i : {1, 2}) {
      Value source = layouts.sources[i];
      auto type = cast<RankedTensorType>(source.getType());
      if (!type.getElementType().isF32())
        continue;
      Value &rounded = roundedKeys[{source, narrow}];
      if (!rounded) {
        OpBuilder b(&getContext());
        if (Operation *producer = source.getDefiningOp())
          b.setInsertionPointAfter(producer);
        else
          b.setInsertionPointToStart(cast<BlockArgument>(source).getOwner());
        rounded = CastOp::create(b, op.getLoc(), type.clone(narrow), source,
                                 TypeAttr::get(narrow));
      }
      layouts.sources[i] = rounded;
    }
  }
  DenseMap<std::pair<Value, Type>, Value> roundedKeys;

  void runOnOperation() override {
    roundedKeys.clear();
    if (!llvm::is_contained({"fp32", "tf32", "bf16", "fp16"}, precision)) {
      getOperation().emitError("kiln-gpu-attention-kernels: unknown "
                               "precision '")
          << precision << "' (fp32, tf32, bf16, fp16)";
      return signalPassFailure();
    }
    if (!llvm::is_contained({"mfma", "mma.sync", "none"}, matrixUnit)) {
      getOperation().emitError("kiln-gpu-attention-kernels: unknown "
                               "matrix unit '")
          << matrixUnit << "' (mfma, mma.sync, none)";
      return signalPassFailure();
    }
    bool mfma = matrixUnit == "mfma";
    // On NVIDIA tensor cores: f16/bf16 operands, or f32 ones at a 16-bit
    // precision; the rest takes the SIMT kernel.
    auto onMma = [&](AttentionOp op) -> std::optional<MmaOperand> {
      if (matrixUnit != "mma.sync")
        return std::nullopt;
      Type element = AttentionShape(op).element;
      if (element.isF16() || (element.isF32() && precision == "fp16"))
        return MmaOperand::F16;
      if (element.isBF16() || (element.isF32() && precision == "bf16"))
        return MmaOperand::BF16;
      return std::nullopt;
    };
    SmallVector<AttentionOp> ops;
    getOperation().walk([&](AttentionOp op) {
      bool matrix = mfma || onMma(op);
      int64_t maxHead = matrix ? kMaxMfmaHead : kMaxHead;
      if (supported(op, maxHead, /*halves=*/matrix))
        ops.push_back(op);
      else
        KILN_LOG("gpu", Info)
            << "attention at '" << onnxNodeName(op->getLoc())
            << "' keeps the generic lowering (needs "
            << (matrix ? "f32, f16 or bf16" : "f32")
            << " operands and static head sizes up to " << maxHead << ")\n";
    });
    for (AttentionOp op : ops) {
      OpBuilder b(op);
      MfmaOperand operand =
          mfmaOperandFor(AttentionShape(op).element, precision);
      std::optional<MmaOperand> mma = onMma(op);
      // The tensor-core kernel reads a BERT's [B, S, H, D] projections
      // and writes its result as they are, with no transposes around it.
      AttentionLayouts layouts =
          AttentionLayouts::of(op, /*throughTransposes=*/mma.has_value());
      if (mma)
        roundKeysAhead(op, layouts, *mma);
      Value result = mfma  ? writeMfmaAttention(b, op, operand)
                     : mma ? writeMmaAttention(b, op, *mma, layouts)
                           : FlashKernelWriter(b, op).write();
      KILN_LOG("gpu", Info)
          << "flash attention kernel for '" << onnxNodeName(op->getLoc()) << "'"
          << (op.getCausal() ? " (causal)" : "")
          << (mma     ? (*mma == MmaOperand::F16 ? " on mma.sync f16 m16n8k16"
                                                 : " on mma.sync bf16 m16n8k16")
              : !mfma ? ""
              : operand == MfmaOperand::F32 ? " on MFMA f32 16x16x4"
              : operand == MfmaOperand::F16 ? " on MFMA f16 16x16x16"
                                            : " on MFMA bf16 16x16x16")
          << "\n";
      report::count("gpu_attention_kernels");
      if (AttentionShape(op).runTimeExtents())
        report::count("gpu_attention_kernels_run_time_extents");
      if (TransposeOp transpose = layouts.outTranspose) {
        transpose.getResult().replaceAllUsesWith(result);
        transpose.erase();
      } else {
        op.getResult().replaceAllUsesWith(result);
      }
      op.erase();
    }
  }
};
} // namespace
