//===- ContractionMma.cpp - Tensor-core (mma.sync) contraction kernels ----===//
//
// The contraction kernel for --gpu-precision=tf32|bf16|fp16: the same match,
// loads and epilogue as the SIMT kernel, with the products on tensor cores
// (PTX mma.sync, f32 accumulation):
//
//   grid (ceil(N/tile), ceil(M/tile), batch x K slices). Problems that
//   fill the GPU with them take 128x128 tiles, 8 warps of 64x32 (4x4 mma
//   tiles of 16x8 each); smaller ones 64x64 tiles, 4 warps of 32x32 (2x4).
//   Each step stages a 32-deep slice of A ([tile rows][32]) and B
//   ([tile columns][32] when B is k-contiguous, else as it lies,
//   [32][tile columns]) in shared memory converted to the operand type
//   (f16, bf16, or f32 rounded to tf32; 16-deep for tf32). An operand
//   already in the operand type (a f16/bf16 model, a weight narrowed at
//   compile time, an activation rounded before the kernel) goes straight to
//   shared memory by cp.async, 16 bytes at a time, into 3-4 stages (as many as
//   48 KiB hold) whose 16-byte chunks are swizzled instead of padded: a step
//   waits for its own slice and issues the one 2-3 steps ahead. Other operands
//   pass through registers into two padded stages: the next slice is loaded
//   before the products and stored into the other stage after them. One barrier
//   per step. A warp's global loads run along the operand's contiguous dim.
//   Fragments are in the layout the PTX ISA gives for each lane (group
//   g = lane / 4, thread t = lane % 4): A rows g and g + 8 at k 2t (+1,
//   +8, +9), B column g at the same k. f16/bf16 fragments come by
//   ldmatrix.x4 (one per 16x16 A tile, one per two 8-wide B tiles,
//   transposed from a [k][n] stage), tf32 ones by one 32-bit shared load
//   per register; m16n8k16 for f16/bf16, m16n8k8 for tf32; accumulator
//   rows g and g + 8 at columns 2t and 2t + 1. Small problems split K
//   (ContractionWriter::planSplits).
//
// The emulator runs nvvm.mma.sync and nvvm.ldmatrix as warp-collective
// calls and cp.async as an immediate copy (kiln-gpu-emulate-kernels), so
// these kernels are checked on the CPU too.
//
//===----------------------------------------------------------------------===//
#include "backends/gpu/ContractionKernels.h"
#include "backends/gpu/KernelBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::gpu_kernels;

