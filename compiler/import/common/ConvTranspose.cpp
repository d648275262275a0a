//===- ConvTranspose.cpp - A transposed convolution as kiln ops -----------===//
#include "compiler/import/common/ConvTranspose.h"

#include "dialects/kiln/KilnOps.h"

#include <fmt/format.h>

using namespace mlir;
using namespace mlir::kiln;

namespace {
/// kiln ops built in sequence; the first failure stops the chain.
struct Chain {
  KilnOpBuilder &c;
  bool failed = false;

  template <typename OpTy>
  Value op(ValueRange operands, ArrayRef<NamedAttribute> attrs = {}) {
    if (failed || llvm::is_contained(operands, Value()))
      return failed = true, Value();
    FailureOr<Value> r = c.make<OpTy>(operands, attrs);
    if (mlir::failed(r))
      return failed = true, Value();
    return *r;
  }
  ArrayRef<int64_t> shape(Value v) {
    return cast<RankedTensorType>(v.getType()).getShape();
  }
  Value reshape(Value v, ArrayRef<int64_t> to) {
    return op<ReshapeOp>({v}, {c.named("shape", c.i64s(to))});
  }
  Value transpose(Value v, ArrayRef<int64_t> perm) {
    return op<TransposeOp>({v}, {c.named("perm", c.i64s(perm))});
  }
  /// [start, end) by `step` along `axis`, the other dims whole.
  Value slice(Value v, int64_t axis, int64_t start, int64_t end,
              int64_t step = 1) {
    if (failed || !v)
      return failed = true, Value();
    SmallVector<int64_t> starts, ends, steps;
    for (auto [d, extent] : llvm::enumerate(shape(v))) {
      bool sliced = int64_t(d) == axis;
      starts.push_back(sliced ? start : 0);
      ends.push_back(sliced ? end : extent);
      steps.push_back(sliced ? step : 1);
    }
    return op<SliceOp>({v}, {c.named("starts", c.i64s(starts)),
                             c.named("ends", c.i64s(ends)),
                             c.named("steps", c.i64s(steps))});
  }
  Value zeros(ArrayRef<int64_t> to, Type element) {
    auto type = RankedTensorType::get(to, element);
    return c.constant(cast<ElementsAttr>(DenseElementsAttr::get(
        type, cast<TypedAttr>(c.b.getZeroAttr(element)))));
  }
};
} // namespace

FailureOr<Value> mlir::kiln::buildConvTranspose(
    KilnOpBuilder &c, Value x, Value w, Value bias, ArrayRef<int64_t> strides,
    ArrayRef<int64_t> pads, ArrayRef<int64_t> dilations,
    ArrayRef<int64_t> outputPadding, int64_t group) {
  Chain e{c};
  int64_t n = strides.size();
  SmallVector<int64_t> wShape(e.shape(w));
  int64_t channels = wShape[0], outPerGroup = wShape[1];
  SmallVector<int64_t> kernel(ArrayRef<int64_t>(wShape).drop_front(2));
  SmallVector<int64_t> inputShape(e.shape(x).drop_front(2));
  Type element = cast<RankedTensorType>(x.getType()).getElementType();

  // Per spatial dim: the padding the flipped-kernel convolution needs
  // around the spread input (negative: that much is cropped); the kernel
  // flipped in space.
  SmallVector<int64_t> low(n), high(n);
  for (int64_t i = 0; i < n; ++i) {
    int64_t reach = dilations[i] * (kernel[i] - 1);
    low[i] = reach - pads[i];
    high[i] = reach - pads[n + i] + outputPadding[i];
    w = e.slice(w, i + 2, kernel[i] - 1, -1, -1);
  }

  Value z = x;
  SmallVector<int64_t> convPads(2 * n);
  auto xType = cast<RankedTensorType>(x.getType());
  if (!xType.hasStaticShape()) {
    // Extents known only at run time: one constant pad puts the stride's
    // zeros between elements and the convolution's padding around them.
    int64_t rank = n + 2;
    SmallVector<int64_t> padded(2 * rank, 0), interior(rank, 0);
    for (int64_t i = 0; i < n; ++i) {
      if (low[i] < 0 || high[i] < 0) {
        c.error = fmt::format(
            "a transposed convolution over run-time extents needs pads of "
            "at most dilation * (kernel - 1) = {} in spatial dim {} (the "
            "end's plus output_padding {}), got {} and {} (give static "
            "extents with --input-shape)",
            dilations[i] * (kernel[i] - 1), i, outputPadding[i], pads[i],
            pads[n + i]);
        return failure();
      }
      padded[i + 2] = low[i];
      padded[rank + i + 2] = high[i];
      interior[i + 2] = strides[i] - 1;
    }
    z = e.op<PadOp>({x, c.scalar(element, 0)},
                    {c.named("pads", c.i64s(padded)),
                     c.named("interior", c.i64s(interior))});
  }
  for (int64_t i = 0; i < n && xType.hasStaticShape(); ++i) {
    int64_t axis = i + 2, in = inputShape[i], s = strides[i];
    if (s > 1 && in > 1) {
      // [.., in, ..] -> [.., in, 1, ..] ++ zeros [.., in, s-1, ..] ->
      // [.., in*s, ..], then drop the zeros after the last element.
      SmallVector<int64_t> split(e.shape(z));
      split.insert(split.begin() + axis + 1, 1);
      SmallVector<int64_t> zeros(split);
      zeros[axis + 1] = s - 1;
      SmallVector<int64_t> merged(e.shape(z));
      merged[axis] = in * s;
      Value spread =
          e.op<ConcatOp>({e.reshape(z, split), e.zeros(zeros, element)},
                         {c.named("axis", c.b.getI64IntegerAttr(axis + 1))});
      z = e.slice(e.reshape(spread, merged), axis, 0, (in - 1) * s + 1);
    }
    if (z && (low[i] < 0 || high[i] < 0)) {
      int64_t size = e.shape(z)[axis];
      z = e.slice(z, axis, std::max<int64_t>(0, -low[i]),
                  size - std::max<int64_t>(0, -high[i]));
    }
    convPads[i] = std::max<int64_t>(0, low[i]);
    convPads[n + i] = std::max<int64_t>(0, high[i]);
  }
  // [C, M/g, k..] -> [g, C/g, M/g, k..] -> [g, M/g, C/g, k..] -> [M, C/g, k..]
  SmallVector<int64_t> grouped = {group, channels / group, outPerGroup};
  grouped.append(kernel);
  SmallVector<int64_t> perm = {0, 2, 1};
  SmallVector<int64_t> regrouped = {group * outPerGroup, channels / group};
  for (int64_t i = 0; i < n; ++i) {
    perm.push_back(i + 3);
    regrouped.push_back(kernel[i]);
  }
  w = e.reshape(e.transpose(e.reshape(w, grouped), perm), regrouped);
  SmallVector<Value> operands = {z, w};
  if (bias)
    operands.push_back(bias);
  Value y = e.op<ConvOp>(
      operands, {c.named("strides", c.i64s(SmallVector<int64_t>(n, 1))),
                 c.named("pads", c.i64s(convPads)),
                 c.named("dilations", c.i64s(dilations)),
                 c.named("group", c.b.getI64IntegerAttr(group))});
  if (e.failed)
    return failure();
  return y;
}
