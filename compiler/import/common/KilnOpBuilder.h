//===- KilnOpBuilder.h - Building kiln ops in an importer -------*- C++ -*-===//
//
// What every frontend (ONNX, torch.export) needs to emit kiln ops: create an
// op with its result type inferred and fold it right away, failing with the
// inference diagnostic instead of asserting, and make constants. The ONNX
// importer's NodeContext and the .pt2 importer's AtenContext build on it.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_COMPILER_IMPORT_COMMON_KILNOPBUILDER_H
#define KILN_COMPILER_IMPORT_COMMON_KILNOPBUILDER_H

#include "dialects/kiln/KilnOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

#include <string>
#include <type_traits>

namespace mlir::kiln {

/// Whether ODS generated populateDefaultProperties for OpTy (ops with
/// default-valued attributes).
template <typename OpTy, typename = void>
struct HasDefaultProperties : std::false_type {};
template <typename OpTy>
struct HasDefaultProperties<
    OpTy, std::void_t<decltype(OpTy::populateDefaultProperties(
              std::declval<mlir::OperationName>(),
              std::declval<typename OpTy::Properties &>()))>> : std::true_type {
};

class KilnOpBuilder {
public:
  KilnOpBuilder(mlir::OpBuilder &builder, mlir::Location loc)
      : b(builder), loc(loc) {}

  mlir::OpBuilder &b;
  mlir::Location loc;
  /// Set by a failing handler; the importer adds where it happened.
  std::string error;

  mlir::MLIRContext *ctx() const { return b.getContext(); }

  /// Builds a kiln op with inferred result type and folds it. Fails (with
  /// the inference diagnostic recorded in `error` by the importer's
  /// diagnostic handler) instead of asserting.
  template <typename OpTy>
  mlir::FailureOr<mlir::Value>
  make(mlir::ValueRange operands,
       llvm::ArrayRef<mlir::NamedAttribute> attrs = {}) {
    mlir::DictionaryAttr dict = mlir::DictionaryAttr::get(ctx(), attrs);
    typename OpTy::Properties props;
    // Default-valued attributes the caller left out must read as their
    // defaults during inference, as they will on the created op.
    if constexpr (HasDefaultProperties<OpTy>::value)
      OpTy::populateDefaultProperties(
          mlir::OperationName(OpTy::getOperationName(), ctx()), props);
    auto diagnose = [&]() { return mlir::emitError(loc); };
    if (mlir::failed(OpTy::setPropertiesFromAttr(props, dict, diagnose)))
      return mlir::failure();
    llvm::SmallVector<mlir::Type> types;
    if (mlir::failed(OpTy::inferReturnTypes(
            ctx(), loc, typename OpTy::Adaptor(operands, dict, props), types)))
      return mlir::failure();
    mlir::OperationState state(loc, OpTy::getOperationName());
    state.addOperands(operands);
    state.addAttributes(attrs);
    state.addTypes(types);
    return foldOrKeep(b.create(state));
  }

  mlir::Value constant(mlir::ElementsAttr value);
  /// A rank-0 constant.
  mlir::Value scalar(mlir::Type elementType, double value);

  mlir::NamedAttribute named(llvm::StringRef name, mlir::Attribute value) {
    return b.getNamedAttr(name, value);
  }
  mlir::DenseI64ArrayAttr i64s(llvm::ArrayRef<int64_t> values) {
    return b.getDenseI64ArrayAttr(values);
  }

private:
  mlir::Value foldOrKeep(mlir::Operation *op);
};

} // namespace mlir::kiln

#endif // KILN_COMPILER_IMPORT_COMMON_KILNOPBUILDER_H
