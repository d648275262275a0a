//===- Constant.cpp - kiln.constant -> arith.constant ---------------------===//
//
// Weights stay what the importer made them: a dense_resource blob is passed
// through by handle (its bytes are never copied or re-encoded), dense
// literals as they are. Only the element type changes for unsigned tensors,
// which is a reinterpretation of the same bits.
//
//===----------------------------------------------------------------------===//
#include "passes/lowering/LoweringUtils.h"
#include "passes/lowering/Patterns.h"

#include "dialects/kiln/KilnOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/DialectResourceBlobManager.h"

using namespace mlir;
using namespace mlir::kiln;

namespace {

/// The same elements typed as `type` (identical bits, signless elements).
TypedAttr retypeElements(ElementsAttr value, ShapedType type) {
  if (value.getType() == type)
    return value;
  if (auto dense = dyn_cast<DenseIntOrFPElementsAttr>(value))
    return dense.bitcast(type.getElementType());
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(value))
    return DenseResourceElementsAttr::get(type, resource.getRawHandle());
  return {};
}

struct ConstantLowering : OpConversionPattern<kiln::ConstantOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(kiln::ConstantOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = dyn_cast_if_present<ShapedType>(
        getTypeConverter()->convertType(op.getType()));
    TypedAttr value = type ? retypeElements(op.getValue(), type) : TypedAttr();
    if (!value)
      return rewriter.notifyMatchFailure(
          op, "only dense and dense_resource values can be retyped");
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(op, value);
    return success();
  }
};

} // namespace

void mlir::kiln::populateKilnConstantToLinalgPatterns(
    RewritePatternSet &patterns, TypeConverter &converter) {
  patterns.add<ConstantLowering>(converter, patterns.getContext());
}
