//===- KernelBuilder.h - Small IR builders the GPU kernels share -*- C++
//-*-===//
//
// The hand-built kernels (contractions, attention, row reductions) are
// written as gpu.launch bodies on buffers; these helpers keep their index
// arithmetic and guards short.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_BACKENDS_GPU_KERNELBUILDER_H
#define KILN_BACKENDS_GPU_KERNELBUILDER_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

namespace mlir::kiln::gpu_kernels {

/// An index constant.
Value index(OpBuilder &b, Location loc, int64_t value);

/// A gpu.launch before the builder's insertion point over `grid` blocks of
/// `block` threads (x, y, z; missing ones are 1), with `workgroup` buffers
/// (memrefs in workgroup address space). The builder is left at the start
/// of its body, before the terminator.
gpu::LaunchOp createLaunch(OpBuilder &b, Location loc, ArrayRef<Value> grid,
                           ArrayRef<int64_t> block, TypeRange workgroup = {});

/// A memref type in workgroup (shared) memory.
MemRefType workgroupMemRef(ArrayRef<int64_t> shape, Type element);

/// The indices of `linear` in a row-major space of `sizes` (last fastest).
SmallVector<Value> delinearize(OpBuilder &b, Location loc, Value linear,
                               ArrayRef<int64_t> sizes);

/// The same over extents that may be run-time values.
SmallVector<Value> delinearize(OpBuilder &b, Location loc, Value linear,
                               ValueRange sizes);

/// The row-major linear index of `indices` in a space of `sizes`.
Value linearize(OpBuilder &b, Location loc, ValueRange indices,
                ArrayRef<int64_t> sizes);
Value linearize(OpBuilder &b, Location loc, ValueRange indices,
                ValueRange sizes);

/// `memref[indices]` if `inBounds`, else `fallback`: the load is not made
/// when the index is out of range.
Value guardedLoad(OpBuilder &b, Location loc, Value memref, ValueRange indices,
                  Value inBounds, Value fallback);

/// guardedLoad with a zero fallback, widened to f32 (f16, bf16 elements).
Value guardedLoadF32(OpBuilder &b, Location loc, Value memref,
                     ValueRange indices, Value inBounds);

/// `value` (32 bits) from the lane `offset` lanes away (xor) within
/// groups of `width` lanes (gpu.shuffle xor).
Value shuffleXor(OpBuilder &b, Location loc, Value value, int64_t offset,
                 int64_t width);

/// `lead` followed by `i` and `j`: the indices of a row-major element
/// behind batch indices.
SmallVector<Value> withIndices(ValueRange lead, Value i, Value j);

/// `a < b` on indices.
Value lessThan(OpBuilder &b, Location loc, Value a, Value bound);

/// The indices an indexing map (dims, non-negative constants, sums,
/// products, floordiv/mod by constants) gives for loop values `loops`.
SmallVector<Value> applyMap(OpBuilder &b, Location loc, AffineMap map,
                            ValueRange loops);

/// Whether `value` is a statically shaped f32 tensor.
bool isStaticF32Tensor(Value value);

/// The kernels are written on buffers inside tensor IR: a dense buffer with
/// `tensor`'s data to read (bufferization.to_buffer read_only), a new
/// 64-byte aligned buffer to write, and that buffer as the tensor result
/// (to_tensor restrict writable), so bufferization keeps the kernel opaque.
Value readOnlyBuffer(OpBuilder &b, Location loc, Value tensor);
Value newBuffer(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                Type element);
/// A new buffer shaped like `tensor` (its run-time dims read by tensor.dim).
Value newBufferLike(OpBuilder &b, Location loc, Value tensor);
/// The dims of `tensor`: constants, tensor.dim for run-time ones.
SmallVector<Value> tensorExtents(OpBuilder &b, Location loc, Value tensor);
Value asTensor(OpBuilder &b, Location loc, Value buffer);

/// The operand type of an AMD matrix-core kernel (MFMA with f32
/// accumulation): 16x16x16 f16 or bf16, or 16x16x4 f32.
enum class MfmaOperand { F16, BF16, F32 };

/// The element type of `operand`.
Type mfmaElementType(OpBuilder &b, MfmaOperand operand);

/// Elements of an A or B fragment one lane holds per MFMA (K / 4): 1 for
/// the f32 16x16x4, 4 for the 16x16x16.
int64_t mfmaPerLane(MfmaOperand operand);

/// Index arithmetic with constants, short to write in kernel builders.
struct IndexMath {
  OpBuilder &b;
  Location loc;
  Value add(Value x, int64_t y);
  Value add(Value x, Value y);
  Value mul(Value x, int64_t y);
  Value div(Value x, int64_t y);
  Value rem(Value x, int64_t y);
  Value both(Value p, Value q);
};

/// The MFMA operand type for kernels at `precision` (fp32, tf32, bf16,
/// fp16) whose inputs are `element`: f16/bf16 inputs keep their type, f32
/// inputs take the precision's (tf32 computes as f32: CDNA has no tf32).
MfmaOperand mfmaOperandFor(Type element, StringRef precision);

} // namespace mlir::kiln::gpu_kernels

#endif // KILN_BACKENDS_GPU_KERNELBUILDER_H
