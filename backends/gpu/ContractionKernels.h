//===- ContractionKernels.h - Tiled contraction kernels, shared parts -*- C++
//-*-===//
//
// What the SIMT (ContractionKernels.cpp), tensor-core (ContractionMma.cpp)
// and AMD matrix-core (ContractionMfma.cpp) contraction kernels share: the
// match (a contraction or convolution with its dims by role and its elementwise
// epilogue) and the writer's operand loads, result store (init, epilogue) and
// buffers.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_BACKENDS_GPU_CONTRACTIONKERNELS_H
#define KILN_BACKENDS_GPU_CONTRACTIONKERNELS_H

#include "backends/gpu/KernelBuilder.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"

namespace mlir::kiln::gpu_kernels {

/// An f32/f16/bf16 contraction or convolution as a GEMM. Its extents are
/// static but for the rows' (m) dims, which may be run-time extents
/// (symbolic batch or sequence): the kernel's row tiles are then counted and
/// guarded at run time.
struct Contraction {
  linalg::LinalgOp op;
  /// Loop dims by role, each group linearized (last dim fastest): batch is
  /// grid z, m the rows and n the columns of the result tile, k reduced.
  SmallVector<unsigned> batch, m, n, k;
  SmallVector<int64_t> loopSizes;
  AffineMap mapA, mapB, mapC;
  /// The accumulator's start: a fill's scalar, else the init tensor.
  Value fillValue, init;
  /// The elementwise consumer applied in the store, and the reshapes
  /// between it and the contraction.
  linalg::GenericOp epilogue;
  int64_t epilogueOperand = -1;
  /// f16/bf16 values a tensor-core kernel reads instead of f32 A or B: a
  /// constant's copy rounded at compile time, a run-time operand rounded
  /// by an op before the kernel, or the narrow source of an extf.
  Value narrowedA, narrowedB;

  SmallVector<int64_t> sizes(ArrayRef<unsigned> dims) const {
    SmallVector<int64_t> result;
    for (unsigned d : dims)
      result.push_back(loopSizes[d]);
    return result;
  }
  /// The product of the dims' extents; ShapedType::kDynamic when one is
  /// a run-time extent.
  int64_t size(ArrayRef<unsigned> dims) const {
    int64_t total = 1;
    for (unsigned d : dims) {
      if (ShapedType::isDynamic(loopSizes[d]))
        return ShapedType::kDynamic;
      total *= loopSizes[d];
    }
    return total;
  }
  /// Whether some row dims are run-time extents.
  bool runTimeRows() const { return ShapedType::isDynamic(size(m)); }
};

/// The contraction `op` is (dims, maps, init, epilogue), or failure.
FailureOr<Contraction> matchContraction(linalg::LinalgOp op);

/// Writes one kernel for `c` before its root (the epilogue, else the
/// contraction): operand buffers, the result buffer, loads through the
/// operands' maps and the store with init and epilogue. The kernel body
/// (the tiling) is the caller's.
class ContractionWriter {
public:
  ContractionWriter(OpBuilder &b, Contraction &c);

  /// Loop values for a (batch, m, k) or (batch, k, n) element (each of m,
  /// n, k linearized over its dims).
  SmallVector<Value> loops(ValueRange batch, Value mLinear, Value nLinear,
                           Value kLinear);
  /// A[batch, m, k] and B[batch, k, n], 0 where `inBounds` is false.
  Value loadA(ValueRange batch, Value m, Value k, Value inBounds);
  Value loadB(ValueRange batch, Value k, Value n, Value inBounds);
  /// The buffer indices of A[batch, m, k] and B[batch, k, n].
  SmallVector<Value> indicesA(ValueRange batch, Value m, Value k);
  SmallVector<Value> indicesB(ValueRange batch, Value k, Value n);
  /// Stores `acc` for element (batch, m, n): plus the init, through the
  /// epilogue.
  void storeResult(ValueRange batch, Value m, Value n, Value acc);
  /// The batch indices of grid z.
  SmallVector<Value> batchIndices(Value blockZ);
  /// The extents of `dims`, run-time values where the rows are.
  SmallVector<Value> extents(ArrayRef<unsigned> dims);
  /// The grid: (ceil(N / tileN), ceil(M / tileM), batch x splits).
  SmallVector<Value> grid(int64_t tileM, int64_t tileN);
  /// Replaces the root's result with the kernel's (after `launch`); with
  /// split K, first adds a kernel summing the slices' partial products
  /// (plus the fill or init, through the epilogue).
  void finish(gpu::LaunchOp launch);

  /// Split K: when a problem has too few output tiles to fill a GPU, the
  /// K range is cut into `splits` slices of `sliceK` (a multiple of
  /// `step`), one block per (tile, batch, slice) along grid z; each block
  /// writes its partial product to a workspace. Call before grid().
  void planSplits(int64_t tileM, int64_t tileN, int64_t step);
  /// The accumulators' start: the fill value, or 0 with split K (the
  /// fill is added once, when the slices are summed).
  Value initialAccumulator();
  /// The K range [begin, end) of the block at grid z `blockZ`.
  std::pair<Value, Value> kRange(Value blockZ);
  /// Stores a block's accumulator for element (batch, m, n): the result
  /// (storeResult), or with split K its slice's partial product.
  void storeAccumulator(Value blockZ, ValueRange batch, Value m, Value n,
                        Value acc);
  /// The operands' element type: f32, f16 or bf16 (f16/bf16 models).
  Type operandType() { return elementType(bufA); }