namespace {
/// A block's output tile, its warps' arrangement and the k depth staged
/// per step.
struct MmaTiling {
  int64_t tileM, tileN, warpsM, warpsN, depth;
};

/// 128x128 tiles (8 warps of 64x32) when the problem fills a GPU's SMs
/// with them, else 64x64 (4 warps of 32x32) for more blocks. 32-deep steps
/// for 16-bit operands, 16 for tf32, so that the stages (MmaWriter::write)
/// fit 48 KiB of static shared memory.
MmaTiling chooseTiling(const Contraction &c, MmaOperand operand) {
  int64_t depth = operand == MmaOperand::TF32 ? 16 : 32;
  if (fillsGpuWithLargeTiles(c))
    return {128, 128, 2, 4, depth};
  return {64, 64, 2, 2, depth};
}

/// How a block moves one operand's slice (tile rows x depth) into a
/// shared-memory stage: each thread's loads, as (row, depth) of the slice.
/// Neighbouring threads run along the operand's contiguous dim so a warp's
/// loads coalesce. With `vec` > 1 the operand also has a plan of 16-byte
/// vector loads along that dim, used when the buffer turns out aligned at
/// run time (`aligned`); both plans move the same number of elements.
/// (Every buffer the runtime hands a kernel today, arena, weights or a
/// session's input and output buffers, is 64-byte aligned; the element
/// plan guards against views that would not be.)
struct Staging {
  /// kMajor: the stage is [depth][rows] (B when its n dim is contiguous),
  /// else [rows][depth].
  bool isA = true, depthFastest = true, kMajor = false;
  int64_t rows = 0, vec = 1;
  /// cp.async: the operand is already in the operand type and its chunks
  /// are contiguous in the stage; they go to shared memory without
  /// registers, into unpadded stages swizzled by 16-byte chunk.
  bool async = false;
  /// The stages' shape ([stages][rows][cols]).
  SmallVector<int64_t> shape;
  SmallVector<Value> scalarRows, scalarDepths, vectorRows, vectorDepths;
  Value buffer, aligned, shared;
  /// The buffer's aligned pointer, offset and strides (vector plans only).
  Value base, offset;
  SmallVector<Value> strides;
};

class MmaWriter : IndexMath {
public:
  MmaWriter(OpBuilder &b, Contraction &c, MmaOperand operand)
      : IndexMath{b, c.op.getLoc()}, w(b, c), c(c), operand(operand) {}
  void write();

private:
  Type elementType() {
    switch (operand) {
    case MmaOperand::F16:
      return b.getF16Type();
    case MmaOperand::BF16:
      return b.getBF16Type();
    case MmaOperand::TF32:
      return b.getF32Type();
    }
    return b.getF32Type();
  }
  /// `v` (f32) as stored in shared memory: narrowed, or rounded to tf32.
  Value toOperand(Value v);
  /// One element of a shared-memory stage as a tf32 operand register.
  Value word(Value shared, Value stage, Value row, Value col);
  /// The staging plan of A (`isA`) or B for tiling `t`: its static part,
  /// decided before the launch (layout, vector width, cp.async).
  Staging plan(bool isA, const MmaTiling &t, int64_t threads);
  /// The plan's per-thread positions and run-time alignment check, inside
  /// the launch.
  void place(Staging &s, const MmaTiling &t, int64_t threads, Value tid);
  /// Indices into `s.shared` of element (row, col) of stage `stage`: a
  /// swizzled stage XORs the 16-byte chunk of `col` with bits of `row`, so
  /// that an ldmatrix phase's 8 rows at one chunk fall in distinct banks.
  SmallVector<Value> at(const Staging &s, Value stage, Value row, Value col);
  /// The stage (row, col) of the plan's (tile row, depth).
  std::pair<Value, Value> stagePlace(const Staging &s, Value row, Value depth) {
    if (s.kMajor)
      return {depth, row};
    return {row, depth};
  }
  /// The global indices of the plan's element (row, depth) of the tile at
  /// (row0, k0), and whether it lies inside the problem (`ok`).
  SmallVector<Value> position(const Staging &s, ValueRange batch, Value row0,
                              Value k0, Value row, Value depth, Value &ok);
  /// An async plan's slice at depth k0 into stage `stage`: cp.async of
  /// each 16-byte chunk (zero-filled past the edges) when the buffer is
  /// aligned, else element loads stored directly.
  void issue(const Staging &s, ValueRange batch, Value row0, Value k0,
             Value stage);
  /// The operand's slice at depth k0 for the tile starting at row `row0`,
  /// as loaded (zeros past the edges), in the plan's order.
  SmallVector<Value> fetch(const Staging &s, ValueRange batch, Value row0,
                           Value k0);
  /// `values` from fetch, converted, into stage `stage` of `shared`.
  void store(const Staging &s, ArrayRef<Value> values, Value shared,
             Value stage);
  /// A loaded element as an operand: narrowed or rounded to tf32.
  Value convert(Value raw);

  /// The problem's bounds: rows (M), columns (N), and the end of the
  /// block's K range.
  Value kBound, mBound, nBound;
  ContractionWriter w;
  Contraction &c;
  MmaOperand operand;
};

Value MmaWriter::toOperand(Value v) {
  if (operand != MmaOperand::TF32)
    return arith::TruncFOp::create(b, loc, elementType(), v);
  // Round to nearest (ties away) at tf32's 10 mantissa bits.
  Type i32 = b.getI32Type();
  Value bits = arith::BitcastOp::create(b, loc, i32, v);
  Value rounded = arith::AndIOp::create(
      b, loc,
      arith::AddIOp::create(b, loc, bits,
                            arith::ConstantIntOp::create(b, loc, i32, 0x1000)),
      arith::ConstantIntOp::create(b, loc, i32, int64_t(0xFFFFE000)));
  // NaNs stay NaN (the GPU's canonical 0x7fffffff would carry over into
  // the sign bit).
  Value isNaN = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, v, v);
  return arith::SelectOp::create(
      b, loc, isNaN, v,
      arith::BitcastOp::create(b, loc, b.getF32Type(), rounded));
}

Value MmaWriter::word(Value shared, Value stage, Value row, Value col) {
  Value v = memref::LoadOp::create(b, loc, shared, ValueRange{stage, row, col});
  return arith::BitcastOp::create(b, loc, b.getI32Type(), v);
}

Value MmaWriter::convert(Value raw) {
  if (raw.getType() == elementType() && operand != MmaOperand::TF32)
    return raw;
  return toOperand(w.widen(raw));
}

/// Whether operand A (`isA`) or B of `c` has k as its innermost index.
bool depthFastest(const Contraction &c, bool isA) {
  auto dim =
      dyn_cast<AffineDimExpr>((isA ? c.mapA : c.mapB).getResults().back());
  return dim && !c.k.empty() && dim.getPosition() == c.k.back();
}

