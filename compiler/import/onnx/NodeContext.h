//===- NodeContext.h - What an op handler sees of one ONNX node -*- C++ -*-===//
//
// Internal to the importer. Each ONNX op type has a handler that receives a
// NodeContext: the node's inputs as kiln values, typed attribute access, the
// opset, and helpers that build kiln ops with shape inference and folding.
// A handler returns the node's results, or fails after recording one error
// message (the importer adds the node name and op type).
//
//===----------------------------------------------------------------------===//
#ifndef KILN_COMPILER_IMPORT_ONNX_NODECONTEXT_H
#define KILN_COMPILER_IMPORT_ONNX_NODECONTEXT_H

#include "compiler/import/common/KilnOpBuilder.h"
#include "dialects/kiln/KilnOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/StringMap.h"

#include <functional>
#include <optional>
#include <string>
#include <type_traits>

namespace onnx {
class GraphProto;
class NodeProto;
class TensorProto;
class AttributeProto;
} // namespace onnx

namespace mlir::kiln::onnx_import {
using mlir::FailureOr;

using mlir::LogicalResult;
using mlir::Value;

/// An ONNX sequence inside the graph, kept by the importer as its list of
/// tensors (ImportSequence.cpp). `elementsKnown` is false when only the
/// length is known (SplitToSequence at run-time sizes).
struct TensorList {
  llvm::SmallVector<Value> elements;
  int64_t length = 0;
  bool elementsKnown = true;
  mlir::Type elementType;
};

/// The builder's `error` is set by a failing handler; the importer prefixes
/// node and op type.
class NodeContext : public KilnOpBuilder {
public:
  NodeContext(mlir::OpBuilder &builder, const onnx::NodeProto &node,
              llvm::ArrayRef<Value> inputs, int64_t opset, mlir::Location loc,
              llvm::StringRef modelDir)
      : KilnOpBuilder(builder, loc), node(node), inputs(inputs), opset(opset),
        modelDir(modelDir) {}

  const onnx::NodeProto &node;
  llvm::ArrayRef<Value> inputs; // null where the ONNX input name is empty
  int64_t opset;
  llvm::StringRef modelDir;
  /// True when the error means "this op/attribute combination is not
  /// supported" rather than "this model is invalid".
  bool errorIsUnsupported = false;
  /// Static shapes the model declares for tensors (graph outputs and
  /// value_info), by name; set by the graph importer.
  const llvm::StringMap<llvm::SmallVector<int64_t>> *declaredShapes = nullptr;
  /// The graph's sequences by name; set by the graph importer.
  llvm::StringMap<TensorList> *sequences = nullptr;
  /// The enclosing graph, this node's index in it, and the value of a
  /// tensor defined before it (null if none); for Gradient, which reads the
  /// nodes before it. Set by the graph importer.
  const onnx::GraphProto *graph = nullptr;
  size_t nodeIndex = 0;
  std::function<Value(const std::string &)> valueOf;
  /// Imports a control-flow body (If branch, Loop/Scan body) in place with
  /// its inputs bound to the given values; its outputs, or failure with
  /// `error` set. Set by the graph importer.
  std::function<FailureOr<llvm::SmallVector<Value>>(const onnx::GraphProto &,
                                                    llvm::ArrayRef<Value>)>
      importSubgraph;
  /// Body nodes imported by control flow so far (unrolled bodies counted
  /// once per copy). Set by the graph importer.
  std::function<uint64_t()> unrolledNodes;
  /// Loops and Scans unroll while the nodes imported by control flow stay
  /// within kUnrollBudget, and run as loops in the artifact beyond it; no
  /// import takes more than kMaxUnrolledNodes body nodes.
  static constexpr uint64_t kUnrollBudget = 100000;
  static constexpr uint64_t kMaxUnrolledNodes = 1000000;
  /// The i64 extent of run-time dim `d` of graph input `v` (one value per
  /// symbol, shared by every input that has it); null for other values.
  std::function<Value(Value, int64_t)> symbolDim;

  const std::string &opType() const;
  size_t numInputs() const { return inputs.size(); }
  bool hasInput(size_t i) const { return i < inputs.size() && inputs[i]; }
  Value input(size_t i) const { return hasInput(i) ? inputs[i] : Value(); }
  size_t numOutputs() const;
  bool hasOutput(size_t i) const;
  mlir::RankedTensorType type(Value v) const {
    return mlir::cast<mlir::RankedTensorType>(v.getType());
  }

  // ---- Attributes ----
  const onnx::AttributeProto *attr(llvm::StringRef name) const;
  bool hasAttr(llvm::StringRef name) const { return attr(name) != nullptr; }
  int64_t attrInt(llvm::StringRef name, int64_t dflt) const;
  double attrFloat(llvm::StringRef name, double dflt) const;
  std::string attrString(llvm::StringRef name, llvm::StringRef dflt) const;
  std::optional<llvm::SmallVector<int64_t>>
  attrInts(llvm::StringRef name) const;
  const onnx::TensorProto *attrTensor(llvm::StringRef name) const;

