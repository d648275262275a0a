//===- ImportControlFlowTypes.cpp - Types of run-time If and loops --------===//
//
// The result types of an scf.if and the carried types of an scf.while that
// a model's If, Loop and Scan become: the type two tensor types both fit,
// and the cast to it.
//
//===----------------------------------------------------------------------===//
#include "compiler/import/onnx/ImportControlFlow.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::kiln::onnx_import;

RankedTensorType mlir::kiln::onnx_import::joinTypes(RankedTensorType a,
                                                    RankedTensorType b) {
  if (a.getRank() != b.getRank() || a.getElementType() != b.getElementType())
    return {};
  SmallVector<int64_t> shape;
  for (auto [x, y] : llvm::zip(a.getShape(), b.getShape()))
    shape.push_back(x == y ? x : ShapedType::kDynamic);
  return RankedTensorType::get(shape, a.getElementType());
}

std::string mlir::kiln::onnx_import::typeText(Type t) {
  std::string s;
  llvm::raw_string_ostream(s) << t;
  return s;
}

Value mlir::kiln::onnx_import::widen(OpBuilder &b, Location loc, Value v,
                                     Type type) {
  return v.getType() == type ? v : tensor::CastOp::create(b, loc, type, v);
}
