//===- ScalarOps.h - Scalar arith at one insertion point --------*- C++ -*-===//
//
// For lowerings that build sequential scf loops (NonMaxSuppression, Unique):
// the arith ops of loop bodies, named short so that the loops read like the
// algorithm.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PASSES_LOWERING_SCALAROPS_H
#define KILN_PASSES_LOWERING_SCALAROPS_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"

namespace mlir::kiln {

/// Scalar arithmetic at one insertion point.
struct ScalarOps {
  OpBuilder &b;
  Location l;
  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, l, v); }
  Value i64(int64_t v) {
    return arith::ConstantOp::create(b, l, b.getI64IntegerAttr(v));
  }
  Value f64(double v) {
    return arith::ConstantOp::create(b, l, b.getF64FloatAttr(v));
  }
  Value flag(bool v) {
    return arith::ConstantOp::create(b, l, b.getBoolAttr(v));
  }
  Value andi(Value x, Value y) { return arith::AndIOp::create(b, l, x, y); }
  Value ori(Value x, Value y) { return arith::OrIOp::create(b, l, x, y); }
  Value noti(Value x) { return arith::XOrIOp::create(b, l, x, flag(true)); }
  Value cmpf(arith::CmpFPredicate p, Value x, Value y) {
    return arith::CmpFOp::create(b, l, p, x, y);
  }
  Value cmpi(arith::CmpIPredicate p, Value x, Value y) {
    return arith::CmpIOp::create(b, l, p, x, y);
  }
  Value select(Value c, Value x, Value y) {
    return arith::SelectOp::create(b, l, c, x, y);
  }
  Value addi(Value x, Value y) { return arith::AddIOp::create(b, l, x, y); }
  Value addf(Value x, Value y) { return arith::AddFOp::create(b, l, x, y); }
  Value subf(Value x, Value y) { return arith::SubFOp::create(b, l, x, y); }
  Value mulf(Value x, Value y) { return arith::MulFOp::create(b, l, x, y); }
  Value divf(Value x, Value y) { return arith::DivFOp::create(b, l, x, y); }
  Value toIndex(Value v) {
    return arith::IndexCastOp::create(b, l, b.getIndexType(), v);
  }
  Value toI64(Value v) {
    return arith::IndexCastOp::create(b, l, b.getI64Type(), v);
  }
  Value at(Value t, ValueRange coords) {
    return tensor::ExtractOp::create(b, l, t, coords);
  }
};

} // namespace mlir::kiln

#endif // KILN_PASSES_LOWERING_SCALAROPS_H
