//===- Strings.cpp - kiln string ops -> runtime string kernels ------------===//
//
// String tensors lower to i64 tensors, one `const char *` per element (the
// type converter maps !kiln.string to i64), so data movement ops lower as
// for any 64-bit type. The three string ops become calls of the runtime's
// string kernels (kiln_runtime_callbacks in abi.h) on buffers:
//
//   %src = bufferization.to_buffer %x read_only : tensor<3x4xf32> to
//   memref<3x4xf32> %dst = memref.alloc() {alignment = 64 : i64} :
//   memref<3x4xi64> call @__kiln_string_call_0(%c1_i32, %src, %dst, %c12_i64)
//   %y = bufferization.to_tensor %dst restrict writable : memref<3x4xi64> to
//   tensor<3x4xi64>
//
// The ops' verifiers guarantee static shapes, so every count is a constant.
// Each call site gets a private declaration of its own memref types, marked
// `kiln.string_kernel = "<callback name>"`; kiln-runtime-services turns the
// call into a call of the kernel with the runtime and bare data pointers
// once buffers are placed. Passing the memrefs themselves keeps them live
// across the call for the arena planner.
//
//===----------------------------------------------------------------------===//
#include "passes/lowering/DynamicShapeUtils.h"
#include "passes/lowering/LoweringUtils.h"
#include "passes/lowering/Patterns.h"

#include "dialects/kiln/KilnOps.h"
#include "dialects/kiln/NodeLocation.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::kiln;

namespace {

/// The private declaration for one call of string kernel `kernel`.
func::FuncOp declareKernelCall(Operation *at, StringRef kernel,
                               TypeRange operands, TypeRange results) {
  auto module = at->getParentOfType<ModuleOp>();
  MLIRContext *ctx = module.getContext();
  unsigned id = 0;
  std::string name;
  do
    name = "__kiln_string_call_" + std::to_string(id++);
  while (module.lookupSymbol(name));
  OpBuilder b(module.getBodyRegion());
  b.setInsertionPointToStart(module.getBody());
  auto fn = func::FuncOp::create(b, module.getLoc(), name,
                                 FunctionType::get(ctx, operands, results));
  fn.setPrivate();
  fn->setAttr("kiln.string_kernel", StringAttr::get(ctx, kernel));
  return fn;
}

Value callKernel(OpBuilder &b, Operation *op, StringRef kernel,
                 ValueRange operands, TypeRange results = {}) {
  func::FuncOp fn =
      declareKernelCall(op, kernel, ValueRange(operands).getTypes(), results);
  auto call = func::CallOp::create(b, op->getLoc(), fn, operands);
  return results.empty() ? Value() : call.getResult(0);
}

/// `tensor`'s data as a dense buffer the kernel reads.
Value readBuffer(OpBuilder &b, Location loc, Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  return bufferization::ToBufferOp::create(
      b, loc, MemRefType::get(type.getShape(), type.getElementType()), tensor,
      /*read_only=*/true);
}

Value newBuffer(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                Type element) {
  return memref::AllocOp::create(b, loc, MemRefType::get(shape, element),
                                 b.getI64IntegerAttr(64));
}

Value asTensor(OpBuilder &b, Location loc, Value buffer) {
  auto type = cast<MemRefType>(buffer.getType());
  return bufferization::ToTensorOp::create(
      b, loc, RankedTensorType::get(type.getShape(), type.getElementType()),
      buffer, /*restrict=*/true, /*writable=*/true);
}

/// NUL-terminated strings packed back to back, as a read-only buffer.
Value textBuffer(OpBuilder &b, Location loc, ArrayRef<std::string> texts) {
  SmallVector<int8_t> bytes;
  for (const std::string &text : texts) {
    bytes.append(text.begin(), text.end());
    bytes.push_back(0);
  }
  if (bytes.empty())
    bytes.push_back(0);
  auto type = RankedTensorType::get({(int64_t)bytes.size()}, b.getI8Type());
  Value constant = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(type, ArrayRef<int8_t>(bytes)));
  return readBuffer(b, loc, constant);
}

Value i32(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIntOp::create(b, loc, v, 32);
}
Value i64(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIntOp::create(b, loc, v, 64);
}

/// The data of `tensor` flattened to 1-D (a view, no copy).
Value flatten(OpBuilder &b, Location loc, Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  return createReshape(b, loc, tensor, {type.getNumElements()});
}

/// The 1-D buffer `flat` as a tensor of `shape` (a view, no copy).
Value unflatten(OpBuilder &b, Location loc, Value flat,
                ArrayRef<int64_t> shape) {
  return createReshape(b, loc, asTensor(b, loc, flat), shape);
}