/// The elements per 16-byte load of an operand of `bits`-bit elements
/// staged for tiling `t`, or 1 (element loads): 16-byte loads run along
/// the contiguous dim when its extent is a multiple of the vector (a
/// vector never straddles a row or the edge) and every thread moves whole
/// vectors. A with contiguous m keeps element loads (its transposed stores
/// would put a warp's stores in one bank).
int64_t vectorWidth(const Contraction &c, bool isA, const MmaTiling &t,
                    int64_t threads, int64_t bits) {
  bool alongK = depthFastest(c, isA);
  if (isA && !alongK)
    return 1;
  ArrayRef<unsigned> fastDims = alongK ? c.k : isA ? c.m : c.n;
  auto last =
      dyn_cast<AffineDimExpr>((isA ? c.mapA : c.mapB).getResults().back());
  if (!last || fastDims.empty() || last.getPosition() != fastDims.back())
    return 1;
  int64_t vec = 128 / bits, rows = isA ? t.tileM : t.tileN;
  int64_t along = alongK ? t.depth : rows;
  if (ShapedType::isDynamic(c.loopSizes[fastDims.back()]) ||
      c.loopSizes[fastDims.back()] % vec != 0 || along % vec != 0 ||
      (rows * t.depth) % (threads * vec) != 0)
    return 1;
  return vec;
}

Staging MmaWriter::plan(bool isA, const MmaTiling &t, int64_t threads) {
  Staging s;
  s.isA = isA;
  s.rows = isA ? t.tileM : t.tileN;
  s.buffer = isA ? w.bufA : w.bufB;
  s.depthFastest = depthFastest(c, isA);
  // B with contiguous n is staged as it lies, [k][n], so that its rows
  // go to shared memory whole (a transposed store of consecutive n would
  // put a warp's stores in one bank); its fragments are then read as
  // single elements.
  s.kMajor = !isA && !s.depthFastest;
  Type element = w.elementType(s.buffer);
  s.vec = vectorWidth(c, isA, t, threads, element.getIntOrFloatBitWidth());
  // (The chunk is contiguous in the stage: k-contiguous rows, or a [k][n]
  // stage.)
  s.async =
      s.vec > 1 && operand != MmaOperand::TF32 && element == elementType();
  return s;
}

void MmaWriter::place(Staging &s, const MmaTiling &t, int64_t threads,
                      Value tid) {
  auto positions = [&](int64_t vec, SmallVector<Value> &rows,
                       SmallVector<Value> &depths) {
    int64_t count = s.rows * t.depth / (threads * vec);
    if (s.depthFastest) {
      int64_t across = t.depth / vec;
      for (int64_t e = 0; e < count; ++e) {
        depths.push_back(mul(rem(tid, across), vec));
        rows.push_back(add(div(tid, across), e * (threads / across)));
      }
      return;
    }
    int64_t across = s.rows / vec;
    for (int64_t e = 0; e < count; ++e) {
      rows.push_back(mul(rem(tid, across), vec));
      depths.push_back(add(div(tid, across), e * (threads / across)));
    }
  };
  positions(1, s.scalarRows, s.scalarDepths);
  if (s.vec == 1)
    return;
  positions(s.vec, s.vectorRows, s.vectorDepths);
  // At run time: the buffer's first element 16-byte aligned and every
  // row a whole number of vectors.
  auto isZero = [&](Value v) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, v,
                                 index(b, loc, 0));
  };
  s.base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, s.buffer);
  auto metadata = memref::ExtractStridedMetadataOp::create(b, loc, s.buffer);
  s.offset = metadata.getOffset();
  s.strides.assign(metadata.getStrides().begin(), metadata.getStrides().end());
  Value aligned = both(isZero(rem(s.base, 16)), isZero(rem(s.offset, s.vec)));
  for (Value stride : ArrayRef<Value>(s.strides).drop_back())
    aligned = both(aligned, isZero(rem(stride, s.vec)));
  s.aligned =
      both(aligned, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                          s.strides.back(), index(b, loc, 1)));
}

SmallVector<Value> MmaWriter::at(const Staging &s, Value stage, Value row,
                                 Value col) {
  if (!s.async)
    return {stage, row, col};
  // 16-bit elements: 8 per chunk. With 8 or more chunks per row the 8
  // rows of a phase XOR chunks with row % 8; with 4 (64-byte rows, two
  // to a 128-byte bank line) with (row / 2) % 4.
  int64_t chunks = s.shape.back() / 8;
  assert((chunks == 4 || chunks % 8 == 0) &&
         "the XOR keeps a chunk inside its row");
  Value mask;
  if (chunks >= 8)
    mask = rem(row, 8);
  else if (chunks == 4)
    mask = rem(div(row, 2), 4);
  else
    return {stage, row, col};
  Value chunk = arith::XOrIOp::create(b, loc, div(col, 8), mask);
  return {stage, row, add(mul(chunk, 8), rem(col, 8))};
}

SmallVector<Value> MmaWriter::position(const Staging &s, ValueRange batch,
                                       Value row0, Value k0, Value row,
                                       Value depth, Value &ok) {
  Value rowBound = s.isA ? mBound : nBound;
  Value r = arith::AddIOp::create(b, loc, row0, row);
  Value kk = arith::AddIOp::create(b, loc, k0, depth);
  ok = both(lessThan(b, loc, r, rowBound), lessThan(b, loc, kk, kBound));
  return s.isA ? w.indicesA(batch, r, kk) : w.indicesB(batch, kk, r);
}

