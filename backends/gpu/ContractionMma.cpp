//===- ContractionMma.cpp - Tensor-core (mma.sync) contraction kernels ----===//
//
// The contraction kernel for --gpu-precision=tf32|bf16|fp16: the same match,
// loads and epilogue as the SIMT kernel, with the products on tensor cores
// (PTX mma.sync, f32 accumulation):
//
//   grid (ceil(N/64), ceil(M/64), batch), 128 threads = 4 warps, a 64x64
//   block tile; per 16-deep K step the block stages A (64x16) and B (16x64)
//   in shared memory converted to the operand type (f16, bf16, or f32
//   rounded to tf32), then each warp computes its 32x32 quarter as 2x4 mma
//   tiles of 16x8: m16n8k16 for f16/bf16, two m16n8k8 for tf32. Operand
//   fragments are read from shared memory in the layout the PTX ISA gives
//   for each lane (group g = lane / 4, thread t = lane % 4): A rows g and
//   g + 8, B column g, accumulator rows g and g + 8 at columns 2t and 2t+1.
//
// The emulator runs nvvm.mma.sync as a warp-collective call
// (kiln-gpu-emulate-kernels), so these kernels are checked on the CPU too.
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
constexpr int64_t kTile = 64, kDepth = 16, kThreads = 128, kWarpTile = 32;
constexpr int64_t kTilesM = 2, kTilesN = 4; // 16x8 mma tiles per warp

class MmaWriter {
public:
  MmaWriter(OpBuilder &b, Contraction &c, MmaOperand operand)
      : w(b, c), b(b), c(c), operand(operand), loc(w.loc) {}
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
  /// Two shared-memory elements as one 32-bit operand register.
  Value pack(Value shared, Value r0, Value c0, Value r1, Value c1);
  /// One element as a tf32 operand register.
  Value word(Value shared, Value row, Value col);
  SmallVector<Value> mma(ValueRange a, ValueRange bFrag, ValueRange acc,
                         int64_t k);

  ContractionWriter w;
  OpBuilder &b;
  Contraction &c;
  MmaOperand operand;
  Location loc;
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

Value MmaWriter::pack(Value shared, Value r0, Value c0, Value r1, Value c1) {
  Value lo = memref::LoadOp::create(b, loc, shared, ValueRange{r0, c0});
  Value hi = memref::LoadOp::create(b, loc, shared, ValueRange{r1, c1});
  auto pairType = VectorType::get({2}, elementType());
  Value pair =
      vector::FromElementsOp::create(b, loc, pairType, ValueRange{lo, hi});
  if (operand == MmaOperand::F16)
    return pair;
  // bf16 pairs travel as one i32 register.
  Value asWord = vector::BitCastOp::create(
      b, loc, VectorType::get({1}, b.getI32Type()), pair);
  return vector::ExtractOp::create(b, loc, asWord, ArrayRef<int64_t>{0});
}

Value MmaWriter::word(Value shared, Value row, Value col) {
  Value v = memref::LoadOp::create(b, loc, shared, ValueRange{row, col});
  return arith::BitcastOp::create(b, loc, b.getI32Type(), v);
}

SmallVector<Value> MmaWriter::mma(ValueRange a, ValueRange bFrag,
                                  ValueRange acc, int64_t k) {
  MLIRContext *ctx = b.getContext();
  Type f32 = b.getF32Type();
  auto resultType = LLVM::LLVMStructType::getLiteral(ctx, {f32, f32, f32, f32});
  NVVM::MMATypes type = operand == MmaOperand::F16    ? NVVM::MMATypes::f16
                        : operand == MmaOperand::BF16 ? NVVM::MMATypes::bf16
                                                      : NVVM::MMATypes::tf32;
  auto op = NVVM::MmaOp::create(
      b, loc, resultType, a, bFrag, acc, ArrayRef<int64_t>{16, 8, k},
      std::nullopt, std::nullopt, std::array<NVVM::MMATypes, 2>{type, type},
      std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                     NVVM::MMALayout::col});
  SmallVector<Value> d;
  for (int64_t i = 0; i < 4; ++i)
    d.push_back(LLVM::ExtractValueOp::create(b, loc, op, i));
  return d;
}

