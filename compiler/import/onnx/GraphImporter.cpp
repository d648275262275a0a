//===- GraphImporter.cpp - ONNX graph -> func.func @main in kiln ----------===//
//
// Walks the (topologically sorted) ONNX graph once. Graph inputs become
// function arguments, initializers become kiln.constant ops when first used,
// and each node is handed to the handler registered for its op type. Every op
// a handler builds is located at the node (FusedLoc of the node name, with the
// op type as metadata), so any later diagnostic names the ONNX node.
//
//===----------------------------------------------------------------------===//

#include "compiler/import/common/TensorLimits.h"
#include "compiler/import/onnx/NodeContext.h"
#include "compiler/import/onnx/OnnxImporter.h"
#include "compiler/import/onnx/SymbolicShapes.h"

#include "onnx/onnx.pb.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Path.h"
#include <fmt/format.h>

#include <limits>
#include <optional>

using namespace mlir;
using namespace mlir::kiln::onnx_import;

namespace {
llvm::Error fail(const std::string &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

const llvm::StringMap<OpHandler> &handlerTable() {
  static const llvm::StringMap<OpHandler> table = [] {
    llvm::StringMap<OpHandler> t;
    registerElementwiseHandlers(t);
    registerNNHandlers(t);
    registerShapeHandlers(t);
    registerReductionHandlers(t);
    registerActivationHandlers(t);
    registerIndexingHandlers(t);
    registerSequenceHandlers(t);
    registerControlFlowHandlers(t);
    return t;
  }();
  return table;
}

/// The ONNX training domain; models of only its ops import no default opset.
constexpr const char *kTrainingDomain = "ai.onnx.preview.training";

/// The newest opset of the default domain whose changes the handlers know
/// (opset 21 changed QuantizeLinear, DequantizeLinear and others in ways
/// an older reading would get wrong, silently).
constexpr int64_t kNewestOpset = 20;

/// How many inputs and outputs a node of an op may have, per schema
/// version (OpArity.inc, generated from ONNX's schemas).
struct OpArity {
  const char *domain, *op;
  int64_t since;
  unsigned minInputs, maxInputs; // 255: variadic
  uint32_t required;             // bit i: input i may not be ""
  unsigned minOutputs, maxOutputs;
};

const OpArity kArities[] = {
#include "compiler/import/onnx/OpArity.inc"
};

/// "" or why `node` does not have the inputs and outputs its op takes at
/// `opset`.
std::string arityError(const onnx::NodeProto &node, int64_t opset) {
  const OpArity *arity = nullptr;
  int64_t firstSince = 0;
  for (const OpArity &entry : kArities)
    if (node.domain() == entry.domain && node.op_type() == entry.op) {
      if (!firstSince || entry.since < firstSince)
        firstSince = entry.since;
      if (entry.since <= opset)
        arity = &entry;
    }
  // An op ONNX added after the model's opset is not one of its ops (a
  // model without opset_import is at opset 1).
  if (!arity && firstSince)
    return fmt::format("is not an op of opset {}; ONNX added {} in opset {}",
                       opset, node.op_type(), firstSince);
  if (!arity)
    return "";
  auto range = [](unsigned lo, unsigned hi) {
    return hi == 255  ? fmt::format("at least {}", lo)
           : lo == hi ? fmt::format("{}", lo)
                      : fmt::format("{} to {}", lo, hi);
  };
  unsigned inputs = node.input_size(), outputs = node.output_size();
  if (inputs < arity->minInputs ||
      (arity->maxInputs != 255 && inputs > arity->maxInputs))
    return fmt::format("has {} inputs; {} (opset {}) takes {}", inputs,
                       node.op_type(), opset,
                       range(arity->minInputs, arity->maxInputs));
  if (outputs < arity->minOutputs ||
      (arity->maxOutputs != 255 && outputs > arity->maxOutputs))
    return fmt::format("has {} outputs; {} (opset {}) has {}", outputs,
                       node.op_type(), opset,
                       range(arity->minOutputs, arity->maxOutputs));
  for (unsigned i = 0; i < inputs && i < 32; ++i)
    if ((arity->required >> i & 1) && node.input(i).empty())
      return fmt::format("leaves input {} empty, which {} requires", i,
                         node.op_type());
  return "";
}

/// Longest ONNX name accepted (tensor, node, input or output names).
constexpr size_t kMaxNameBytes = 4096;

/// "" or why the name `name` of a `what` is refused: control characters
/// (which would rewrite the user's terminal in our messages) or a length
/// no real model has.
std::string badName(const std::string &name, StringRef what) {
  if (name.size() > kMaxNameBytes)
    return fmt::format("a {} has a name of {} bytes (starting '{}...'); "
                       "names are limited to {} bytes",
                       what.str(), name.size(), name.substr(0, 32),
                       kMaxNameBytes);
  for (char c : name)
    if ((unsigned char)c < 0x20 || c == 0x7f) {
      std::string shown;
      for (char d : name)
        shown += (unsigned char)d < 0x20 || d == 0x7f
                     ? fmt::format("\\x{:02x}", (unsigned char)d)
                     : std::string(1, d);
      return fmt::format("the {} '{}' contains a control character", what.str(),
                         shown);
    }
  return "";
}

/// The first refused name of the graph's inputs, outputs, initializers,
/// value infos and nodes, as an error.
llvm::Error checkNames(const onnx::GraphProto &graph) {
  auto check = [](const std::string &name, StringRef what) -> llvm::Error {
    if (std::string why = badName(name, what); !why.empty())
      return llvm::createStringError(llvm::inconvertibleErrorCode(), why);
    return llvm::Error::success();
  };
  for (const auto &vi : graph.input())
    if (auto err = check(vi.name(), "graph input"))
      return err;
  for (const auto &vi : graph.output())
    if (auto err = check(vi.name(), "graph output"))
      return err;
  for (const auto &vi : graph.value_info())
    if (auto err = check(vi.name(), "tensor"))
      return err;
  for (const auto &t : graph.initializer())
    if (auto err = check(t.name(), "initializer"))
      return err;
  for (const auto &node : graph.node()) {
    if (auto err = check(node.name(), "node"))
      return err;
    for (const std::string &name : node.input())
      if (auto err = check(name, "node input"))
        return err;
    for (const std::string &name : node.output())
      if (auto err = check(name, "node output"))
        return err;
  }
  return llvm::Error::success();
}

const llvm::StringMap<OpHandler> &trainingHandlerTable() {
  static const llvm::StringMap<OpHandler> table = [] {
    llvm::StringMap<OpHandler> t;
    registerTrainingHandlers(t);
    registerGradientHandlers(t);
    return t;
  }();
  return table;
}

bool isDefaultDomain(const std::string &domain) {
  return domain.empty() || domain == "ai.onnx";
}

class GraphImporter {
public:
  GraphImporter(MLIRContext &ctx, const onnx::ModelProto &model,
                StringRef modelPath, const ImportOptions &options)
      : ctx(ctx), model(model), graph(model.graph()), options(options),
        modelDir(llvm::sys::path::parent_path(modelPath).str()),
        modelPath(modelPath.str()) {
    if (modelDir.empty())
      modelDir = ".";
  }

  llvm::Expected<OwningOpRef<ModuleOp>> run();

private:
  llvm::Error readOpset();
  llvm::Expected<RankedTensorType> inputType(const onnx::ValueInfoProto &vi);
  llvm::Expected<Value> lookup(const std::string &name, OpBuilder &b);
  llvm::Error importNode(const onnx::NodeProto &node, size_t index,
                         OpBuilder &b);
  llvm::Error declareSymbols(func::FuncOp func, ArrayRef<std::string> argNames,
                             OpBuilder &b);
  /// Imports the nodes of a control-flow body with its inputs bound to
  /// `inputs`, returns its outputs and forgets its names again (so the body
  /// can be imported once per unrolled iteration).
  FailureOr<SmallVector<Value>> importSubgraph(const onnx::GraphProto &body,
                                               ArrayRef<Value> inputs,
                                               OpBuilder &b,
                                               std::string &error);

  MLIRContext &ctx;
  const onnx::ModelProto &model;
  const onnx::GraphProto &graph;
  const ImportOptions &options;
  std::string modelDir, modelPath;
  int64_t opset = 0, trainingOpset = 0;
  llvm::StringMap<Value> values;
  llvm::StringMap<const onnx::TensorProto *> initializers;
  llvm::StringMap<SmallVector<int64_t>> declaredShapes;
  llvm::StringMap<TensorList> sequences;
  /// Per graph input with symbolic dims: each dim's symbol ("" if static).
  llvm::StringMap<SmallVector<std::string>> inputSymbols;
  /// The i64 extent of each symbol, and of each symbolic (input, dim).
  llvm::StringMap<Value> symbolValues;
  llvm::DenseMap<std::pair<Value, int64_t>, Value> inputDims;
  /// The entry block of @main, where initializers become constants.
  Block *entry = nullptr;
  /// Control-flow bodies being imported (nesting), and the nodes imported
  /// from bodies so far (unrolled loops multiply them).
  int subgraphDepth = 0;
  uint64_t subgraphNodes = 0;
  /// Who wrote each tensor name: "graph input 'x'" or "node 'n' (Op)".
  llvm::StringMap<std::string> writers;
  std::string lastDiagnostic;
};

llvm::Error GraphImporter::readOpset() {
  for (const auto &entry : model.opset_import()) {
    if (isDefaultDomain(entry.domain()))
      opset = entry.version();
    else if (entry.domain() == kTrainingDomain)
      trainingOpset = entry.version();
  }
  if (opset == 0 && model.opset_import_size() == 0)
    opset = 1; // IR version 1 models have no opset_import
  // A model of training ops only may import no default opset; a default
  // domain node in it fails in importNode.
  if (opset == 0 && trainingOpset == 0)
    return fail("the model imports no opset of the default ONNX domain");
  if (opset > kNewestOpset)
    return fail(fmt::format("the model imports opset {} of the default ONNX "
                            "domain; Kiln knows opsets up to {} (export with "
                            "opset_version={} or older)",
                            opset, kNewestOpset, kNewestOpset));
  return llvm::Error::success();
}

llvm::Expected<RankedTensorType>
GraphImporter::inputType(const onnx::ValueInfoProto &vi) {
  const auto &tt = vi.type().tensor_type();
  if (!vi.type().has_tensor_type())
    return fail(fmt::format("input '{}' is not a tensor (sequences, maps and "
                            "optionals are not supported)",
                            vi.name()));
  Type elementType = tt.elem_type() == onnx::TensorProto::STRING
                         ? kiln::StringType::get(&ctx)
                         : elementTypeFor(&ctx, tt.elem_type());
  if (!elementType)
    return fail(fmt::format("input '{}' has unsupported element type {}",
                            vi.name(), onnxTypeName(tt.elem_type())));
  auto it = options.inputShapes.find(vi.name());
  if (it != options.inputShapes.end())
    return RankedTensorType::get(it->second, elementType);
  if (!tt.has_shape())
    return fail(fmt::format("input '{}' has no shape; give one with "
                            "--input-shape {}=D0,D1,...",
                            vi.name(), vi.name()));
  SmallVector<int64_t> shape;
  for (const auto &dim : tt.shape().dim()) {
    if (dim.has_dim_value() && dim.dim_value() < 0)
      return fail(fmt::format("input '{}' dim {} is {}: dims cannot be "
                              "negative",
                              vi.name(), shape.size(), dim.dim_value()));
    if (!dim.has_dim_value()) {
      // A symbolic dim: named by dim_param (shared by every input that
      // names it), else a symbol of its own.
      std::string symbol = dim.has_dim_param() && !dim.dim_param().empty()
                               ? dim.dim_param()
                               : fmt::format("{}.{}", vi.name(), shape.size());
      inputSymbols[vi.name()].resize(tt.shape().dim_size());
      inputSymbols[vi.name()][shape.size()] = symbol;
      shape.push_back(ShapedType::kDynamic);
      continue;
    }
    shape.push_back(dim.dim_value());
  }
  auto type = RankedTensorType::get(shape, elementType);
  if (!type.hasStaticShape()) {
    if (isa<kiln::StringType>(elementType))
      return fail(fmt::format("input '{}' is a string tensor with a symbolic "
                              "dim; give a static shape with --input-shape "
                              "{}=D0,D1,...",
                              vi.name(), vi.name()));
    return type;
  }
  if (std::string why = mlir::kiln::tooLarge(type); !why.empty())
    return fail(fmt::format("input '{}' is refused: {}", vi.name(), why));
  return type;
}

/// Records the symbolic dims of the inputs on @main (`kiln.dims` on each
/// such argument, `kiln.symbols` = {name = [min, max]} on the function) and
/// reads each symbol's extent once, from the first input that has it.
llvm::Error GraphImporter::declareSymbols(func::FuncOp func,
                                          ArrayRef<std::string> argNames,
                                          OpBuilder &b) {
  SmallVector<NamedAttribute> ranges;
  for (auto [i, name] : llvm::enumerate(argNames)) {
    auto it = inputSymbols.find(name);
    if (it == inputSymbols.end())
      continue;
    Value arg = func.getArgument(i);
    SmallVector<Attribute> dims;
    for (auto [d, symbol] : llvm::enumerate(it->second)) {
      dims.push_back(b.getStringAttr(symbol));
      if (symbol.empty())
        continue;
      Value &value = symbolValues[symbol];
      if (!value) {
        Location loc = NameLoc::get(b.getStringAttr(symbol));
        Value dim = tensor::DimOp::create(b, loc, arg, d);
        value = arith::IndexCastOp::create(b, loc, b.getI64Type(), dim);
        auto range = options.dimRanges.find(symbol);
        int64_t lo = 0, hi = kMaxSymbolExtent;
        if (range != options.dimRanges.end())
          std::tie(lo, hi) = range->second;
        ranges.push_back(
            b.getNamedAttr(symbol, b.getDenseI64ArrayAttr({lo, hi})));
      }
      inputDims[{arg, (int64_t)d}] = value;
    }
    func.setArgAttr(i, "kiln.dims", b.getArrayAttr(dims));
  }
  for (const auto &[symbol, range] : options.dimRanges)
    if (!symbolValues.count(symbol))
      return fail(fmt::format("--dim names '{}', which is not a symbolic dim "
                              "of any input",
                              symbol));
  if (!ranges.empty())
    func->setAttr("kiln.symbols", b.getDictionaryAttr(ranges));
  return llvm::Error::success();
}

llvm::Expected<Value> GraphImporter::lookup(const std::string &name,
                                            OpBuilder &b) {
  auto it = values.find(name);
  if (it != values.end())
    return it->second;
  auto init = initializers.find(name);
  if (init == initializers.end())
    return fail(fmt::format("tensor '{}' is used before it is defined (the "
                            "graph is not topologically sorted, or the name "
                            "is missing)",
                            name));
  std::string error;
  auto attr = convertTensor(&ctx, *init->second, modelDir, error);
  if (failed(attr))
    return fail(error);
  Location loc = NameLoc::get(StringAttr::get(&ctx, name));
  // Made at the function's entry: a first use inside a loop body must not
  // hide the constant from the uses after the loop.
  OpBuilder::InsertionGuard guard(b);
  if (entry && b.getInsertionBlock() != entry)
    b.setInsertionPointToStart(entry);
  Value v = kiln::ConstantOp::create(b, loc, *attr);
  values[name] = v;
  return v;
}

llvm::Error GraphImporter::importNode(const onnx::NodeProto &node, size_t index,
                                      OpBuilder &b) {
  std::string name = node.name().empty()
                         ? fmt::format("{}_{}", node.op_type(), index)
                         : node.name();
  auto where = [&] {
    return fmt::format("at node '{}' ({})", name, node.op_type());
  };
  bool training = node.domain() == kTrainingDomain;
  if (!isDefaultDomain(node.domain()) && !training)
    return fail(fmt::format("unsupported ONNX op '{}' (domain '{}') at node "
                            "'{}'",
                            node.op_type(), node.domain(), name));
  int64_t nodeOpset = training ? trainingOpset : opset;
  if (nodeOpset == 0)
    return fail(fmt::format("the model imports no opset of the domain of op "
                            "'{}' ('{}') {}",
                            node.op_type(),
                            training ? kTrainingDomain : "ai.onnx", where()));
  const auto &table = training ? trainingHandlerTable() : handlerTable();
  auto handler = table.find(node.op_type());
  if (handler == table.end())
    return fail(fmt::format("unsupported ONNX op '{}' (opset {}) at node '{}'",
                            node.op_type(), nodeOpset, name));

  if (std::string why = arityError(node, nodeOpset); !why.empty())
    return fail(fmt::format("node '{}' ({}) {}", name, node.op_type(), why));

  SmallVector<Value> inputs;
  bool sequenceOp = !training && isSequenceOp(node.op_type());
  for (const std::string &in : node.input()) {
    if (in.empty()) {
      inputs.push_back(Value());
      continue;
    }
    if (sequences.count(in)) {
      if (!sequenceOp)
        return fail(fmt::format("unsupported ONNX op '{}' (opset {}) at node "
                                "'{}': input '{}' is a sequence",
                                node.op_type(), nodeOpset, name, in));
      inputs.push_back(Value()); // read through NodeContext::sequenceInput
      continue;
    }
    auto v = lookup(in, b);
    if (!v)
      return fail(fmt::format("{} {}", llvm::toString(v.takeError()), where()));
    if (auto t = dyn_cast<RankedTensorType>(v->getType());
        t && isa<kiln::StringType>(t.getElementType()) &&
        !stringInputAllowed(node.op_type()))
      return fail(fmt::format(
          "unsupported ONNX op '{}' (opset {}) at node '{}': input '{}' is "
          "a string tensor (strings are supported by Cast, CastLike, "
          "StringNormalizer and ops that only move elements)",
          node.op_type(), nodeOpset, name, in));
    inputs.push_back(*v);
  }

  // ONNX graphs are in SSA form: every tensor name is written once.
  for (const std::string &out : node.output()) {
    if (out.empty())
      continue;
    auto writer = writers.find(out);
    if (writer != writers.end())
      return fail(fmt::format("tensor '{}' is written twice: by {} and by "
                              "node '{}' ({}); each name must be written "
                              "once",
                              out, writer->second, name, node.op_type()));
    if (initializers.count(out))
      return fail(fmt::format("tensor '{}' is an initializer and is written "
                              "by node '{}' ({}); each name must be written "
                              "once",
                              out, name, node.op_type()));
    writers[out] = fmt::format("node '{}' ({})", name, node.op_type());
  }

  Location loc =
      FusedLoc::get(&ctx, {NameLoc::get(StringAttr::get(&ctx, name))},
                    StringAttr::get(&ctx, node.op_type()));
  NodeContext nc(b, node, inputs, nodeOpset, loc, modelDir);
  nc.declaredShapes = &declaredShapes;
  nc.sequences = &sequences;
  nc.graph = &graph;
  nc.nodeIndex = index;
  nc.symbolDim = [this](Value v, int64_t d) -> Value {
    return inputDims.lookup({v, d});
  };
  nc.importSubgraph =
      [this, &b, &nc](const onnx::GraphProto &body,
                      ArrayRef<Value> bound) -> FailureOr<SmallVector<Value>> {
    return importSubgraph(body, bound, b, nc.error);
  };
  nc.unrolledNodes = [this] { return subgraphNodes; };
  nc.valueOf = [this, &b](const std::string &tensor) -> Value {
    if (tensor.empty() || sequences.count(tensor))
      return Value();
    auto v = lookup(tensor, b);
    if (!v) {
      llvm::consumeError(v.takeError());
      return Value();
    }
    return *v;
  };
  lastDiagnostic.clear();
  auto results = handler->second(nc);
  if (failed(results)) {
    std::string why = !nc.error.empty() ? nc.error : lastDiagnostic;
    if (why.empty())
      why = "import failed";
    if (nc.errorIsUnsupported)
      return fail(fmt::format("unsupported ONNX op '{}' (opset {}) at node "
                              "'{}': {}",
                              node.op_type(), nodeOpset, name, why));
    return fail(fmt::format("{} {}", why, where()));
  }
  for (size_t i = 0; i < (size_t)node.output_size(); ++i) {
    if (node.output(i).empty() || sequences.count(node.output(i)))
      continue;
    if (i >= results->size() || !(*results)[i])
      return fail(fmt::format("output {} ('{}') is not supported {}", i,
                              node.output(i), where()));
    if (auto type = dyn_cast<RankedTensorType>((*results)[i].getType()))
      if (std::string why = mlir::kiln::tooLarge(type); !why.empty())
        return fail(fmt::format("output '{}' is refused: {} {}", node.output(i),
                                why, where()));
    values[node.output(i)] = foldShapeArithmetic(nc, (*results)[i]);
  }
  return llvm::Error::success();
}

FailureOr<SmallVector<Value>>
GraphImporter::importSubgraph(const onnx::GraphProto &body,
                              ArrayRef<Value> inputs, OpBuilder &b,
                              std::string &error) {
  constexpr int kMaxDepth = 16;
  if (subgraphDepth >= kMaxDepth) {
    error = fmt::format("control flow is nested more than {} deep", kMaxDepth);
    return failure();
  }
  subgraphNodes += body.node_size();
  if (subgraphNodes > NodeContext::kMaxUnrolledNodes) {
    error = fmt::format("control flow unrolls to more than {} nodes",
                        NodeContext::kMaxUnrolledNodes);
    return failure();
  }
  ++subgraphDepth;
  auto leave = llvm::make_scope_exit([&] { --subgraphDepth; });
  if ((size_t)body.input_size() != inputs.size()) {
    error = fmt::format("the body graph '{}' has {} inputs, the node gives {}",
                        body.name(), body.input_size(), inputs.size());
    return failure();
  }
  // Names the body defines, forgotten when it is done.
  SmallVector<std::string> defined;
  auto forget = [&] {
    for (const std::string &name : defined) {
      values.erase(name);
      writers.erase(name);
      initializers.erase(name);
      sequences.erase(name);
    }
  };
  auto define = [&](const std::string &name, StringRef what) -> bool {
    if (values.count(name) || writers.count(name) || initializers.count(name)) {
      error = fmt::format("{} '{}' of the body graph '{}' reuses a name of "
                          "the enclosing graph",
                          what, name, body.name());
      return false;
    }
    defined.push_back(name);
    return true;
  };
  for (auto [i, vi] : llvm::enumerate(body.input())) {
    if (!define(vi.name(), "input")) {
      forget();
      return failure();
    }
    values[vi.name()] = inputs[i];
    writers[vi.name()] = "input '" + vi.name() + "' of a body graph";
  }
  for (const auto &t : body.initializer()) {
    if (!define(t.name(), "initializer")) {
      forget();
      return failure();
    }
    initializers[t.name()] = &t;
  }
  for (size_t i = 0; i < (size_t)body.node_size(); ++i) {
    const onnx::NodeProto &node = body.node(i);
    for (const std::string &out : node.output())
      if (!out.empty() && !define(out, "tensor")) {
        forget();
        return failure();
      }
    if (auto err = importNode(node, i, b)) {
      error = fmt::format("{}, inside the body graph '{}'",
                          llvm::toString(std::move(err)), body.name());
      forget();
      return failure();
    }
  }
  SmallVector<Value> outputs;
  for (const auto &out : body.output()) {
    if (sequences.count(out.name())) {
      error = fmt::format("output '{}' of the body graph '{}' is a sequence "
                          "(sequences are supported inside a graph only)",
                          out.name(), body.name());
      forget();
      return failure();
    }
    auto v = lookup(out.name(), b);
    if (!v) {
      llvm::consumeError(v.takeError());
      error = fmt::format("output '{}' of the body graph '{}' is never "
                          "computed",
                          out.name(), body.name());
      forget();
      return failure();
    }
    outputs.push_back(*v);
  }
  forget();
  return outputs;
}

llvm::Expected<OwningOpRef<ModuleOp>> GraphImporter::run() {
  ScopedDiagnosticHandler capture(&ctx, [&](Diagnostic &diag) {
    if (diag.getSeverity() == DiagnosticSeverity::Error &&
        lastDiagnostic.empty())
      lastDiagnostic = diag.str();
    return success();
  });
  ctx.loadDialect<kiln::KilnDialect, func::FuncDialect, arith::ArithDialect,
                  scf::SCFDialect, tensor::TensorDialect>();
  if (auto err = readOpset())
    return std::move(err);
  if (auto err = checkNames(graph))
    return std::move(err);
  for (const auto &t : graph.initializer())
    initializers[t.name()] = &t;
  auto declare = [&](const onnx::ValueInfoProto &vi) {
    if (!vi.type().has_tensor_type() || !vi.type().tensor_type().has_shape())
      return;
    SmallVector<int64_t> shape;
    for (const auto &dim : vi.type().tensor_type().shape().dim()) {
      if (!dim.has_dim_value() || dim.dim_value() < 0)
        return;
      shape.push_back(dim.dim_value());
    }
    declaredShapes[vi.name()] = shape;
  };
  for (const auto &vi : graph.value_info())
    declare(vi);
  for (const auto &vi : graph.output())
    declare(vi);

  OpBuilder b(&ctx);
  Location fileLoc = FileLineColLoc::get(&ctx, modelPath, 0, 0);
  OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc);
  std::string modelName = graph.name().empty()
                              ? llvm::sys::path::stem(modelPath).str()
                              : graph.name();
  (*module)->setAttr("kiln.model_name", b.getStringAttr(modelName));
  (*module)->setAttr("kiln.opset", b.getI64IntegerAttr(opset));

  SmallVector<Type> argTypes;
  SmallVector<std::string> argNames;
  for (const auto &vi : graph.input()) {
    if (initializers.count(vi.name()))
      continue; // IR < 4 lists initializers among the inputs
    auto type = inputType(vi);
    if (!type)
      return type.takeError();
    argTypes.push_back(*type);
    argNames.push_back(vi.name());
    if (!writers.try_emplace(vi.name(), "graph input '" + vi.name() + "'")
             .second)
      return fail(fmt::format("graph input '{}' is listed twice", vi.name()));
  }
  for (const auto &[name, shape] : options.inputShapes)
    if (!llvm::is_contained(argNames, name))
      return fail(fmt::format("--input-shape names '{}', which is not a "
                              "graph input",
                              name));

  b.setInsertionPointToEnd(module->getBody());
  auto func =
      func::FuncOp::create(b, fileLoc, "main", b.getFunctionType(argTypes, {}));
  Block *body = func.addEntryBlock();
  entry = body;
  for (size_t i = 0; i < argNames.size(); ++i) {
    func.setArgAttr(i, "kiln.name", b.getStringAttr(argNames[i]));
    values[argNames[i]] = body->getArgument(i);
  }
  b.setInsertionPointToEnd(body);
  if (auto err = declareSymbols(func, argNames, b))
    return std::move(err);

  for (size_t i = 0; i < (size_t)graph.node_size(); ++i)
    if (auto err = importNode(graph.node(i), i, b))
      return std::move(err);

  SmallVector<Value> results;
  SmallVector<Type> resultTypes;
  for (const auto &out : graph.output()) {
    if (sequences.count(out.name()))
      return fail(fmt::format("graph output '{}' is a sequence (sequences "
                              "are supported inside the graph only)",
                              out.name()));
    auto v = lookup(out.name(), b);
    if (!v)
      return fail(
          fmt::format("graph output '{}' is never computed", out.name()));
    results.push_back(*v);
    resultTypes.push_back(v->getType());
  }
  func::ReturnOp::create(b, fileLoc, results);
  func.setFunctionType(b.getFunctionType(argTypes, resultTypes));
  for (size_t i = 0; i < (size_t)graph.output_size(); ++i) {
    func.setResultAttr(i, "kiln.name", b.getStringAttr(graph.output(i).name()));
    // An output dim computed at run time that the model names after an
    // input's symbol ("batch") is labelled with it, for the descriptor.
    auto type = cast<RankedTensorType>(resultTypes[i]);
    const auto &declared = graph.output(i).type().tensor_type();
    if (!declared.has_shape() || declared.shape().dim_size() != type.getRank())
      continue;
    SmallVector<Attribute> dims;
    bool any = false;
    for (int64_t d = 0; d < type.getRank(); ++d) {
      const auto &dim = declared.shape().dim(d);
      bool named = type.isDynamicDim(d) && dim.has_dim_param() &&
                   symbolValues.count(dim.dim_param());
      dims.push_back(b.getStringAttr(named ? dim.dim_param() : ""));
      any |= named;
    }
    if (any)
      func.setResultAttr(i, "kiln.dims", b.getArrayAttr(dims));
  }

  if (failed(verify(*module)))
    return fail(fmt::format("internal error: imported IR does not verify: {}",
                            lastDiagnostic));
  return std::move(module);
}
} // namespace

llvm::Expected<OwningOpRef<ModuleOp>> mlir::kiln::onnx_import::importOnnxModel(
    MLIRContext &context, const onnx::ModelProto &model, StringRef modelPath,
    const ImportOptions &options) {
  return GraphImporter(context, model, modelPath, options).run();
}

std::vector<std::string> mlir::kiln::onnx_import::supportedOnnxOps() {
  std::vector<std::string> ops;
  for (const auto &entry : handlerTable())
    ops.push_back(entry.getKey().str());
  std::sort(ops.begin(), ops.end());
  return ops;
}