SmallVector<Value> MmaWriter::fetch(const Staging &s, ValueRange batch,
                                    Value row0, Value k0) {
  auto position = [&](Value row, Value depth, Value &ok) {
    return this->position(s, batch, row0, k0, row, depth, ok);
  };
  Type element = w.elementType(s.buffer);
  Value zero = w.narrow(w.zero, element);
  auto scalars = [&]() {
    SmallVector<Value> values;
    for (auto [row, depth] : llvm::zip(s.scalarRows, s.scalarDepths)) {
      Value ok;
      SmallVector<Value> indices = position(row, depth, ok);
      values.push_back(guardedLoad(b, loc, s.buffer, indices, ok, zero));
    }
    return values;
  };
  if (s.vec == 1)
    return scalars();
  auto vectorType = VectorType::get({s.vec}, element);
  SmallVector<Type> types(s.scalarRows.size(), element);
  auto choice = scf::IfOp::create(b, loc, types, s.aligned,
                                  /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&choice.getThenRegion().front());
  SmallVector<Value> values;
  for (auto [row, depth] : llvm::zip(s.vectorRows, s.vectorDepths)) {
    Value ok;
    SmallVector<Value> indices = position(row, depth, ok);
    auto load = scf::IfOp::create(b, loc, TypeRange{vectorType}, ok,
                                  /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToStart(&load.getThenRegion().front());
      scf::YieldOp::create(
          b, loc,
          vector::LoadOp::create(b, loc, vectorType, s.buffer, indices,
                                 /*nontemporal=*/false, llvm::Align(16))
              .getResult());
      b.setInsertionPointToStart(&load.getElseRegion().front());
      scf::YieldOp::create(
          b, loc,
          vector::BroadcastOp::create(b, loc, vectorType, zero).getResult());
    }
    for (int64_t i = 0; i < s.vec; ++i)
      values.push_back(vector::ExtractOp::create(b, loc, load.getResult(0), i));
  }
  scf::YieldOp::create(b, loc, values);
  b.setInsertionPointToStart(&choice.getElseRegion().front());
  scf::YieldOp::create(b, loc, scalars());
  return SmallVector<Value>(choice.getResults());
}

void MmaWriter::store(const Staging &s, ArrayRef<Value> values, Value shared,
                      Value stage) {
  auto place = [&](Value row, Value depth) {
    auto [r, col] = stagePlace(s, row, depth);
    return this->at(s, stage, r, col);
  };
  auto scalars = [&]() {
    for (auto [value, row, depth] :
         llvm::zip(values, s.scalarRows, s.scalarDepths))
      memref::StoreOp::create(b, loc, convert(value), shared,
                              place(row, depth));
  };
  if (s.vec == 1)
    return scalars();
  auto choice = scf::IfOp::create(b, loc, s.aligned, /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&choice.getThenRegion().front());
  Type element = elementType();
  int64_t bytes = element.getIntOrFloatBitWidth() / 8;
  for (auto [chunk, row, depth] :
       llvm::enumerate(s.vectorRows, s.vectorDepths)) {
    SmallVector<Value> converted;
    for (int64_t i = 0; i < s.vec; ++i)
      converted.push_back(convert(values[chunk * s.vec + i]));
    // The chunk is contiguous in the stage too (k-contiguous rows, or a
    // [k][n] stage): one store.
    assert((s.depthFastest || s.kMajor) && "element loads only");
    Value chunkValue = vector::FromElementsOp::create(
        b, loc, VectorType::get({s.vec}, element), converted);
    vector::StoreOp::create(b, loc, chunkValue, shared, place(row, depth),
                            /*nontemporal=*/false, llvm::Align(s.vec * bytes));
  }
  b.setInsertionPointToStart(&choice.getElseRegion().front());
  scalars();
}