void MmaWriter::write() {
  Type element = elementType();
  // Rows padded by 8 elements: fragment reads of neighbouring groups fall
  // in different banks.
  MemRefType tileA = workgroupMemRef({kTile, kDepth + 8}, element);
  MemRefType tileB = workgroupMemRef({kDepth, kTile + 8}, element);
  gpu::LaunchOp launch =
      createLaunch(b, loc, w.grid(kTile, kTile), {kThreads}, {tileA, tileB});
  Value sharedA = launch.getWorkgroupAttributions()[0];
  Value sharedB = launch.getWorkgroupAttributions()[1];
  Value tid = launch.getThreadIds().x;
  Value m0 = arith::MulIOp::create(b, loc, launch.getBlockIds().y,
                                   index(b, loc, kTile));
  Value n0 = arith::MulIOp::create(b, loc, launch.getBlockIds().x,
                                   index(b, loc, kTile));
  SmallVector<Value> batch = w.batchIndices(launch.getBlockIds().z);
  Value mBound = index(b, loc, w.sizeM), nBound = index(b, loc, w.sizeN),
        kBound = index(b, loc, w.sizeK);
  auto add = [&](Value x, int64_t y) -> Value {
    return y == 0 ? x : arith::AddIOp::create(b, loc, x, index(b, loc, y));
  };
  auto mul = [&](Value x, int64_t y) -> Value {
    return arith::MulIOp::create(b, loc, x, index(b, loc, y));
  };
  auto both = [&](Value p, Value q) -> Value {
    return arith::AndIOp::create(b, loc, p, q);
  };
  auto div = [&](Value x, int64_t y) -> Value {
    return arith::DivUIOp::create(b, loc, x, index(b, loc, y));
  };
  auto rem = [&](Value x, int64_t y) -> Value {
    return arith::RemUIOp::create(b, loc, x, index(b, loc, y));
  };

  Value warp = div(tid, 32), lane = rem(tid, 32);
  Value group = div(lane, 4), thread = rem(lane, 4);
  Value warpM = mul(div(warp, 2), kWarpTile);
  Value warpN = mul(rem(warp, 2), kWarpTile);

  SmallVector<Value> initAcc(kTilesM * kTilesN * 4,
                             c.fillValue ? w.widen(c.fillValue) : w.zero);
  auto kLoop = scf::ForOp::create(b, loc, index(b, loc, 0), kBound,
                                  index(b, loc, kDepth), initAcc);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(kLoop.getBody());
    Value k0 = kLoop.getInductionVar();
    // A: 2 threads per row, 8 consecutive k each.
    Value aRow = div(tid, 2), aCol0 = mul(rem(tid, 2), 8);
    Value m = arith::AddIOp::create(b, loc, m0, aRow);
    for (int64_t e = 0; e < 8; ++e) {
      Value col = add(aCol0, e);
      Value kk = arith::AddIOp::create(b, loc, k0, col);
      Value ok =
          both(lessThan(b, loc, m, mBound), lessThan(b, loc, kk, kBound));
      memref::StoreOp::create(b, loc, toOperand(w.loadA(batch, m, kk, ok)),
                              sharedA, ValueRange{aRow, col});
    }
    // B: 8 threads per k row, 8 consecutive n each.
    Value bRow = div(tid, 8), bCol0 = mul(rem(tid, 8), 8);
    Value kk = arith::AddIOp::create(b, loc, k0, bRow);
    for (int64_t e = 0; e < 8; ++e) {
      Value col = add(bCol0, e);
      Value n = arith::AddIOp::create(b, loc, n0, col);
      Value ok =
          both(lessThan(b, loc, kk, kBound), lessThan(b, loc, n, nBound));
      memref::StoreOp::create(b, loc, toOperand(w.loadB(batch, kk, n, ok)),
                              sharedB, ValueRange{bRow, col});
    }
    gpu::BarrierOp::create(b, loc);

    SmallVector<Value> acc(kLoop.getRegionIterArgs());
    int64_t step = operand == MmaOperand::TF32 ? 8 : 16;
    for (int64_t k = 0; k < kDepth; k += step) {
      for (int64_t i = 0; i < kTilesM; ++i) {
        Value r = add(arith::AddIOp::create(b, loc, warpM, group), 16 * i);
        Value r8 = add(r, 8);
        SmallVector<Value> a;
        if (operand == MmaOperand::TF32) {
          Value col = add(thread, k);
          a = {word(sharedA, r, col), word(sharedA, r8, col),
               word(sharedA, r, add(col, 4)), word(sharedA, r8, add(col, 4))};
        } else {
          Value col = mul(thread, 2);
          a = {pack(sharedA, r, col, r, add(col, 1)),
               pack(sharedA, r8, col, r8, add(col, 1)),
               pack(sharedA, r, add(col, 8), r, add(col, 9)),
               pack(sharedA, r8, add(col, 8), r8, add(col, 9))};
        }
        for (int64_t j = 0; j < kTilesN; ++j) {
          Value n = add(arith::AddIOp::create(b, loc, warpN, group), 8 * j);
          SmallVector<Value> bFrag;
          if (operand == MmaOperand::TF32) {
            Value row = add(thread, k);
            bFrag = {word(sharedB, row, n), word(sharedB, add(row, 4), n)};
          } else {
            Value row = mul(thread, 2);
            bFrag = {pack(sharedB, row, n, add(row, 1), n),
                     pack(sharedB, add(row, 8), n, add(row, 9), n)};
          }
          int64_t at = (i * kTilesN + j) * 4;
          SmallVector<Value> d =
              mma(a, bFrag, ArrayRef<Value>(acc).slice(at, 4), step);
          std::copy(d.begin(), d.end(), acc.begin() + at);
        }
      }
    }
    gpu::BarrierOp::create(b, loc);
    scf::YieldOp::create(b, loc, acc);
  }

  // Accumulator (i, j, e): row g (+8 for e >= 2), column 2t (+1 for odd e).
  for (int64_t i = 0; i < kTilesM; ++i)
    for (int64_t j = 0; j < kTilesN; ++j)
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
        w.storeResult(batch, m, n, kLoop.getResult((i * kTilesN + j) * 4 + e));
      }
  w.finish(launch);
}
} // namespace

void gpu_kernels::writeMmaKernel(OpBuilder &b, Contraction &c,
                                 MmaOperand operand) {
  MmaWriter(b, c, operand).write();
}
