//===- AttentionKernels.h - The flash-attention kernels' shared parts -*- C++
//-*-===//
//
// kiln.attention becomes one flash kernel on GPU targets: SIMT FMAs
// (AttentionKernels.cpp), AMD matrix cores (AttentionMfma.cpp) or NVIDIA
// tensor cores (AttentionMma.cpp). All read the operands and the broadcast
// mask the same way.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_BACKENDS_GPU_ATTENTIONKERNELS_H
#define KILN_BACKENDS_GPU_ATTENTIONKERNELS_H

#include "backends/gpu/ContractionKernels.h"
#include "backends/gpu/KernelBuilder.h"
#include "dialects/kiln/KilnOps.h"

namespace mlir::kiln::gpu_kernels {

/// Sizes of an attention op: q [batch..., sq, d], k [batch..., sk, d], v
/// [batch..., sk, dv], the mask's shape (empty without one), the element
/// type of q (and the result). The batch dims and the sequence lengths may
/// be run-time extents (ShapedType::kDynamic; batchTotal too then): the
/// kernels read them as values, which AttentionBuffers makes before the
/// kernel (materialize).
struct AttentionShape {
  explicit AttentionShape(AttentionOp op);
  /// The *Value extents: constants, or tensor.dim of the operands.
  void materialize(OpBuilder &b, Location loc, AttentionOp op);
  bool runTimeExtents() const {
    return ShapedType::isDynamic(batchTotal) || ShapedType::isDynamic(sq) ||
           ShapedType::isDynamic(sk);
  }
  SmallVector<int64_t> batchSizes, maskShape;
  Type element;
  int64_t batchTotal = 1, sq = 0, sk = 0, d = 0, dv = 0;
  SmallVector<Value> batchValues, maskValues;
  Value sqValue, skValue, batchTotalValue;
};

/// Where a kernel reads q, k and v and writes the result. By default the
/// operands themselves and a new [batch..., sq, dv] result; through
/// transposes (`AttentionLayouts::of` with `throughTransposes`), an
/// operand made by a kiln.transpose that keeps the last dim in place is
/// read from the transpose's input, and a result whose only user is such
/// a transpose is written in that transpose's layout: a BERT's
/// [B, S, H, D] projections are read as they are, with no [B, H, S, D]
/// copies before or after the kernel.
struct AttentionLayouts {
  static AttentionLayouts of(AttentionOp op, bool throughTransposes);
  /// The tensors read for q, k, v.
  Value sources[3];
  /// For q, k, v and the result: buffer index i is the logical index
  /// ([batch..., row, column]) `gather[i]` (empty: the same index).
  SmallVector<int64_t> gathers[4];
  /// The result's transpose the kernel writes for, or null.
  TransposeOp outTranspose;
};

/// The buffer indices of logical element (batch..., row, col) of an
/// operand laid out by `gather` (AttentionLayouts).
SmallVector<Value> gatheredIndices(ArrayRef<int64_t> gather, ValueRange batch,
                                   Value row, Value col);

/// The buffers an attention kernel works on: its operands to read (the
/// mask null without one) and a new result, as `layouts` places them.
struct AttentionBuffers {
  AttentionBuffers(OpBuilder &b, Location loc, AttentionOp op,
                   AttentionShape &shape, const AttentionLayouts &layouts);
  AttentionBuffers(OpBuilder &b, Location loc, AttentionOp op,
                   AttentionShape &shape)
      : AttentionBuffers(
            b, loc, op, shape,
            AttentionLayouts::of(op, /*throughTransposes=*/false)) {}
  Value q, k, v, mask, out;
};

/// The mask's indices for (batch, row, key); its broadcast dims read 0
/// (a run-time dim of the mask when its extent is 1 at run time).
SmallVector<Value> attentionMaskIndices(OpBuilder &b, Location loc,
                                        const AttentionShape &shape,
                                        ValueRange batch, Value row, Value key);

/// A scaled score q·k for (row, key), finished: the mask added (read as
/// f32, times `maskScale`), -inf where the key is past the last one or,
/// for causal attention, after the row. `inside`: the caller knows the key
/// is neither (only the mask is added).
Value finishScore(OpBuilder &b, Location loc, AttentionOp op,
                  const AttentionShape &shape, Value score, Value mask,
                  ValueRange batch, Value row, Value rowOk, Value key,
                  double maskScale = 1.0, bool inside = false);

/// One online-softmax step from the running max `oldMax` and the new
/// scores' max: the new running max, the one to subtract from scores (0
/// while every score so far is -inf, so exp gives 0, not NaN), and the
/// factor exp(oldMax - that) that rescales the sum and the accumulators
/// (exp2 with `base2`: scores already multiplied by log2(e)).
struct OnlineMax {
  Value max, subtract, correction;
};
OnlineMax updateRunningMax(OpBuilder &b, Location loc, Value oldMax,
                           Value scoresMax, bool base2 = false);

/// An output of `op`'s row: the accumulator `acc` over the row's sum `sum`.
/// A row with every key masked sums to 0 (its scores' max is -inf, so
/// updateRunningMax subtracts 0 and every exp is 0): 0/0 = NaN as the
/// unfused softmax gives, or 0 with `zero_masked_rows` (torch's guard).
Value normalizedOutput(OpBuilder &b, Location loc, AttentionOp op, Value acc,
                       Value sum);

/// Stages `keys` keys from key0 of `source` ([batch..., sk, width]) into
/// `shared` ([key][column]) as `element`, zeros past the last key and past
/// `width` up to `padded` columns. The
/// block's `threads` threads (`tid`) take neighbouring columns of a key, so
/// the reads of the source's rows coalesce.
void stageKeys(OpBuilder &b, Location loc, Value tid, int64_t threads,
               Value source, Value shared, ValueRange batch, Value key0,
               int64_t keys, Value sk, int64_t width, int64_t padded,
               Type element);

/// The key loop of the MFMA flash kernel: stages of `stageKeys`
/// keys from 0 to `keyEnd`, each filled by `fillStage(key0)` and a
/// barrier, then walked `step` keys at a time by `walkStep(key0, j0,
/// state)`, which returns the new state; a barrier closes each stage.
/// Returns the final state.
SmallVector<Value> walkKeyStages(
    OpBuilder &b, Location loc, Value keyEnd, int64_t stageKeys, int64_t step,
    ValueRange state, function_ref<void(Value key0)> fillStage,
    function_ref<SmallVector<Value>(Value key0, Value j0, ValueRange state)>
        walkStep);

/// `op` as one MFMA flash kernel (wave64, 16x16 tiles); returns the result
/// tensor. Needs static f32, f16 or bf16 operands (one type) and head
/// sizes up to 128.
Value writeMfmaAttention(OpBuilder &b, AttentionOp op, MfmaOperand operand);

/// `op` as one mma.sync flash kernel (NVIDIA sm_80 and up, m16n8k16 with
/// f32 accumulation), reading and writing as `layouts` says; returns the
/// result tensor (of `layouts.outTranspose`'s type when there is one).
/// Needs static operands, head sizes up to 128 and `layouts`' K and V in
/// the operand type (f32 ones rounded first: the pass's roundKeysAhead);
/// `operand` is F16 or BF16.
Value writeMmaAttention(OpBuilder &b, AttentionOp op, MmaOperand operand,
                        const AttentionLayouts &layouts);

} // namespace mlir::kiln::gpu_kernels

#endif // KILN_BACKENDS_GPU_ATTENTIONKERNELS_H
