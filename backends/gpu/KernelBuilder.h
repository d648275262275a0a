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

/// The row-major linear index of `indices` in a space of `sizes`.
Value linearize(OpBuilder &b, Location loc, ValueRange indices,
                ArrayRef<int64_t> sizes);

/// `memref[indices]` if `inBounds`, else `fallback`: the load is not made
/// when the index is out of range.
Value guardedLoad(OpBuilder &b, Location loc, Value memref, ValueRange indices,
                  Value inBounds, Value fallback);

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
Value asTensor(OpBuilder &b, Location loc, Value buffer);

} // namespace mlir::kiln::gpu_kernels

#endif // KILN_BACKENDS_GPU_KERNELBUILDER_H