void MmaWriter::issue(const Staging &s, ValueRange batch, Value row0, Value k0,
                      Value stage) {
  auto choice = scf::IfOp::create(b, loc, s.aligned, /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&choice.getThenRegion().front());
  int64_t bytes = elementType().getIntOrFloatBitWidth() / 8;
  for (auto [row, depth] : llvm::zip(s.vectorRows, s.vectorDepths)) {
    Value ok;
    SmallVector<Value> indices = position(s, batch, row0, k0, row, depth, ok);
    auto [r, col] = stagePlace(s, row, depth);
    copyChunkAsync(b, loc, s.base, s.offset, s.strides, indices, bytes, ok,
                   sharedPointer(b, loc, s.shared, at(s, stage, r, col)));
  }
  // Unaligned: the same chunks, gathered element by element (the chunk's
  // shared position is computed once, as in the cp.async plan).
  b.setInsertionPointToStart(&choice.getElseRegion().front());
  Type element = elementType();
  Value zero = w.narrow(w.zero, element);
  for (auto [row, depth] : llvm::zip(s.vectorRows, s.vectorDepths)) {
    SmallVector<Value> chunk;
    for (int64_t i = 0; i < s.vec; ++i) {
      Value ok;
      SmallVector<Value> indices =
          s.depthFastest ? position(s, batch, row0, k0, row, add(depth, i), ok)
                         : position(s, batch, row0, k0, add(row, i), depth, ok);
      chunk.push_back(guardedLoad(b, loc, s.buffer, indices, ok, zero));
    }
    auto [r, col] = stagePlace(s, row, depth);
    vector::StoreOp::create(
        b, loc,
        vector::FromElementsOp::create(
            b, loc, VectorType::get({s.vec}, element), chunk),
        s.shared, at(s, stage, r, col), /*nontemporal=*/false, llvm::Align(16));
  }
}

