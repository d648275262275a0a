//===- ContractionMfma.cpp - AMD matrix-core (MFMA) contraction kernels ---===//
//
// The contraction kernel for AMD Instinct GPUs: the same match, loads and
// epilogue as the SIMT kernel, with the products on the matrix cores
// (amdgpu.mfma, f32 accumulation):
//
//   grid (ceil(N/64), ceil(M/64), batch), 256 threads = 4 waves of 64, a
//   64x64 block tile; per 16-deep K step the block stages A (64x16) and B
//   (16x64) in LDS in the operand type, then each wave computes its 32x32
//   quarter as 2x2 MFMA tiles of 16x16: one 16x16x16 for f16/bf16, four
//   16x16x4 for f32. Fragments follow the CDNA register layout for lane
//   L: A row L%16 and B column L%16, each at k = kpl*(L/16) + e for the
//   lane's kpl = K/4 elements; accumulator element e at row 4*(L/16) + e,
//   column L%16.
//
// fp32 models use the f32 MFMA (full f32 products, as rocBLAS does); tf32
// computes as fp32 (gfx90a has no reduced-precision f32 MFMA). The emulator
// runs amdgpu.mfma as a wave-collective call (kiln-gpu-emulate-kernels).
//
//===----------------------------------------------------------------------===//
#include "backends/gpu/ContractionKernels.h"
#include "backends/gpu/KernelBuilder.h"

#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::gpu_kernels;

namespace {
constexpr int64_t kTile = 64, kDepth = 16, kThreads = 256, kWave = 64;
constexpr int64_t kWaveTile = 32, kTiles = 2; // 2x2 MFMA tiles per wave

class MfmaWriter : IndexMath {
public:
  MfmaWriter(OpBuilder &b, Contraction &c, MfmaOperand operand)
      : IndexMath{b, c.op.getLoc()}, w(b, c), c(c), operand(operand) {}
  void write();

private:
  Type elementType() { return mfmaElementType(b, operand); }
  /// Elements of A or B one lane holds per MFMA (K / 4).
  int64_t perLane() { return mfmaPerLane(operand); }
  /// The MFMA's depth.
  int64_t depth() { return 4 * perLane(); }
  /// The lane's A or B operand: `perLane()` elements of `shared` at
  /// (rows[e], cols[e]).
  Value fragment(Value shared, ArrayRef<Value> rows, ArrayRef<Value> cols);