struct CastToStringLowering : OpConversionPattern<CastToStringOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(CastToStringOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = op.getInput().getType();
    Value src =
        readBuffer(rewriter, loc, flatten(rewriter, loc, adaptor.getInput()));
    int64_t n = type.getNumElements();
    Value dst = newBuffer(rewriter, loc, {n}, rewriter.getI64Type());
    callKernel(rewriter, op, "strings_from_numbers",
               {i32(rewriter, loc, abiDtypeOf(type.getElementType())), src, dst,
                i64(rewriter, loc, n)});
    rewriter.replaceOp(op, unflatten(rewriter, loc, dst, type.getShape()));
    return success();
  }
};

struct CastFromStringLowering : OpConversionPattern<CastFromStringOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(CastFromStringOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = op.getResult().getType();
    int64_t n = type.getNumElements();
    Type element = getTypeConverter()->convertType(type.getElementType());
    Value src =
        readBuffer(rewriter, loc, flatten(rewriter, loc, adaptor.getInput()));
    Value dst = newBuffer(rewriter, loc, {n}, element);
    std::string node = onnxNodeName(loc);
    std::string what = node.empty() ? "Cast" : "node '" + node + "': Cast";
    Value status = callKernel(
        rewriter, op, "strings_to_numbers",
        {i32(rewriter, loc, abiDtypeOf(type.getElementType())), src, dst,
         i64(rewriter, loc, n), textBuffer(rewriter, loc, {what})},
        {rewriter.getI32Type()});
    // The kernel has reported which string failed; the check ends the run.
    Value ok = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq,
                                     status, i32(rewriter, loc, 0));
    emitRuntimeCheck(rewriter, loc, ok, "Cast: a string is not a number");
    rewriter.replaceOp(op, unflatten(rewriter, loc, dst, type.getShape()));
    return success();
  }
};

struct NormalizeStringsLowering : OpConversionPattern<NormalizeStringsOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(NormalizeStringsOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto inType = op.getInput().getType();
    auto resultType = cast<RankedTensorType>(
        getTypeConverter()->convertType(op.getResult().getType()));
    int64_t n = inType.getNumElements();
    Value src =
        readBuffer(rewriter, loc, flatten(rewriter, loc, adaptor.getInput()));
    int64_t room = std::max<int64_t>(n, 1);
    Value dst = newBuffer(rewriter, loc, {room}, rewriter.getI64Type());
    SmallVector<std::string> stopwords;
    for (Attribute word : op.getStopwords())
      stopwords.push_back(cast<StringAttr>(word).str());
    StringRef action = op.getCaseAction();
    int64_t actionCode = action == "LOWER" ? 1 : action == "UPPER" ? 2 : 0;
    Value count = callKernel(rewriter, op, "normalize_strings",
                             {src, i64(rewriter, loc, n), dst,
                              i32(rewriter, loc, actionCode),
                              i32(rewriter, loc, op.getCaseSensitive() ? 1 : 0),
                              textBuffer(rewriter, loc, stopwords),
                              i64(rewriter, loc, (int64_t)stopwords.size())},
                             {rewriter.getI64Type()});
    Value all = asTensor(rewriter, loc, dst);
    int64_t extent = resultType.getShape().back();
    OpFoldResult size;
    Value countIndex = arith::IndexCastOp::create(
        rewriter, loc, rewriter.getIndexType(), count);
    if (ShapedType::isDynamic(extent)) {
      size = countIndex;
    } else {
      Value ok = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq,
                                       count, i64(rewriter, loc, extent));
      emitRuntimeCheck(rewriter, loc, ok,
                       "StringNormalizer: the number of strings kept differs "
                       "from the declared output extent " +
                           std::to_string(extent));
      size = rewriter.getIndexAttr(extent);
    }
    Value kept = tensor::ExtractSliceOp::create(
        rewriter, loc, all, ArrayRef<OpFoldResult>{rewriter.getIndexAttr(0)},
        ArrayRef<OpFoldResult>{size},
        ArrayRef<OpFoldResult>{rewriter.getIndexAttr(1)});
    if (resultType.getRank() == 2)
      kept = tensor::ExpandShapeOp::create(
          rewriter, loc, resultType, kept, {{0, 1}},
          ArrayRef<OpFoldResult>{rewriter.getIndexAttr(1), size});
    rewriter.replaceOp(op, kept);
    return success();
  }
};

} // namespace

void mlir::kiln::populateKilnStringToLinalgPatterns(
    RewritePatternSet &patterns, TypeConverter &typeConverter) {
  patterns.add<CastToStringLowering, CastFromStringLowering,
               NormalizeStringsLowering>(typeConverter, patterns.getContext());
}