void MmaWriter::write() {
  Type element = elementType();
  const MmaTiling t = chooseTiling(c, operand);
  const int64_t threads = 32 * t.warpsM * t.warpsN;
  const int64_t warpTileM = t.tileM / t.warpsM, warpTileN = t.tileN / t.warpsN;
  const int64_t tilesM = warpTileM / 16, tilesN = warpTileN / 8;
  const int64_t step = operand == MmaOperand::TF32 ? 8 : 16;
  w.planSplits(t.tileM, t.tileN, t.depth);
  Staging planA = plan(/*isA=*/true, t, threads);
  Staging planB = plan(/*isA=*/false, t, threads);
  const bool bKMajor = planB.kMajor;
  // Register stages: rows padded so that the 8 rows an ldmatrix phase
  // reads (or a tf32 warp's fragment loads, row g, word t) fall in
  // different banks, and every row starts 16-byte aligned: a [rows][k]
  // row is 20 words either way, a [k][n] row 8 elements longer than the
  // tile. cp.async stages are unpadded (swizzled, MmaWriter::at), as many
  // as fit 48 KiB of static shared memory, up to 4 (three 128x128 ones
  // take all 48 KiB: this kernel has no other shared memory).
  const int64_t pad = operand == MmaOperand::TF32 ? 4 : 8;
  const int64_t bytes = element.getIntOrFloatBitWidth() / 8;
  auto stageShape = [&](const Staging &s, int64_t stages) {
    if (s.kMajor)
      return SmallVector<int64_t>{stages, t.depth, s.rows + (s.async ? 0 : 8)};
    return SmallVector<int64_t>{stages, s.rows, t.depth + (s.async ? 0 : pad)};
  };
  const bool anyAsync = planA.async || planB.async;
  const bool anyRegisters = !planA.async || !planB.async;
  int64_t stages = 2;
  for (int64_t n = anyAsync ? 4 : 2; n >= 2; --n) {
    int64_t total = 0;
    for (Staging *s : {&planA, &planB}) {
      SmallVector<int64_t> shape = stageShape(*s, s->async ? n : 2);
      total += shape[0] * shape[1] * shape[2] * bytes;
    }
    stages = n;
    if (total <= 48 * 1024)
      break;
  }
  for (Staging *s : {&planA, &planB})
    s->shape = stageShape(*s, s->async ? stages : 2);
  gpu::LaunchOp launch =
      createLaunch(b, loc, w.grid(t.tileM, t.tileN), {threads},
                   {workgroupMemRef(planA.shape, element),
                    workgroupMemRef(planB.shape, element)});
  Value sharedA = planA.shared = launch.getWorkgroupAttributions()[0];
  Value sharedB = planB.shared = launch.getWorkgroupAttributions()[1];
  Value tid = launch.getThreadIds().x;
  Value m0 = mul(launch.getBlockIds().y, t.tileM);
  Value n0 = mul(launch.getBlockIds().x, t.tileN);
  Value blockZ = launch.getBlockIds().z;
  SmallVector<Value> batch = w.batchIndices(blockZ);
  Value kBegin;
  std::tie(kBegin, kBound) = w.kRange(blockZ);
  mBound = w.extentM;
  nBound = index(b, loc, w.sizeN);
  place(planA, t, threads, tid);
  place(planB, t, threads, tid);
  // The k of step `s`.
  auto depthOf = [&](Value s) {
    return arith::AddIOp::create(b, loc, kBegin, mul(s, t.depth)).getResult();
  };
  // The register operands' slice at step `s`, and its store into
  // register stage `at`.
  auto fetch = [&](Value s) {
    SmallVector<Value> values;
    if (!planA.async)
      values = this->fetch(planA, batch, m0, depthOf(s));
    if (!planB.async)
      values.append(this->fetch(planB, batch, n0, depthOf(s)));
    return values;
  };
  auto stage = [&](ArrayRef<Value> values, Value at) {
    size_t countA = planA.async ? 0 : t.tileM * t.depth / threads;
    if (!planA.async)
      store(planA, values.take_front(countA), sharedA, at);
    if (!planB.async)
      store(planB, values.drop_front(countA), sharedB, at);
  };
  // The cp.async operands' slice at step `s` into stage s % stages, as
  // one group.
  auto issueAll = [&](Value s) {
    Value at = rem(s, stages);
    if (planA.async)
      issue(planA, batch, m0, depthOf(s), at);
    if (planB.async)
      issue(planB, batch, n0, depthOf(s), at);
    NVVM::CpAsyncCommitGroupOp::create(b, loc);
  };

  Value warp = div(tid, 32), lane = rem(tid, 32);
  Value group = div(lane, 4), thread = rem(lane, 4);
  Value warpM = mul(div(warp, t.warpsN), warpTileM);
  Value warpN = mul(rem(warp, t.warpsN), warpTileN);
  // f16/bf16 fragments come by ldmatrix.x4: lane l gives row l % 8 of
  // matrix l / 8. A's four matrices are a 16x16 tile's quarters (rows +8
  // for odd matrices, k +8 for the last two), B's two n8 tiles' k halves.
  const bool useLdMatrix = operand != MmaOperand::TF32;
  assert((!useLdMatrix || tilesN % 2 == 0) &&
         "ldmatrix.x4 reads B two tiles at a time");
  Value quad = div(lane, 8), eighth = rem(lane, 8);
  Value ldRowA = add(warpM, add(eighth, mul(rem(quad, 2), 8)));
  Value ldDepthA = mul(div(quad, 2), 8);
  // [n][k] B: rows n (+8 for the second tile), k +8 for odd matrices;
  // [k][n] B, transposed: rows k (+8 for odd matrices), n +8 likewise.
  Value ldRowB = bKMajor ? add(eighth, mul(rem(quad, 2), 8))
                         : add(warpN, add(eighth, mul(div(quad, 2), 8)));
  Value ldColB =
      bKMajor ? add(warpN, mul(div(quad, 2), 8)) : mul(rem(quad, 2), 8);

  // The first stages - 1 slices of the cp.async operands in flight, the
  // first of the register ones stored.
  for (int64_t s = 0; anyAsync && s < stages - 1; ++s)
    issueAll(index(b, loc, s));
  if (anyRegisters)
    stage(fetch(index(b, loc, 0)), index(b, loc, 0));

  // One barrier per step, after which this step's slice is in shared
  // memory and every warp is done with the last step's stages: the
  // cp.async slice `stages - 1` steps ahead goes into the stage the last
  // step read, the register operands' next slice is fetched before the
  // products and stored into their other stage after them.
  SmallVector<Value> initAcc(tilesM * tilesN * 4, w.initialAccumulator());
  // (Every slice of a split K takes sliceK / depth steps; the last one
  // may hold less of K, and its steps past K fetch zeros.)
  int64_t steps =
      w.splits > 1 ? w.sliceK / t.depth : llvm::divideCeil(w.sizeK, t.depth);
  auto kLoop =
      scf::ForOp::create(b, loc, index(b, loc, 0), index(b, loc, steps),
                         index(b, loc, 1), initAcc);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(kLoop.getBody());
    Value s = kLoop.getInductionVar();
    if (anyAsync)
      NVVM::CpAsyncWaitGroupOp::create(b, loc, stages - 2);
    gpu::BarrierOp::create(b, loc);
    if (anyAsync)
      issueAll(add(s, stages - 1));
    SmallVector<Value> next;
    if (anyRegisters)
      next = fetch(add(s, 1));
    Value currentA = rem(s, planA.shape[0]), currentB = rem(s, planB.shape[0]);

    SmallVector<Value> acc(kLoop.getRegionIterArgs());
    for (int64_t k = 0; k < t.depth; k += step) {
      SmallVector<SmallVector<Value>> bFrags;
      for (int64_t j = 0; useLdMatrix && j < tilesN; j += 2) {
        SmallVector<Value> words =
            bKMajor ? ldMatrixX4(b, loc, operand, sharedB,
                                 at(planB, currentB, add(ldRowB, k),
                                    add(ldColB, 8 * j)),
                                 /*transpose=*/true)
                    : ldMatrixX4(b, loc, operand, sharedB,
                                 at(planB, currentB, add(ldRowB, 8 * j),
                                    add(ldColB, k)),
                                 /*transpose=*/false);
        bFrags.push_back({words[0], words[1]});
        bFrags.push_back({words[2], words[3]});
      }
      // tf32 (32-bit elements, no ldmatrix): one shared load per register.
      for (int64_t j = 0; !useLdMatrix && j < tilesN; ++j) {
        Value n = add(arith::AddIOp::create(b, loc, warpN, group), 8 * j);
        Value depth = add(thread, k);
        if (bKMajor)
          bFrags.push_back({word(sharedB, currentB, depth, n),
                            word(sharedB, currentB, add(depth, 4), n)});
        else
          bFrags.push_back({word(sharedB, currentB, n, depth),
                            word(sharedB, currentB, n, add(depth, 4))});
      }
      for (int64_t i = 0; i < tilesM; ++i) {
        SmallVector<Value> a;
        if (useLdMatrix) {
          a = ldMatrixX4(
              b, loc, operand, sharedA,
              at(planA, currentA, add(ldRowA, 16 * i), add(ldDepthA, k)),
              /*transpose=*/false);
        } else {
          Value r = add(arith::AddIOp::create(b, loc, warpM, group), 16 * i);
          Value r8 = add(r, 8);
          Value col = add(thread, k);
          a = {word(sharedA, currentA, r, col),
               word(sharedA, currentA, r8, col),
               word(sharedA, currentA, r, add(col, 4)),
               word(sharedA, currentA, r8, add(col, 4))};
        }
        for (int64_t j = 0; j < tilesN; ++j) {
          int64_t at = (i * tilesN + j) * 4;
          SmallVector<Value> d =
              mmaSync(b, loc, operand, a, bFrags[j],
                      ArrayRef<Value>(acc).slice(at, 4), step);
          std::copy(d.begin(), d.end(), acc.begin() + at);
        }
      }
    }
    if (anyRegisters)
      stage(next, rem(add(s, 1), 2));
    scf::YieldOp::create(b, loc, acc);
  }
  // No copies left in flight past the loop (the last groups are zeros).
  if (anyAsync)
    NVVM::CpAsyncWaitGroupOp::create(b, loc, 0);

  // Accumulator (i, j, e): row g (+8 for e >= 2), column 2t (+1 for odd e).
  for (int64_t i = 0; i < tilesM; ++i)
    for (int64_t j = 0; j < tilesN; ++j)
      for (int64_t e = 0; e < 4; ++e) {
        Value m =
            add(arith::AddIOp::create(
                    b, loc, m0, arith::AddIOp::create(b, loc, warpM, group)),
                16 * i + (e >= 2 ? 8 : 0));
        Value n = add(arith::AddIOp::create(
                          b, loc, n0,
                          arith::AddIOp::create(b, loc, warpN, mul(thread, 2))),
                      8 * j + (e % 2));
        auto guard = scf::IfOp::create(
            b, loc,
            both(lessThan(b, loc, m, mBound), lessThan(b, loc, n, nBound)),
            /*withElseRegion=*/false);
        OpBuilder::InsertionGuard insideGuard(b);
        b.setInsertionPointToStart(&guard.getThenRegion().front());
        w.storeAccumulator(blockZ, batch, m, n,
                           kLoop.getResult((i * tilesN + j) * 4 + e));
      }
  w.finish(launch);
}
} // namespace