  ContractionWriter w;
  Contraction &c;
  MfmaOperand operand;
};

Value MfmaWriter::fragment(Value shared, ArrayRef<Value> rows,
                           ArrayRef<Value> cols) {
  SmallVector<Value> elements;
  for (auto [row, col] : llvm::zip(rows, cols))
    elements.push_back(
        memref::LoadOp::create(b, loc, shared, ValueRange{row, col}));
  if (elements.size() == 1)
    return elements.front();
  return vector::FromElementsOp::create(
      b, loc, VectorType::get({int64_t(elements.size())}, elementType()),
      elements);
}

void MfmaWriter::write() {
  Type element = elementType();
  // Rows padded by 4 elements so a wave's column reads of A spread over
  // the LDS banks.
  MemRefType tileA = workgroupMemRef({kTile, kDepth + 4}, element);
  MemRefType tileB = workgroupMemRef({kDepth, kTile + 4}, element);
  gpu::LaunchOp launch =
      createLaunch(b, loc, w.grid(kTile, kTile), {kThreads}, {tileA, tileB});
  Value sharedA = launch.getWorkgroupAttributions()[0];
  Value sharedB = launch.getWorkgroupAttributions()[1];
  Value tid = launch.getThreadIds().x;
  Value m0 = mul(launch.getBlockIds().y, kTile);
  Value n0 = mul(launch.getBlockIds().x, kTile);
  SmallVector<Value> batch = w.batchIndices(launch.getBlockIds().z);
  Value mBound = w.extentM, nBound = index(b, loc, w.sizeN),
        kBound = index(b, loc, w.sizeK);

  Value wave = div(tid, kWave), lane = rem(tid, kWave);
  Value lane16 = rem(lane, 16), quad = div(lane, 16);
  Value waveM = mul(div(wave, 2), kWaveTile);
  Value waveN = mul(rem(wave, 2), kWaveTile);

  SmallVector<Value> initAcc(kTiles * kTiles * 4,
                             c.fillValue ? w.widen(c.fillValue) : w.zero);
  auto kLoop = scf::ForOp::create(b, loc, index(b, loc, 0), kBound,
                                  index(b, loc, kDepth), initAcc);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(kLoop.getBody());
    Value k0 = kLoop.getInductionVar();
    // A: 4 threads per row, 4 consecutive k each.
    Value aRow = div(tid, 4), aCol0 = mul(rem(tid, 4), 4);
    Value m = add(m0, aRow);
    for (int64_t e = 0; e < 4; ++e) {
      Value col = add(aCol0, e);
      Value kk = add(k0, col);
      Value ok =
          both(lessThan(b, loc, m, mBound), lessThan(b, loc, kk, kBound));
      memref::StoreOp::create(b, loc,
                              w.narrow(w.loadA(batch, m, kk, ok), element),
                              sharedA, ValueRange{aRow, col});
    }
    // B: 16 threads per k row, 4 consecutive n each.
    Value bRow = div(tid, 16), bCol0 = mul(rem(tid, 16), 4);
    Value kk = add(k0, bRow);
    for (int64_t e = 0; e < 4; ++e) {
      Value col = add(bCol0, e);
      Value n = add(n0, col);
      Value ok =
          both(lessThan(b, loc, kk, kBound), lessThan(b, loc, n, nBound));
      memref::StoreOp::create(b, loc,
                              w.narrow(w.loadB(batch, kk, n, ok), element),
                              sharedB, ValueRange{bRow, col});
    }
    gpu::BarrierOp::create(b, loc);

    SmallVector<Value> acc(kLoop.getRegionIterArgs());
    auto accType = VectorType::get({4}, b.getF32Type());
    for (int64_t k = 0; k < kDepth; k += depth()) {
      // This lane's k values within the step.
      SmallVector<Value> ks;
      for (int64_t e = 0; e < perLane(); ++e)
        ks.push_back(add(mul(quad, perLane()), k + e));
      for (int64_t i = 0; i < kTiles; ++i) {
        Value row = add(add(waveM, lane16), 16 * i);
        Value a = fragment(sharedA, SmallVector<Value>(ks.size(), row), ks);
        for (int64_t j = 0; j < kTiles; ++j) {
          Value col = add(add(waveN, lane16), 16 * j);
          Value bFrag =
              fragment(sharedB, ks, SmallVector<Value>(ks.size(), col));
          int64_t at = (i * kTiles + j) * 4;
          Value cIn = vector::FromElementsOp::create(
              b, loc, accType, ArrayRef<Value>(acc).slice(at, 4));
          Value d = amdgpu::MFMAOp::create(b, loc, 16, 16, depth(),
                                           /*blocks=*/1, a, bFrag, cIn);
          for (int64_t e = 0; e < 4; ++e)
            acc[at + e] =
                vector::ExtractOp::create(b, loc, d, ArrayRef<int64_t>{e});
        }
      }
    }
    gpu::BarrierOp::create(b, loc);
    scf::YieldOp::create(b, loc, acc);
  }

  // Accumulator (i, j, e): row 4 * (L / 16) + e, column L % 16.
  for (int64_t i = 0; i < kTiles; ++i)
    for (int64_t j = 0; j < kTiles; ++j)
      for (int64_t e = 0; e < 4; ++e) {
        Value m = add(add(m0, add(waveM, mul(quad, 4))), 16 * i + e);
        Value n = add(add(n0, add(waveN, lane16)), 16 * j);
        auto guard = scf::IfOp::create(
            b, loc,
            both(lessThan(b, loc, m, mBound), lessThan(b, loc, n, nBound)),
            /*withElseRegion=*/false);
        OpBuilder::InsertionGuard insideGuard(b);
        b.setInsertionPointToStart(&guard.getThenRegion().front());
        w.storeResult(batch, m, n, kLoop.getResult((i * kTiles + j) * 4 + e));
      }
  w.finish(launch);
}
} // namespace

void gpu_kernels::writeMfmaKernel(OpBuilder &b, Contraction &c,
                                  MfmaOperand operand) {
  MfmaWriter(b, c, operand).write();
}
