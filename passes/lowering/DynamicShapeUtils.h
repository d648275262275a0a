//===- DynamicShapeUtils.h - index arithmetic for run-time shapes -*- C++
//-*-===//
//
// Helpers of the lowerings whose sizes are computed from tensor values when
// the model runs: index arithmetic without boilerplate, and run-time checks.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PASSES_LOWERING_DYNAMICSHAPEUTILS_H
#define KILN_PASSES_LOWERING_DYNAMICSHAPEUTILS_H

#include "mlir/IR/Builders.h"

namespace mlir::kiln {

/// Index-typed arithmetic at one location.
class IndexMath {
public:
  IndexMath(OpBuilder &b, Location loc) : b(b), loc(loc) {}

  Value c(int64_t value);
  Value t(bool value);
  Value add(Value x, Value y);
  Value sub(Value x, Value y);
  Value mul(Value x, Value y);
  Value divu(Value x, Value y);
  Value eq(Value x, Value y);
  Value sge(Value x, Value y);
  Value sle(Value x, Value y);
  Value slt(Value x, Value y);
  Value andi(Value x, Value y);
  Value noti(Value x);
  Value select(Value cond, Value x, Value y);
  Value smax(Value x, Value y);
  Value smin(Value x, Value y);
  /// Extent `d` of a ranked tensor: a constant if static, else `tensor.dim`.
  Value dim(Value tensor, int64_t d);
  /// Element `i` of a 1-D integer tensor, as index.
  Value extract(Value tensor, int64_t i);

private:
  OpBuilder &b;
  Location loc;
};

/// `cf.assert cond, "node 'N': message"` (the ONNX node from `loc`). The CPU
/// backend makes a failed check end the run with that message as its error.
void emitRuntimeCheck(OpBuilder &b, Location loc, Value cond,
                      const Twine &message);

/// The run-time extents of a convolution's or pool's result, in order:
/// the batch read from `input`, and each spatial extent known only at run
/// time as (in + pad_begin + pad_end - span) / stride + 1, with a check that
/// the padded input holds one window (span = dilation * (kernel - 1) + 1).
/// `kernel`, `strides`, `dilations` per spatial dim, `pads` begins then
/// ends; NC[D]HW, or NHWC with `channelsLast`.
SmallVector<Value> windowResultSizes(OpBuilder &b, Location loc, Value input,
                                     RankedTensorType resultType,
                                     ArrayRef<int64_t> kernel,
                                     ArrayRef<int64_t> strides,
                                     ArrayRef<int64_t> dilations,
                                     ArrayRef<int64_t> pads, bool channelsLast);

} // namespace mlir::kiln

#endif // KILN_PASSES_LOWERING_DYNAMICSHAPEUTILS_H