Value gpu_kernels::elementPointer(OpBuilder &b, Location loc, Value base,
                                  Value offset, ArrayRef<Value> strides,
                                  ValueRange indices, int64_t bytes,
                                  unsigned addressSpace) {
  Value linear = offset;
  for (auto [stride, at] : llvm::zip(strides, indices))
    linear = arith::AddIOp::create(b, loc, linear,
                                   arith::MulIOp::create(b, loc, at, stride));
  Value address = arith::AddIOp::create(
      b, loc, base,
      arith::MulIOp::create(b, loc, linear, index(b, loc, bytes)));
  Value asInt =
      arith::IndexCastUIOp::create(b, loc, b.getI64Type(), address).getResult();
  MLIRContext *ctx = b.getContext();
  if (addressSpace == 3)
    return LLVM::IntToPtrOp::create(b, loc, LLVM::LLVMPointerType::get(ctx, 3),
                                    ValueRange{asInt});
  // A global buffer's generic address, cast to the global window.
  Value generic = LLVM::IntToPtrOp::create(
      b, loc, LLVM::LLVMPointerType::get(ctx), ValueRange{asInt});
  return LLVM::AddrSpaceCastOp::create(
      b, loc, LLVM::LLVMPointerType::get(ctx, addressSpace), generic);
}

Value gpu_kernels::sharedPointer(OpBuilder &b, Location loc, Value shared,
                                 ValueRange indices) {
  // The stage's strides are static.
  auto type = cast<MemRefType>(shared.getType());
  auto [strides, offset] = type.getStridesAndOffset();
  assert(!ShapedType::isDynamic(offset) &&
         llvm::none_of(strides, ShapedType::isDynamic) &&
         "a stage has a static layout");
  SmallVector<Value> strideValues;
  for (int64_t stride : strides)
    strideValues.push_back(index(b, loc, stride));
  return elementPointer(
      b, loc, memref::ExtractAlignedPointerAsIndexOp::create(b, loc, shared),
      index(b, loc, offset), strideValues, indices,
      type.getElementTypeBitWidth() / 8, /*addressSpace=*/3);
}

