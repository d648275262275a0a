//===- NormalizationRows.h - Row kernels for norms and softmax --*- C++ -*-===//
//
// layer_norm / softmax / log_softmax over trailing dims of static f32
// tensors as one scf.forall over rows with vectorized passes per row (see
// NormalizationRows.cpp). Each returns failure, creating nothing, when the
// case is not covered (other element types, dynamic shapes, softmax over a
// non-last axis, scale or bias that broadcast inside the row); the caller
// then emits the generic chains.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PASSES_LOWERING_NORMALIZATIONROWS_H
#define KILN_PASSES_LOWERING_NORMALIZATIONROWS_H

#include "mlir/IR/Builders.h"

namespace mlir::kiln {

/// (x - mean) * rsqrt(var + epsilon) * scale (+ bias) over dims [axis, rank);
/// scale and bias hold exactly the normalized dims (leading 1s allowed).
FailureOr<Value> buildLayerNormRows(OpBuilder &b, Location loc, Value x,
                                    Value scale, Value bias, int64_t axis,
                                    double epsilon);

/// softmax (or log_softmax) over the last axis.
FailureOr<Value> buildSoftmaxRows(OpBuilder &b, Location loc, Value x,
                                  int64_t axis, bool isLog);

} // namespace mlir::kiln

#endif // KILN_PASSES_LOWERING_NORMALIZATIONROWS_H
