//===- AttentionKernels.h - The flash-attention kernels' shared parts -*- C++
//-*-===//
//
// kiln.attention becomes one flash kernel on GPU targets: SIMT FMAs
// (AttentionKernels.cpp) or AMD matrix cores (AttentionMfma.cpp). Both read
// the operands and the broadcast mask the same way.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_BACKENDS_GPU_ATTENTIONKERNELS_H
#define KILN_BACKENDS_GPU_ATTENTIONKERNELS_H

#include "backends/gpu/KernelBuilder.h"
#include "dialects/kiln/KilnOps.h"

namespace mlir::kiln::gpu_kernels {

/// Static sizes of an attention op: q [batch..., sq, d], k [batch..., sk,
/// d], v [batch..., sk, dv], the mask's shape (empty without one), the
/// element type of q (and the result).
struct AttentionShape {
  explicit AttentionShape(AttentionOp op);
  SmallVector<int64_t> batchSizes, maskShape;
  Type element;
  int64_t batchTotal = 1, sq = 0, sk = 0, d = 0, dv = 0;
};

/// The mask's indices for (batch, row, key); its broadcast dims read 0.
SmallVector<Value> attentionMaskIndices(OpBuilder &b, Location loc,
                                        ArrayRef<int64_t> maskShape,
                                        ValueRange batch, Value row, Value key);

/// A scaled score q·k for (row, key), finished: the mask added (read as
/// f32), -inf where the key is past the last one or, for causal attention,
/// after the row.
Value finishScore(OpBuilder &b, Location loc, AttentionOp op,
                  const AttentionShape &shape, Value score, Value mask,
                  ValueRange batch, Value row, Value rowOk, Value key);

/// One online-softmax step from the running max `oldMax` and the new
/// scores' max: the new running max, the one to subtract from scores (0
/// while every score so far is -inf, so exp gives 0, not NaN), and the
/// factor exp(oldMax - that) that rescales the sum and the accumulators.
struct OnlineMax {
  Value max, subtract, correction;
};
OnlineMax updateRunningMax(OpBuilder &b, Location loc, Value oldMax,
                           Value scoresMax);

/// `op` as one MFMA flash kernel (wave64, 16x16 tiles); returns the result
/// tensor. Needs static f32, f16 or bf16 operands (one type) and head
/// sizes up to 128.
Value writeMfmaAttention(OpBuilder &b, AttentionOp op, MfmaOperand operand);

} // namespace mlir::kiln::gpu_kernels

#endif // KILN_BACKENDS_GPU_ATTENTIONKERNELS_H
