//===- KernelBuilder.cpp - Small IR builders the GPU kernels share --------===//
#include "backends/gpu/KernelBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::kiln;

Value gpu_kernels::index(OpBuilder &b, Location loc, int64_t value) {
  return arith::ConstantIndexOp::create(b, loc, value);
}

gpu::LaunchOp gpu_kernels::createLaunch(OpBuilder &b, Location loc,
                                        ArrayRef<Value> grid,
                                        ArrayRef<int64_t> block,
                                        TypeRange workgroup) {
  Value one = index(b, loc, 1);
  auto dim = [&](ArrayRef<Value> sizes, size_t i) {
    return i < sizes.size() ? sizes[i] : one;
  };
  SmallVector<Value> blockSizes;
  for (int64_t size : block)
    blockSizes.push_back(index(b, loc, size));
  auto launch = gpu::LaunchOp::create(
      b, loc, dim(grid, 0), dim(grid, 1), dim(grid, 2), dim(blockSizes, 0),
      dim(blockSizes, 1), dim(blockSizes, 2), /*dynamicSharedMemorySize=*/{},
      /*asyncTokenType=*/{}, /*asyncDependencies=*/{}, workgroup);
  Block &body = launch.getBody().front();
  b.setInsertionPointToEnd(&body);
  gpu::TerminatorOp::create(b, loc);
  b.setInsertionPointToStart(&body);
  return launch;
}

MemRefType gpu_kernels::workgroupMemRef(ArrayRef<int64_t> shape, Type element) {
  MLIRContext *ctx = element.getContext();
  return MemRefType::get(
      shape, element, MemRefLayoutAttrInterface(),
      gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup));
}

SmallVector<Value> gpu_kernels::delinearize(OpBuilder &b, Location loc,
                                            Value linear,
                                            ArrayRef<int64_t> sizes) {
  if (sizes.empty())
    return {};
  SmallVector<Value> values;
  for (int64_t size : sizes.drop_front())
    values.push_back(index(b, loc, size));
  // The leading size is never read.
  values.insert(values.begin(), linear);
  return delinearize(b, loc, linear, ValueRange(values));
}

SmallVector<Value> gpu_kernels::delinearize(OpBuilder &b, Location loc,
                                            Value linear, ValueRange sizes) {
  SmallVector<Value> indices(sizes.size());
  Value rest = linear;
  for (int64_t d = int64_t(sizes.size()) - 1; d >= 0; --d) {
    if (d == 0) {
      indices[d] = rest;
      break;
    }
    indices[d] = arith::RemUIOp::create(b, loc, rest, sizes[d]);
    rest = arith::DivUIOp::create(b, loc, rest, sizes[d]);
  }
  return indices;
}

Value gpu_kernels::linearize(OpBuilder &b, Location loc, ValueRange indices,
                             ValueRange sizes) {
  Value linear = index(b, loc, 0);
  for (auto [i, size] : llvm::zip(indices, sizes))
    linear = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, linear, size), i);
  return linear;
}

Value gpu_kernels::linearize(OpBuilder &b, Location loc, ValueRange indices,
                             ArrayRef<int64_t> sizes) {
  Value linear = index(b, loc, 0);
  for (auto [i, size] : llvm::zip(indices, sizes))
    linear = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, linear, index(b, loc, size)), i);
  return linear;
}

Value gpu_kernels::guardedLoad(OpBuilder &b, Location loc, Value memref,
                               ValueRange indices, Value inBounds,
                               Value fallback) {
  auto ifOp = scf::IfOp::create(b, loc, TypeRange{fallback.getType()}, inBounds,
                                /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  scf::YieldOp::create(
      b, loc, memref::LoadOp::create(b, loc, memref, indices).getResult());
  b.setInsertionPointToStart(&ifOp.getElseRegion().front());
  scf::YieldOp::create(b, loc, fallback);
  return ifOp.getResult(0);
}

Value gpu_kernels::shuffleXor(OpBuilder &b, Location loc, Value value,
                              int64_t offset, int64_t width) {
  Type i32 = b.getI32Type();
  return gpu::ShuffleOp::create(
             b, loc, value, arith::ConstantIntOp::create(b, loc, i32, offset),
             arith::ConstantIntOp::create(b, loc, i32, width),
             gpu::ShuffleMode::XOR)
      .getShuffleResult();
}

SmallVector<Value> gpu_kernels::withIndices(ValueRange lead, Value i, Value j) {
  SmallVector<Value> indices(lead.begin(), lead.end());
  indices.push_back(i);
  indices.push_back(j);
  return indices;
}

Value gpu_kernels::lessThan(OpBuilder &b, Location loc, Value a, Value bound) {
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, a, bound);
}

