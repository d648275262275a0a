//===- SymbolicShapes.h - Shape arithmetic on symbolic dims -*- C++ -*-----===//
//
// Internal to the importer. A model exported with dynamic axes computes its
// Reshape/Expand/ConstantOfShape shapes from `Shape(x)` at run time:
// `Shape -> Gather -> Unsqueeze -> Concat -> Reshape`. The importer keeps
// such small integer tensors as `tensor.from_elements` of i64 scalars, each
// a constant or index arithmetic on the run-time extents (`tensor.dim`), so
// that the chain folds to scalars instead of tensors in memory, and the ops
// that consume a shape know which of its entries are static.
//
//   %seq = tensor.dim %x, %c1 ; %s = arith.index_cast %seq : index to i64
//   %shape = tensor.from_elements %b, %s, %c4, %c16 : tensor<4xi64>
//   %y = kiln.dynamic_reshape %x, %shape {static_shape = [-1, -1, 4, 16]}
//
//===----------------------------------------------------------------------===//
#ifndef KILN_COMPILER_IMPORT_ONNX_SYMBOLICSHAPES_H
#define KILN_COMPILER_IMPORT_ONNX_SYMBOLICSHAPES_H

#include "compiler/import/onnx/NodeContext.h"

#include "mlir/IR/OpDefinition.h"

namespace mlir::kiln::onnx_import {

/// One entry of a symbolic shape: an i64 constant (IntegerAttr) or an i64
/// value computed when the model runs.
using SymInt = mlir::OpFoldResult;
using SymInts = llvm::SmallVector<SymInt>;

/// The constant of `v`, if it is one.
std::optional<int64_t> constantOf(SymInt v);

/// `v` as an i64 scalar: a constant when known, else its value.
Value i64Value(mlir::OpBuilder &b, mlir::Location loc, SymInt v);

/// The entries of integer input `i` when it is a constant or a symbolic
/// shape (`tensor.from_elements` of scalars); nullopt otherwise.
std::optional<SymInts> symbolicInts(const NodeContext &c, size_t i);

/// Whether `v` is a symbolic shape that is not constant.
bool isSymbolicShape(Value v);

/// `tensor.from_elements` of `values` shaped and typed as `type` (an
/// integer tensor type).
Value materialize(NodeContext &c, llvm::ArrayRef<SymInt> values,
                  mlir::RankedTensorType type);

/// Extent `d` of `v`: a constant when static, else `tensor.dim` (shared by
/// the graph inputs' symbols, see NodeContext::dimOf).
SymInt dimOf(NodeContext &c, Value v, int64_t d);

/// The element count of `v` as a SymInt.
SymInt numElementsOf(NodeContext &c, Value v);

SymInt mulSym(NodeContext &c, SymInt a, SymInt b);

/// Replaces a kiln op just built on symbolic shapes (gather, reshape,
/// concat, cast, slice, add/sub/mul/div) by the shape it computes, as
/// `tensor.from_elements`; returns `v` itself when it does not apply.
Value foldShapeArithmetic(NodeContext &c, Value v);

/// ONNX Reshape of `input` to `target` (0 copies the input's dim unless
/// `allowZero`, one -1 takes the rest) when the input or the target has
/// run-time extents: `kiln.dynamic_reshape` with the static entries known.
FailureOr<Value> reshapeSymbolic(NodeContext &c, Value input,
                                 llvm::ArrayRef<SymInt> target, bool allowZero);

/// ONNX Expand of `input` to the symbolic `shape`, bidirectional numpy
/// broadcast: `kiln.dynamic_expand`.
FailureOr<Value> expandSymbolic(NodeContext &c, Value input,
                                llvm::ArrayRef<SymInt> shape);

} // namespace mlir::kiln::onnx_import

#endif // KILN_COMPILER_IMPORT_ONNX_SYMBOLICSHAPES_H
