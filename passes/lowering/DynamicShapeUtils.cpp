//===- DynamicShapeUtils.cpp - index arithmetic for run-time shapes -------===//
#include "passes/lowering/DynamicShapeUtils.h"

#include "dialects/kiln/NodeLocation.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::kiln;

Value IndexMath::c(int64_t value) {
  return arith::ConstantIndexOp::create(b, loc, value);
}
Value IndexMath::t(bool value) {
  return arith::ConstantIntOp::create(b, loc, value, 1);
}
Value IndexMath::add(Value x, Value y) {
  return arith::AddIOp::create(b, loc, x, y);
}
Value IndexMath::sub(Value x, Value y) {
  return arith::SubIOp::create(b, loc, x, y);
}
Value IndexMath::mul(Value x, Value y) {
  return arith::MulIOp::create(b, loc, x, y);
}
Value IndexMath::divu(Value x, Value y) {
  return arith::DivUIOp::create(b, loc, x, y);
}
Value IndexMath::eq(Value x, Value y) {
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, x, y);
}
Value IndexMath::sge(Value x, Value y) {
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, x, y);
}
Value IndexMath::sle(Value x, Value y) {
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, x, y);
}
Value IndexMath::slt(Value x, Value y) {
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, x, y);
}
Value IndexMath::andi(Value x, Value y) {
  return arith::AndIOp::create(b, loc, x, y);
}
Value IndexMath::noti(Value x) {
  return arith::XOrIOp::create(b, loc, x, t(true));
}
Value IndexMath::select(Value cond, Value x, Value y) {
  return arith::SelectOp::create(b, loc, cond, x, y);
}
Value IndexMath::smax(Value x, Value y) {
  return arith::MaxSIOp::create(b, loc, x, y);
}
Value IndexMath::smin(Value x, Value y) {
  return arith::MinSIOp::create(b, loc, x, y);
}
Value IndexMath::dim(Value tensor, int64_t d) {
  auto type = cast<RankedTensorType>(tensor.getType());
  if (!type.isDynamicDim(d))
    return c(type.getDimSize(d));
  return tensor::DimOp::create(b, loc, tensor, d);
}
Value IndexMath::extract(Value tensor, int64_t i) {
  Value element = tensor::ExtractOp::create(b, loc, tensor, ValueRange{c(i)});
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), element);
}

void mlir::kiln::emitRuntimeCheck(OpBuilder &b, Location loc, Value cond,
                                  const Twine &message) {
  std::string node = onnxNodeName(loc);
  std::string text =
      node.empty() ? message.str() : ("node '" + node + "': " + message).str();
  cf::AssertOp::create(b, loc, cond, text);
}

SmallVector<Value> mlir::kiln::windowResultSizes(
    OpBuilder &b, Location loc, Value input, RankedTensorType resultType,
    ArrayRef<int64_t> kernel, ArrayRef<int64_t> strides,
    ArrayRef<int64_t> dilations, ArrayRef<int64_t> pads, bool channelsLast) {
  IndexMath im(b, loc);
  int64_t spatial = kernel.size(), first = channelsLast ? 1 : 2;
  SmallVector<Value> sizes;
  for (int64_t d = 0; d < resultType.getRank(); ++d) {
    if (!resultType.isDynamicDim(d))
      continue;
    int64_t i = d - first;
    if (i < 0 || i >= spatial) { // the batch (channels are static)
      sizes.push_back(im.dim(input, d));
      continue;
    }
    int64_t span = dilations[i] * (kernel[i] - 1) + 1;
    Value padded = im.add(im.dim(input, d), im.c(pads[i] + pads[spatial + i]));
    // The dim as the ONNX node numbers it (NCHW), whatever the layout.
    emitRuntimeCheck(b, loc, im.sge(padded, im.c(span)),
                     "spatial dim " + Twine(i + 2) +
                         " of the input is smaller than the window (" +
                         Twine(span) + " with the padding)");
    // A stride-1 window padded by span - 1 keeps the extent: the input's
    // own, so that later comparisons with it fold (a residual add).
    if (strides[i] == 1 && pads[i] + pads[spatial + i] == span - 1) {
      sizes.push_back(im.dim(input, d));
      continue;
    }
    Value room = im.smax(im.sub(padded, im.c(span)), im.c(0));
    sizes.push_back(im.add(im.divu(room, im.c(strides[i])), im.c(1)));
  }
  return sizes;
}