  // ---- Errors: record and return failure ----
  mlir::FailureOr<llvm::SmallVector<Value>> fail(const std::string &message);
  mlir::FailureOr<llvm::SmallVector<Value>>
  unsupported(const std::string &what);
  /// "needs data-dependent shape" error for input `i` that is not constant.
  mlir::FailureOr<llvm::SmallVector<Value>> needsConstant(size_t i);

  // ---- Values ----
  /// Integer elements of input `i` if it is a compile-time constant.
  std::optional<llvm::SmallVector<int64_t>> constantInts(size_t i) const;
  std::optional<llvm::SmallVector<double>> constantFloats(size_t i) const;
  /// The static shape the model declares for output `i`, if it declares one.
  std::optional<llvm::SmallVector<int64_t>> declaredShape(size_t i) const;
  /// Emits a kiln.assert that makes the run fail with `what` unless the
  /// integer tensor `actual` holds `expected` (row-major).
  LogicalResult requireValues(Value actual, llvm::ArrayRef<int64_t> expected,
                              const std::string &what);
  /// The integer values of shape-like input `i`: its constant elements, or,
  /// when it is a run-time value, the values `implied` derives from the
  /// model's declared output shapes, with a run-time check that the input
  /// holds them (so the op compiles for the declared shape and a run that
  /// disagrees fails). nullopt when neither is available; the caller then
  /// reports needsConstant(i).
  std::optional<llvm::SmallVector<int64_t>> shapeInput(
      size_t i,
      llvm::function_ref<std::optional<llvm::SmallVector<int64_t>>()> implied);
  /// The sequence that input `i` names, or null if it is not one.
  const TensorList *sequenceInput(size_t i) const;
  /// Makes output `i` the sequence `list` (its Value result stays null).
  void setSequenceOutput(size_t i, TensorList list);
  /// Normalizes a possibly negative axis; nullopt when out of range.
  std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank) const;
};

using OpHandler =
    std::function<FailureOr<llvm::SmallVector<Value>>(NodeContext &)>;
/// What a handler returns: the node's results, or failure.
using Results = FailureOr<llvm::SmallVector<Value>>;
/// The results of a one-output node built by NodeContext::make.
inline Results one(FailureOr<Value> v) {
  if (mlir::failed(v))
    return mlir::failure();
  return llvm::SmallVector<Value>{*v};
}

/// Handler tables, one per op family, merged by the graph importer.
void registerElementwiseHandlers(llvm::StringMap<OpHandler> &table);
void registerNNHandlers(llvm::StringMap<OpHandler> &table);
void registerShapeHandlers(llvm::StringMap<OpHandler> &table);
void registerReductionHandlers(llvm::StringMap<OpHandler> &table);
void registerActivationHandlers(llvm::StringMap<OpHandler> &table);
void registerIndexingHandlers(llvm::StringMap<OpHandler> &table);
void registerMathHandlers(llvm::StringMap<OpHandler> &table);
/// HannWindow, HammingWindow, BlackmanWindow (ImportWindows.cpp).
void registerWindowHandlers(llvm::StringMap<OpHandler> &table);
void registerStringHandlers(llvm::StringMap<OpHandler> &table);
/// If, Loop, Scan, unrolled (ImportControlFlow.cpp).
void registerControlFlowHandlers(llvm::StringMap<OpHandler> &table);

/// ImportStrings.cpp: whether op `opType` may take a string tensor, and a
/// cast of `input` to element type `to` (strings included).
bool stringInputAllowed(llvm::StringRef opType);
Results castTo(NodeContext &c, Value input, mlir::Type to);
/// The sequence ops (ImportSequence.cpp): the only handlers that read
/// sequence inputs.
void registerSequenceHandlers(llvm::StringMap<OpHandler> &table);
bool isSequenceOp(llvm::StringRef opType);
/// Gradient of the training domain (ImportGradient.cpp).
void registerGradientHandlers(llvm::StringMap<OpHandler> &table);
/// Ops of the ai.onnx.preview.training domain (their own table).
void registerTrainingHandlers(llvm::StringMap<OpHandler> &table);

/// ONNX TensorProto data type -> MLIR element type (null if unsupported).
mlir::Type elementTypeFor(mlir::MLIRContext *ctx, int32_t onnxType);
/// ONNX TensorProto data type name, for messages ("FLOAT", "STRING", ...).
std::string onnxTypeName(int32_t onnxType);
/// TensorProto -> ElementsAttr; large tensors become dense_resource blobs.
FailureOr<mlir::ElementsAttr> convertTensor(mlir::MLIRContext *ctx,
                                            const onnx::TensorProto &tensor,
                                            llvm::StringRef modelDir,
                                            std::string &error);

} // namespace mlir::kiln::onnx_import

#endif // KILN_COMPILER_IMPORT_ONNX_NODECONTEXT_H
