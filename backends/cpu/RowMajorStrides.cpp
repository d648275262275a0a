//===- RowMajorStrides.cpp - Strides of a contiguous memref ---------------===//
#include "backends/cpu/RowMajorStrides.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

using namespace mlir;

SmallVector<OpFoldResult>
mlir::kiln::rowMajorStrides(OpBuilder &b, Location loc,
                            ArrayRef<OpFoldResult> sizes) {
  SmallVector<OpFoldResult> strides(sizes.size());
  int64_t staticStride = 1;
  Value stride;
  for (int64_t d = sizes.size() - 1; d >= 0; --d) {
    strides[d] = stride ? OpFoldResult(stride)
                        : OpFoldResult(b.getIndexAttr(staticStride));
    std::optional<int64_t> size = getConstantIntValue(sizes[d]);
    if (!stride && size) {
      staticStride *= *size;
      continue;
    }
    if (!stride)
      stride = arith::ConstantIndexOp::create(b, loc, staticStride);
    stride = arith::MulIOp::create(
        b, loc, stride, getValueOrCreateConstantIndexOp(b, loc, sizes[d]));
  }
  return strides;
}