/// `expr` (dims, constants, sums and products) on index values.
static Value evaluate(OpBuilder &b, Location loc, AffineExpr expr,
                      ValueRange loops) {
  if (auto dim = dyn_cast<AffineDimExpr>(expr))
    return loops[dim.getPosition()];
  if (auto constant = dyn_cast<AffineConstantExpr>(expr))
    return gpu_kernels::index(b, loc, constant.getValue());
  auto binary = cast<AffineBinaryOpExpr>(expr);
  Value lhs = evaluate(b, loc, binary.getLHS(), loops);
  Value rhs = evaluate(b, loc, binary.getRHS(), loops);
  switch (binary.getKind()) {
  case AffineExprKind::Add:
    return arith::AddIOp::create(b, loc, lhs, rhs);
  case AffineExprKind::Mul:
    return arith::MulIOp::create(b, loc, lhs, rhs);
  case AffineExprKind::FloorDiv:
    return arith::DivUIOp::create(b, loc, lhs, rhs);
  case AffineExprKind::Mod:
    return arith::RemUIOp::create(b, loc, lhs, rhs);
  default:
    llvm_unreachable("ceildiv in an indexing map");
  }
}

SmallVector<Value> gpu_kernels::applyMap(OpBuilder &b, Location loc,
                                         AffineMap map, ValueRange loops) {
  SmallVector<Value> indices;
  for (AffineExpr expr : map.getResults())
    indices.push_back(evaluate(b, loc, expr, loops));
  return indices;
}

bool gpu_kernels::isStaticF32Tensor(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  return type && type.hasStaticShape() && type.getElementType().isF32();
}

Value gpu_kernels::readOnlyBuffer(OpBuilder &b, Location loc, Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  return bufferization::ToBufferOp::create(
      b, loc, MemRefType::get(type.getShape(), type.getElementType()), tensor,
      /*read_only=*/true);
}

Value gpu_kernels::newBuffer(OpBuilder &b, Location loc,
                             ArrayRef<int64_t> shape, Type element) {
  return memref::AllocOp::create(b, loc, MemRefType::get(shape, element),
                                 b.getI64IntegerAttr(64));
}

SmallVector<Value> gpu_kernels::tensorExtents(OpBuilder &b, Location loc,
                                              Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  SmallVector<Value> extents;
  for (int64_t d = 0; d < type.getRank(); ++d)
    extents.push_back(type.isDynamicDim(d)
                          ? tensor::DimOp::create(b, loc, tensor, d).getResult()
                          : index(b, loc, type.getDimSize(d)));
  return extents;
}

Value gpu_kernels::newBufferLike(OpBuilder &b, Location loc, Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  SmallVector<Value> dynamic;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (type.isDynamicDim(d))
      dynamic.push_back(tensor::DimOp::create(b, loc, tensor, d));
  return memref::AllocOp::create(
      b, loc, MemRefType::get(type.getShape(), type.getElementType()), dynamic,
      b.getI64IntegerAttr(64));
}

Value gpu_kernels::asTensor(OpBuilder &b, Location loc, Value buffer) {
  auto type = cast<MemRefType>(buffer.getType());
  return bufferization::ToTensorOp::create(
      b, loc, RankedTensorType::get(type.getShape(), type.getElementType()),
      buffer, /*restrict=*/true, /*writable=*/true);
}

gpu_kernels::MfmaOperand gpu_kernels::mfmaOperandFor(Type element,
                                                     StringRef precision) {
  if (element.isF16() || precision == "fp16")
    return MfmaOperand::F16;
  if (element.isBF16() || precision == "bf16")
    return MfmaOperand::BF16;
  return MfmaOperand::F32;
}

Value gpu_kernels::guardedLoadF32(OpBuilder &b, Location loc, Value memref,
                                  ValueRange indices, Value inBounds) {
  Type element = cast<MemRefType>(memref.getType()).getElementType();
  Value value = guardedLoad(
      b, loc, memref, indices, inBounds,
      arith::ConstantOp::create(b, loc, b.getFloatAttr(element, 0.0)));
  return element.isF32() ? value
                         : arith::ExtFOp::create(b, loc, b.getF32Type(), value);
}

Type gpu_kernels::mfmaElementType(OpBuilder &b, MfmaOperand operand) {
  switch (operand) {
  case MfmaOperand::F16:
    return b.getF16Type();
  case MfmaOperand::BF16:
    return b.getBF16Type();
  case MfmaOperand::F32:
    return b.getF32Type();
  }
  return b.getF32Type();
}

int64_t gpu_kernels::mfmaPerLane(MfmaOperand operand) {
  return operand == MfmaOperand::F32 ? 1 : 4;
}

Value gpu_kernels::IndexMath::add(Value x, int64_t y) {
  return y == 0 ? x : arith::AddIOp::create(b, loc, x, index(b, loc, y));
}
Value gpu_kernels::IndexMath::add(Value x, Value y) {
  return arith::AddIOp::create(b, loc, x, y);
}
Value gpu_kernels::IndexMath::mul(Value x, int64_t y) {
  return arith::MulIOp::create(b, loc, x, index(b, loc, y));
}
Value gpu_kernels::IndexMath::div(Value x, int64_t y) {
  return arith::DivUIOp::create(b, loc, x, index(b, loc, y));
}
Value gpu_kernels::IndexMath::rem(Value x, int64_t y) {
  return arith::RemUIOp::create(b, loc, x, index(b, loc, y));
}
Value gpu_kernels::IndexMath::both(Value p, Value q) {
  return arith::AndIOp::create(b, loc, p, q);
}