void gpu_kernels::copyChunkAsync(OpBuilder &b, Location loc, Value base,
                                 Value offset, ArrayRef<Value> strides,
                                 ValueRange indices, int64_t bytes, Value ok,
                                 Value target) {
  // Past the edges: no bytes read (the chunk is zero-filled), from the
  // buffer's start rather than an address outside it.
  SmallVector<Value> inside;
  for (Value i : indices)
    inside.push_back(arith::SelectOp::create(b, loc, ok, i, index(b, loc, 0)));
  Value source = elementPointer(b, loc, base, offset, strides, inside, bytes,
                                /*addressSpace=*/1);
  Type i32 = b.getI32Type();
  Value size = arith::SelectOp::create(
      b, loc, ok, arith::ConstantIntOp::create(b, loc, i32, 16),
      arith::ConstantIntOp::create(b, loc, i32, 0));
  NVVM::CpAsyncOp::create(b, loc, target, source, 16,
                          NVVM::LoadCacheModifierKind::CG, size);
}

bool gpu_kernels::takesCpAsync(const Contraction &c, bool isA) {
  MmaTiling t = chooseTiling(c, MmaOperand::BF16);
  return vectorWidth(c, isA, t, 32 * t.warpsM * t.warpsN, /*bits=*/16) > 1;
}

bool gpu_kernels::fillsGpuWithLargeTiles(const Contraction &c) {
  // Run-time rows may be few (a batch of one short sequence): the small
  // tiles fill a GPU from fewer rows.
  if (c.runTimeRows())
    return false;
  return llvm::divideCeil(c.size(c.m), 128) *
             llvm::divideCeil(c.size(c.n), 128) * c.size(c.batch) >=
         96;
}

SmallVector<Value> gpu_kernels::mmaSync(OpBuilder &b, Location loc,
                                        MmaOperand operand, ValueRange a,
                                        ValueRange bFragment, ValueRange acc,
                                        int64_t k) {
  MLIRContext *ctx = b.getContext();
  Type f32 = b.getF32Type();
  auto resultType = LLVM::LLVMStructType::getLiteral(ctx, {f32, f32, f32, f32});
  NVVM::MMATypes type = operand == MmaOperand::F16    ? NVVM::MMATypes::f16
                        : operand == MmaOperand::BF16 ? NVVM::MMATypes::bf16
                                                      : NVVM::MMATypes::tf32;
  auto op = NVVM::MmaOp::create(
      b, loc, resultType, a, bFragment, acc, ArrayRef<int64_t>{16, 8, k},
      std::nullopt, std::nullopt, std::array<NVVM::MMATypes, 2>{type, type},
      std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                     NVVM::MMALayout::col});
  SmallVector<Value> d;
  for (int64_t i = 0; i < 4; ++i)
    d.push_back(LLVM::ExtractValueOp::create(b, loc, op, i));
  return d;
}

Value gpu_kernels::mmaRegister(OpBuilder &b, Location loc, MmaOperand operand,
                               Value pair) {
  if (operand == MmaOperand::F16)
    return pair;
  // bf16 pairs travel as one i32 register.
  Value asWord = vector::BitCastOp::create(
      b, loc, VectorType::get({1}, b.getI32Type()), pair);
  return vector::ExtractOp::create(b, loc, asWord, ArrayRef<int64_t>{0});
}

SmallVector<Value> gpu_kernels::ldMatrixX4(OpBuilder &b, Location loc,
                                           MmaOperand operand, Value shared,
                                           ValueRange indices, bool transpose) {
  Value pointer = sharedPointer(b, loc, shared, indices);
  MLIRContext *ctx = b.getContext();
  Type i32 = b.getI32Type();
  auto load = NVVM::LdMatrixOp::create(
      b, loc, LLVM::LLVMStructType::getLiteral(ctx, {i32, i32, i32, i32}),
      pointer, /*num=*/4,
      transpose ? NVVM::MMALayout::col : NVVM::MMALayout::row,
      NVVM::LdStMatrixShapeAttr::get(ctx, 8, 8), NVVM::LdStMatrixEltType::B16);
  SmallVector<Value> registers;
  for (int64_t i = 0; i < 4; ++i) {
    Value word = LLVM::ExtractValueOp::create(b, loc, load, i);
    if (operand == MmaOperand::F16)
      word = vector::BitCastOp::create(
          b, loc, VectorType::get({2}, b.getF16Type()),
          vector::BroadcastOp::create(b, loc, VectorType::get({1}, i32), word));
    registers.push_back(word);
  }
  return registers;
}

void gpu_kernels::writeMmaKernel(OpBuilder &b, Contraction &c,
                                 MmaOperand operand) {
  MmaWriter(b, c, operand).write();
}