  /// f16/bf16 values are computed as f32 and stored in their own type.
  Type elementType(Value shaped);
  Value widen(Value v);
  Value narrow(Value v, Type type);

  OpBuilder &b;
  Contraction &c;
  Location loc;
  Value bufA, bufB, bufInit, out, zero;
  SmallVector<Value> epilogueBuffers;
  /// sizeM is ShapedType::kDynamic for run-time rows; extentM is M as a
  /// value either way (the row bound the kernels guard with).
  int64_t sizeM = 0, sizeN = 0, sizeK = 0;
  Value extentM;
  /// Run-time rows: every loop's extent, the contraction result's and the
  /// epilogue result's dims (values before the kernel).
  SmallVector<Value> loopExtents, resultExtents, epilogueExtents;
  int64_t splits = 1, sliceK = 0;
  /// f32 [splits, batch, M, N] partial products (split K only).
  Value workspace;
};

/// The operand type of a tensor-core kernel (PTX mma.sync with f32
/// accumulation).
enum class MmaOperand { F16, BF16, TF32 };

/// One nvvm.mma.sync m16n8k`k` (k 16 for f16/bf16, 8 for tf32) with f32
/// accumulators: `a` (4 registers), `b` (2) and `acc` (4 f32) in the
/// PTX fragment layout; returns the 4 new accumulators.
SmallVector<Value> mmaSync(OpBuilder &b, Location loc, MmaOperand operand,
                           ValueRange a, ValueRange bFragment, ValueRange acc,
                           int64_t k);

/// A pair of f16/bf16 values (vector<2xT>) as one mma.sync operand
/// register: the vector itself for f16, one i32 for bf16.
Value mmaRegister(OpBuilder &b, Location loc, MmaOperand operand, Value pair);

/// PTX ldmatrix.x4 (m8n8, 16-bit elements) from a shared-memory stage:
/// each lane gives the address of element `indices` of `shared` (lane l
/// the start of row l % 8 of matrix l / 8, 16-byte aligned) and gets one
/// 32-bit register of each of the four 8x8 matrices, as an mma.sync
/// fragment takes it (row l / 4, columns 2(l % 4) and 2(l % 4) + 1; with
/// `transpose`, rows 2(l % 4) and 2(l % 4) + 1 of column l / 4). The
/// registers come back as mmaRegister gives them.
SmallVector<Value> ldMatrixX4(OpBuilder &b, Location loc, MmaOperand operand,
                              Value shared, ValueRange indices, bool transpose);

/// The address of element `indices` of a memref whose aligned pointer is
/// `base` (an index), with `offset` and `strides` (elements), as a pointer
/// in `addressSpace` (1 global, 3 shared) to elements of `bytes` bytes.
Value elementPointer(OpBuilder &b, Location loc, Value base, Value offset,
                     ArrayRef<Value> strides, ValueRange indices, int64_t bytes,
                     unsigned addressSpace);

/// A shared-window pointer to element `indices` of the workgroup memref
/// `shared` (a static layout).
Value sharedPointer(OpBuilder &b, Location loc, Value shared,
                    ValueRange indices);

/// One 16-byte cp.async of the chunk at element `indices` of a global
/// buffer (aligned pointer `base`, `offset` and `strides` in elements of
/// `bytes` bytes) to the shared pointer `target`. Where `ok` is false no
/// byte is read (the chunk is zero-filled), from the buffer's start rather
/// than an address outside it.
void copyChunkAsync(OpBuilder &b, Location loc, Value base, Value offset,
                    ArrayRef<Value> strides, ValueRange indices, int64_t bytes,
                    Value ok, Value target);

/// Whether the tensor-core kernel takes 128x128 tiles for `c`: the problem
/// has enough of them to fill a GPU (ContractionMma.cpp).
bool fillsGpuWithLargeTiles(const Contraction &c);

/// Whether operand A (`isA`) or B of `c`, held in f16/bf16, goes to shared
/// memory by cp.async (its layout allows 16-byte chunks).
bool takesCpAsync(const Contraction &c, bool isA);

/// Replaces `c` (and its epilogue) with a tensor-core kernel
/// (ContractionMma.cpp).
void writeMmaKernel(OpBuilder &b, Contraction &c, MmaOperand operand);

/// Replaces `c` (and its epilogue) with a wave64 MFMA kernel
/// (ContractionMfma.cpp).
void writeMfmaKernel(OpBuilder &b, Contraction &c, MfmaOperand operand);

} // namespace mlir::kiln::gpu_kernels

#endif // KILN_BACKENDS_GPU_CONTRACTIONKERNELS_H
