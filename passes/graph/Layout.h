//===- Layout.h - Shared pieces of the convolution layout passes -*- C++
//-*-===//
//
// kiln-conv-layout and kiln-sink-transposes agree on the permutations between
// NCHW and NHWC, on the attribute that marks the transposes the layout pass
// inserted (so the sink pass moves only those and the report counts only
// those), and on which ops a conversion can be moved through.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PASSES_GRAPH_LAYOUT_H
#define KILN_PASSES_GRAPH_LAYOUT_H

#include "dialects/kiln/KilnOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::kiln::layout {

/// NCHW -> NHWC and NHWC -> NCHW (result dim i is input dim perm[i]).
inline constexpr int64_t kToNHWC[] = {0, 2, 3, 1};
inline constexpr int64_t kToNCHW[] = {0, 3, 1, 2};
/// HWCF weight from FCHW.
inline constexpr int64_t kToHWCF[] = {2, 3, 1, 0};

/// Unit attribute on the kiln.transpose ops that are layout conversions.
inline constexpr llvm::StringLiteral kConversionAttr = "kiln.layout_conversion";

/// A kiln.transpose of `value` by `perm`, marked as a layout conversion when
/// `conversion` is set.
Value createTranspose(OpBuilder &b, Location loc, Value value,
                      ArrayRef<int64_t> perm, bool conversion);
/// The transpose marked as a layout conversion that defines `v`, or null.
TransposeOp conversionOf(Value v);
/// q with q[perm[i]] = i.
SmallVector<int64_t> inversePerm(ArrayRef<int64_t> perm);
/// The shape s with transpose(s, perm) == `shape`.
SmallVector<int64_t> unpermuteShape(ArrayRef<int64_t> shape,
                                    ArrayRef<int64_t> perm);

/// Elementwise ops of one operand (activations, math, cast).
bool isUnaryElementwise(Operation *op);
/// Elementwise ops of two broadcasting operands (add, mul, compare, ...).
bool isBinaryElementwise(Operation *op);
/// Elementwise ops whose other operands may be constants of any rank
/// (broadcast): the binary ones and where (QuantizeLinear's NaN check).
bool takesConstants(Operation *op);
/// Ops a layout conversion can move through: elementwise with rank-`rank`
/// operands or constants, concat, slice, keepdims reductions, 2-D pools.
bool isLayoutTransparent(Operation *op, int64_t rank = 4);

} // namespace mlir::kiln::layout

#endif // KILN_PASSES_GRAPH_LAYOUT_H
