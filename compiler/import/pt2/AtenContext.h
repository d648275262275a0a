//===- AtenContext.h - What an ATen op handler sees of a node ---*- C++ -*-===//
//
// Internal to the .pt2 importer. A handler gets the FX node's arguments by
// their schema names, with the defaults torch leaves out of the archive
// filled in from one table (AtenSchemas.cpp), the tensors as kiln values,
// and the op builder. It returns the node's outputs in order (null for an
// output nothing may use, such as max_pool2d_with_indices' indices), or
// fails after recording one message.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_COMPILER_IMPORT_PT2_ATENCONTEXT_H
#define KILN_COMPILER_IMPORT_PT2_ATENCONTEXT_H

#include "compiler/import/common/KilnOpBuilder.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/JSON.h"

#include <functional>
#include <optional>

namespace mlir::kiln::pt2 {

/// An op's arguments in schema order: name and default (a union object as
/// the archive writes arguments, or null when the argument is required).
struct OpSchema {
  std::vector<std::pair<std::string, llvm::json::Value>> args;
};

/// The schema of `op` ("aten.conv2d.default"), or null if it has none.
const OpSchema *schemaOf(llvm::StringRef op);

/// The schema's ScalarType code (7: float32) as an element type; null for
/// the codes Kiln has no type for (complex, float8).
Type elementType(MLIRContext *ctx, int64_t code);

class AtenContext : public KilnOpBuilder {
public:
  AtenContext(OpBuilder &builder, Location loc, llvm::StringRef op,
              const llvm::json::Object &node, const OpSchema &schema,
              std::function<Value(llvm::StringRef)> lookup)
      : KilnOpBuilder(builder, loc), op(op), node(node), schema(schema),
        lookup(std::move(lookup)) {}

  llvm::StringRef op; ///< "aten.conv2d.default"
  const llvm::json::Object &node;
  const OpSchema &schema;
  std::function<Value(llvm::StringRef)> lookup;
  /// The program's graph (its tensor_values and sym_int_values give the
  /// sympy expression of each symbolic size); null in tests of handlers.
  const llvm::json::Object *graph = nullptr;
  /// The program's symbolic scalars computed so far, by name: SymInts
  /// (sym_size and the `_operator` arithmetic on them) as i64 values,
  /// SymFloats as f64, SymBools as i1; null in tests.
  llvm::StringMap<Value> *symScalars = nullptr;

  /// The argument's union object ({"as_int": 3}, ...): the node's, else the
  /// schema's default; null if neither.
  const llvm::json::Object *arg(llvm::StringRef name) const;
  bool isNone(llvm::StringRef name) const;
  /// A tensor argument; failure (recorded) when missing or not a tensor.
  FailureOr<Value> tensor(llvm::StringRef name);
  /// A tensor argument that may be None (null Value).
  FailureOr<Value> optionalTensor(llvm::StringRef name);
  FailureOr<llvm::SmallVector<Value>> tensors(llvm::StringRef name);
  FailureOr<int64_t> integer(llvm::StringRef name);
  FailureOr<llvm::SmallVector<int64_t>> ints(llvm::StringRef name);
  /// The sizes of a view of tensor argument `input` (a SymInt list):
  /// constants as given, and kDynamic for an entry that names a symbolic
  /// size equal to `input`'s own dim at the same position (the view keeps
  /// that dim). Fails (recorded) on any other symbolic entry.
  /// With `runTime`, any other symbolic entry that the program computed
  /// (a product of sizes, say) is kDynamic too, its i64 value in
  /// `runTime` at that position (null elsewhere).
  FailureOr<llvm::SmallVector<int64_t>>
  viewSizes(llvm::StringRef name, llvm::StringRef input,
            llvm::SmallVectorImpl<Value> *runTime = nullptr);
  /// A SymInt argument as an i64 value: a constant, or a symbolic integer
  /// the program computed before this node (a SymBool counts as 0 or 1).
  FailureOr<Value> symInt(llvm::StringRef name);
  /// A scalar argument as the program computes it: an int, float or bool
  /// constant, or a SymInt/SymFloat/SymBool computed before this node, as
  /// an i64, f64 or i1 value.
  FailureOr<Value> symScalar(llvm::StringRef name);
  /// Records `value` (i64, f64 or i1) as the node's symbolic output.
  void setSymOutput(Value value);
  /// The static extents the archive records for the node's rank-`rank`
  /// tensor output, -1 for symbolic ones (all -1 when it records none): a
  /// dynamic_reshape/dynamic_expand's `static_shape`.
  llvm::SmallVector<int64_t> outputStaticShape(int64_t rank) const;
  /// Extent `d` of `x` as an i64: a constant, or read when the model runs.
  Value extent(Value x, int64_t d);
  /// as_float (also "Infinity", "-Infinity", "NaN") or as_int.
  FailureOr<double> number(llvm::StringRef name);
  FailureOr<bool> boolean(llvm::StringRef name);
  FailureOr<std::string> string(llvm::StringRef name);
  /// A dtype argument (as_scalar_type); `dflt` when it is None.
  FailureOr<Type> scalarType(llvm::StringRef name, Type dflt);

  mlir::RankedTensorType type(Value v) const {
    return mlir::cast<mlir::RankedTensorType>(v.getType());
  }
  /// Normalizes a possibly negative dim; failure (recorded) if out of range.
  FailureOr<int64_t> dim(int64_t d, int64_t rank);
  /// A slice's start or end on a dim of `extent` (Python's rules: None is
  /// `dflt`, negatives count from the end, clamped to [0, extent]).
  FailureOr<int64_t> sliceBound(llvm::StringRef name, int64_t dflt,
                                int64_t extent);
  /// A reshape to `shape`; a dynamic entry keeps the input's dynamic dim
  /// at the same position (a kiln.dynamic_reshape copying it, the static
  /// dims kept in the result type). Fails (recorded) if it would move one.
  FailureOr<Value> reshape(Value x, llvm::ArrayRef<int64_t> shape);
  /// x[start:end:step] along `dim`, whole along the others.
  FailureOr<Value> slice(Value x, int64_t dim, int64_t start, int64_t end,
                         int64_t step = 1);
  /// A constant of `shape` and element `type` filled with `value`.
  Value filled(llvm::ArrayRef<int64_t> shape, mlir::Type type, double value);

  /// Records `message` and fails.
  mlir::LogicalResult fail(const llvm::Twine &message);
};

using Results = FailureOr<llvm::SmallVector<Value>>;
using AtenHandler = std::function<Results(AtenContext &)>;

/// The results of a one-output node.
inline Results one(FailureOr<Value> v) {
  if (mlir::failed(v))
    return mlir::failure();
  return llvm::SmallVector<Value>{*v};
}

/// Handler tables by op family, merged by the importer.
void registerAtenNNHandlers(llvm::StringMap<AtenHandler> &table);
void registerAtenTensorHandlers(llvm::StringMap<AtenHandler> &table);
void registerAtenIndexingHandlers(llvm::StringMap<AtenHandler> &table);
void registerAtenSymbolicHandlers(llvm::StringMap<AtenHandler> &table);

} // namespace mlir::kiln::pt2

#endif // KILN_COMPILER_IMPORT_PT2_ATENCONTEXT_H
