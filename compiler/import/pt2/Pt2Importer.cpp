//===- Pt2Importer.cpp - torch.export .pt2 -> kiln dialect ----------------===//
#include "compiler/import/pt2/Pt2Importer.h"
#include "compiler/import/common/TensorLimits.h"
#include "compiler/import/pt2/AtenContext.h"
#include "compiler/import/pt2/Pt2Archive.h"

#include "dialects/kiln/KilnDialect.h"
#include "dialects/kiln/KilnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Verifier.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/MathExtras.h"

#include <cstring>

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::pt2;
using llvm::StringRef;
using llvm::json::Array;
using llvm::json::Object;

namespace {
/// Tensors up to this many elements become inline dense constants, larger
/// ones dense_resource blobs (as the ONNX importer does).
constexpr int64_t kInlineElements = 256;
/// The bound of a symbol torch left unbounded (max_val null).
constexpr int64_t kMaxSymbolExtent = (int64_t(1) << 31) - 1;

/// Ops whose handlers read no extent of their operands, so any dim of them
/// may be symbolic.
const llvm::StringSet<> &shapeFreeOps() {
  static const llvm::StringSet<> ops = {
      "aten.relu.default", "aten.relu_.default", "aten.gelu.default",
      "aten.silu.default", "aten.silu_.default", "aten.sigmoid.default",
      "aten.tanh.default", "aten.exp.default", "aten.sqrt.default",
      "aten.rsqrt.default", "aten.neg.default", "aten.hardtanh.default",
      "aten.hardtanh_.default", "aten.hardswish.default",
      "aten.hardswish_.default", "aten.hardsigmoid.default",
      "aten.clamp.default", "aten.logical_not.default", "aten.add.Tensor",
      "aten.add_.Tensor", "aten.add.Scalar", "aten.sub.Tensor",
      "aten.mul.Tensor", "aten.mul_.Tensor", "aten.mul.Scalar",
      "aten.div.Tensor", "aten.div.Scalar", "aten.where.self",
      "aten.clone.default", "aten.alias.default", "aten.detach.default",
      "aten.contiguous.default", "aten.dropout.default",
      "aten.dropout_.default", "aten.to.dtype", "aten._to_copy.default",
      "aten.permute.default", "aten.t.default", "aten.transpose.int",
      "aten.linear.default", "aten.addmm.default", "aten.mm.default",
      "aten.matmul.default", "aten.softmax.int", "aten._softmax.default",
      "aten.mean.dim", "aten.sum.dim_IntList", "aten.sym_size.int",
      "_operator.mul", "_operator.add", "_operator.sub", "_operator.floordiv",
      // These read only the extents they check themselves: views keep
      // symbolic dims in place or take sizes the program computes
      // (AtenContext::viewSizes), split and SDPA
      // refuse a symbolic split dim or head size, layer norms normalize
      // over run-time extents too.
      "aten.view.default", "aten._unsafe_view.default", "aten.reshape.default",
      "aten.split.Tensor", "aten.split_with_sizes.default",
      "aten.expand.default", "aten.full_like.default", "aten.bmm.default",
      "aten.eq.Scalar", "aten.any.dim",
      "aten.scaled_dot_product_attention.default", "aten.layer_norm.default",
      "aten.native_layer_norm.default"};
  return ops;
}

/// Ops whose handlers read extents, all but the batch dim (0).
const llvm::StringSet<> &batchFreeOps() {
  static const llvm::StringSet<> ops = {
      "aten.conv2d.default",
      "aten.convolution.default",
      "aten.conv_transpose2d.input",
      "aten.conv_transpose1d.default",
      "aten.batch_norm.default",
      "aten._native_batch_norm_legit_no_training.default",
      "aten.max_pool2d.default",
      "aten.max_pool2d_with_indices.default",
      "aten.avg_pool2d.default",
      "aten.adaptive_avg_pool2d.default",
      "aten.layer_norm.default",
      "aten.native_layer_norm.default",
      "aten.flatten.using_ints"};
  return ops;
}

llvm::Error error(const llvm::Twine &message) {
  return llvm::createStringError(message.str());
}

} // namespace

/// The schema's ScalarType code -> element type (null if Kiln has none).
Type mlir::kiln::pt2::elementType(MLIRContext *ctx, int64_t dtype) {
  Builder b(ctx);
  switch (dtype) {
  case 1:
    return IntegerType::get(ctx, 8, IntegerType::Unsigned);
  case 2:
    return b.getIntegerType(8);
  case 3:
    return b.getIntegerType(16);
  case 4:
    return b.getIntegerType(32);
  case 5:
    return b.getIntegerType(64);
  case 6:
    return b.getF16Type();
  case 7:
    return b.getF32Type();
  case 8:
    return b.getF64Type();
  case 12:
    return b.getI1Type();
  case 13:
    return b.getBF16Type();
  default:
    return nullptr;
  }
}

namespace {
unsigned elementBytes(Type type) {
  return type.isInteger(1) ? 1 : (type.getIntOrFloatBitWidth() + 7) / 8;
}

/// The tensor a payload views: its elements gathered from the storage
/// (strides and offset honoured, bounds checked), as a constant.
llvm::Expected<ElementsAttr> tensorOf(MLIRContext *ctx, const Payload &p,
                                      StringRef name) {
  const TensorMeta &m = p.meta;
  Type type = elementType(ctx, m.dtype);
  if (!type)
    return error("tensor '" + name + "' has dtype code " +
                 llvm::Twine(m.dtype) + ", which Kiln does not support");
  if (llvm::is_contained(m.sizes, -1))
    return error("tensor '" + name + "' has a symbolic size");
  int64_t rank = m.sizes.size(), count = 1;
  if ((int64_t)m.strides.size() != rank || m.storageOffset < 0)
    return error("tensor '" + name + "' has no valid strides or offset");
  // The last element the view reaches must lie inside the storage (every
  // step checked: the sizes and strides come from the file).
  int64_t last = m.storageOffset;
  bool overflow = false;
  for (int64_t d = 0; d < rank; ++d) {
    if (m.sizes[d] < 0 || m.strides[d] < 0)
      return error("tensor '" + name + "' has a negative size or stride");
    int64_t reach = 0;
    overflow |= llvm::MulOverflow(count, m.sizes[d], count);
    if (m.sizes[d] > 0)
      overflow |= llvm::MulOverflow(m.sizes[d] - 1, m.strides[d], reach) ||
                  llvm::AddOverflow(last, reach, last);
  }
  unsigned width = elementBytes(type);
  if (overflow)
    return error("tensor '" + name +
                 "' has sizes and strides whose extent overflows 64 bits");
  // Strides of 0 repeat elements: the view may be far larger than its
  // storage, and it is what gets materialized.
  if (std::string why = tooLarge(RankedTensorType::get(m.sizes, type));
      !why.empty())
    return error("tensor '" + name + "' is refused: " + why);
  if (count > 0 && uint64_t(last) >= p.storage.size() / width)
    return error("tensor '" + name + "' (entry '" + p.entry + "', " +
                 llvm::Twine(p.storage.size()) +
                 " bytes) is shorter than its view needs");
  // Contiguous views are one slice; others are gathered element by element.
  std::vector<char> gathered;
  StringRef bytes;
  int64_t expected = 1;
  bool contiguous = true;
  for (int64_t d = rank - 1; d >= 0; --d) {
    contiguous &= m.sizes[d] == 1 || m.strides[d] == expected;
    expected *= m.sizes[d];
  }
  if (contiguous) {
    bytes = p.storage.substr(m.storageOffset * width, count * width);
  } else {
    gathered.resize(count * width);
    SmallVector<int64_t> index(rank, 0);
    for (int64_t i = 0; i < count; ++i) {
      int64_t at = m.storageOffset;
      for (int64_t d = 0; d < rank; ++d)
        at += index[d] * m.strides[d];
      std::memcpy(gathered.data() + i * width, p.storage.data() + at * width,
                  width);
      for (int64_t d = rank - 1; d >= 0 && ++index[d] == m.sizes[d]; --d)
        index[d] = 0;
    }
    bytes = StringRef(gathered.data(), gathered.size());
  }
  auto tensorType = RankedTensorType::get(m.sizes, type);
  if (type.isInteger(1)) {
    SmallVector<bool> values;
    for (char c : bytes)
      values.push_back(c != 0);
    return ElementsAttr(DenseElementsAttr::get(tensorType, values));
  }
  ArrayRef<char> raw(bytes.data(), bytes.size());
  if (count <= kInlineElements)
    return ElementsAttr(DenseElementsAttr::getFromRawBuffer(tensorType, raw));
  return ElementsAttr(DenseResourceElementsAttr::get(
      tensorType, name,
      HeapAsmResourceBlob::allocateAndCopyWithAlign(raw, 64)));
}

/// The value name an argument or output spec's `arg` holds.
std::optional<StringRef> argName(const Object *spec) {
  const Object *arg = spec ? spec->getObject("arg") : nullptr;
  if (!arg)
    return std::nullopt;
  if (std::optional<StringRef> name = arg->getString("name"))
    return name;
  if (const Object *tensor = arg->getObject("as_tensor"))
    return tensor->getString("name");
  return std::nullopt;
}

const llvm::StringMap<AtenHandler> &handlerTable() {
  static const llvm::StringMap<AtenHandler> table = [] {
    llvm::StringMap<AtenHandler> t;
    registerAtenNNHandlers(t);
    registerAtenTensorHandlers(t);
    registerAtenIndexingHandlers(t);
    registerAtenSymbolicHandlers(t);
    return t;
  }();
  return table;
}

class Importer {
public:
  Importer(MLIRContext &ctx, const Pt2Archive &archive,
           const ImportOptions &options)
      : ctx(ctx), archive(archive), options(options), b(&ctx) {}

  llvm::Expected<OwningOpRef<ModuleOp>> run();

private:
  llvm::Error fail(const llvm::Twine &what) {
    return error("'" + archive.path() + "': " + what);
  }
  llvm::Expected<RankedTensorType>
  inputType(StringRef name, SmallVectorImpl<std::string> &symbols);
  llvm::Error checkSymbolicOperands(const Object &node, StringRef op,
                                    StringRef name);
  llvm::Error importNode(const Object &node);
  Value lookup(StringRef name) { return values.lookup(name); }

  MLIRContext &ctx;
  const Pt2Archive &archive;
  const ImportOptions &options;
  OpBuilder b;
  llvm::StringMap<Value> values;
  /// Symbolic scalars (sym_size, arithmetic on them): SymInts as i64
  /// values, SymFloats as f64, SymBools as i1.
  llvm::StringMap<Value> symScalars;
  std::string lastDiagnostic;
};

llvm::Expected<RankedTensorType>
Importer::inputType(StringRef name, SmallVectorImpl<std::string> &symbols) {
  const Object *tensorValues = archive.graph().getObject("tensor_values");
  const Object *meta = tensorValues ? tensorValues->getObject(name) : nullptr;
  if (!meta)
    return fail("input '" + name + "' has no tensor metadata");
  auto parsed = parseTensorMeta(*meta, "input '" + name.str() + "'");
  if (!parsed)
    return fail(llvm::toString(parsed.takeError()));
  Type type = elementType(&ctx, parsed->dtype);
  if (!type)
    return fail("input '" + name + "' has dtype code " +
                llvm::Twine(parsed->dtype) + ", which Kiln does not support");
  SmallVector<int64_t> shape = parsed->sizes;
  auto given = options.inputShapes.find(name.str());
  if (given != options.inputShapes.end()) {
    if (given->second.size() != shape.size())
      return fail("--input-shape gives input '" + name + "' rank " +
                  llvm::Twine(given->second.size()) + ", but it has rank " +
                  llvm::Twine(shape.size()));
    for (size_t d = 0; d < shape.size(); ++d)
      if (shape[d] >= 0 && shape[d] != given->second[d])
        return fail("--input-shape gives input '" + name + "' dim " +
                    llvm::Twine(d) + " = " + llvm::Twine(given->second[d]) +
                    ", but the program fixes it to " + llvm::Twine(shape[d]));
    shape.assign(given->second.begin(), given->second.end());
  }
  // A dim that is one symbol ("Symbol('s77', positive=True, ...)") stays
  // symbolic, named by it; an expression of symbols needs --input-shape.
  symbols.assign(shape.size(), "");
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] >= 0)
      continue;
    StringRef expr = parsed->symbols[d];
    StringRef symbol;
    if (expr.consume_front("Symbol('"))
      symbol = expr.take_until([](char ch) { return ch == '\''; });
    if (symbol.empty() || !expr.drop_front(symbol.size()).starts_with("'"))
      return fail("input '" + name + "' dim " + llvm::Twine(d) + " is " +
                  parsed->symbols[d] + "; compile with --input-shape " + name +
                  "=D0,D1,... to specialize it");
    shape[d] = ShapedType::kDynamic;
    symbols[d] = symbol.str();
  }
  auto result = RankedTensorType::get(shape, type);
  if (std::string why = tooLarge(result); !why.empty())
    return fail("input '" + name + "' is refused: " + why);
  return result;
}

/// Symbolic extents reach only the handlers that do not read them.
llvm::Error Importer::checkSymbolicOperands(const Object &node, StringRef op,
                                            StringRef name) {
  if (shapeFreeOps().contains(op))
    return llvm::Error::success();
  bool batchOnly = batchFreeOps().contains(op);
  const Array *inputs = node.getArray("inputs");
  for (const llvm::json::Value &input : inputs ? *inputs : Array()) {
    const Object *in = input.getAsObject();
    const Object *arg = in ? in->getObject("arg") : nullptr;
    const Object *t = arg ? arg->getObject("as_tensor") : nullptr;
    Value v = t ? lookup(t->getString("name").value_or("")) : Value();
    auto type = v ? dyn_cast<RankedTensorType>(v.getType()) : nullptr;
    if (!type || type.hasStaticShape())
      continue;
    bool onlyBatch =
        llvm::all_of(llvm::seq<int64_t>(1, type.getRank()),
                     [&](int64_t d) { return !type.isDynamicDim(d); });
    if (batchOnly && onlyBatch)
      continue;
    return error(op + " at node '" + name + "' reads the extents of '" +
                 t->getString("name").value_or("?") +
                 "', which are symbolic; compile with --input-shape to "
                 "specialize them (symbolic sizes reach elementwise ops, "
                 "matmuls, softmax and transposes, and a symbolic batch "
                 "convolutions, norms and pools)");
  }
  return llvm::Error::success();
}

llvm::Error Importer::importNode(const Object &node) {
  StringRef name = node.getString("name").value_or("?");
  StringRef target = node.getString("target").value_or("");
  StringRef op = target;
  op.consume_front("torch.ops.");
  auto where = [&] { return (" at node '" + name + "' (" + op + ")").str(); };
  const llvm::StringMap<AtenHandler> &table = handlerTable();
  auto handler = table.find(op);
  const OpSchema *schema = schemaOf(op);
  if (handler == table.end() || !schema) {
    // In-place ops on views (the raw export of Swin's masks) mutate a base
    // tensor the graph does not name; core ATen has none.
    bool inPlace = op.split('.').second.split('.').first.ends_with("_");
    return error("unsupported ATen op '" + op + "' at node '" + name + "'" +
                 (inPlace ? " (an in-place op; save the program after "
                            "ep.run_decompositions(), which makes it "
                            "functional)"
                          : ""));
  }
  if (llvm::Error err = checkSymbolicOperands(node, op, name))
    return err;
  Location loc = FusedLoc::get(&ctx, {NameLoc::get(b.getStringAttr(name))},
                               b.getStringAttr(op));
  AtenContext c(b, loc, op, node, *schema,
                [&](StringRef value) { return lookup(value); });
  c.graph = &archive.graph();
  c.symScalars = &symScalars;
  lastDiagnostic.clear();
  Results results = handler->second(c);
  if (failed(results))
    return error((c.error.empty() ? lastDiagnostic : c.error) + where());
  // Outputs are listed as as_tensor entries or one as_tensors list.
  SmallVector<StringRef> names;
  if (const Array *outputs = node.getArray("outputs"))
    for (const llvm::json::Value &out : *outputs) {
      const Object *o = out.getAsObject();
      if (const Object *t = o ? o->getObject("as_tensor") : nullptr)
        names.push_back(t->getString("name").value_or(""));
      else if (const Array *list = o ? o->getArray("as_tensors") : nullptr)
        for (const llvm::json::Value &item : *list)
          names.push_back(
              item.getAsObject()
                  ? item.getAsObject()->getString("name").value_or("")
                  : "");
      else
        names.push_back("");
    }
  if (names.size() > results->size())
    return error("the op gives " + llvm::Twine(results->size()) +
                 " outputs, the node names " + llvm::Twine(names.size()) +
                 where());
  for (auto [i, outName] : llvm::enumerate(names)) {
    if (outName.empty() || !(*results)[i])
      continue;
    if (auto type = dyn_cast<RankedTensorType>((*results)[i].getType()))
      if (std::string why = tooLarge(type); !why.empty())
        return error("output '" + outName + "' is refused: " + why + where());
    values[outName] = (*results)[i];
  }
  return llvm::Error::success();
}

llvm::Expected<OwningOpRef<ModuleOp>> Importer::run() {
  ScopedDiagnosticHandler capture(&ctx, [&](Diagnostic &diag) {
    if (diag.getSeverity() == DiagnosticSeverity::Error &&
        lastDiagnostic.empty())
      lastDiagnostic = diag.str();
    return success();
  });
  ctx.loadDialect<kiln::KilnDialect, func::FuncDialect, arith::ArithDialect,
                  math::MathDialect, tensor::TensorDialect>();

  // Inputs in signature order: user inputs become arguments, the rest
  // constants read from the archive.
  const Array *inputSpecs = archive.signature().getArray("input_specs");
  const Array *outputSpecs = archive.signature().getArray("output_specs");
  if (!inputSpecs || !outputSpecs)
    return fail("the program's signature has no input_specs/output_specs");
  SmallVector<std::string> argNames;
  SmallVector<Type> argTypes;
  SmallVector<SmallVector<std::string>> argSymbols;
  SmallVector<std::pair<std::string, const Payload *>> weights;
  uint64_t weightBytes = 0;
  for (const llvm::json::Value &specValue : *inputSpecs) {
    const Object *spec = specValue.getAsObject();
    if (!spec || spec->size() != 1)
      return fail("an input spec is not a one-key object");
    StringRef kind = spec->begin()->first;
    const Object *body = spec->begin()->second.getAsObject();
    std::optional<StringRef> name = argName(body);
    if (!name)
      return fail("input spec '" + kind + "' names no value");
    if (kind == "user_input") {
      SmallVector<std::string> symbols;
      auto type = inputType(*name, symbols);
      if (!type)
        return type.takeError();
      argNames.push_back(name->str());
      argTypes.push_back(*type);
      argSymbols.push_back(std::move(symbols));
      continue;
    }
    StringRef key = kind == "parameter"         ? "parameter_name"
                    : kind == "buffer"          ? "buffer_name"
                    : kind == "tensor_constant" ? "tensor_constant_name"
                                                : "";
    if (key.empty())
      return fail("input spec '" + kind + "' of '" + *name +
                  "' is not supported (Kiln reads parameters, buffers, "
                  "tensor constants and user inputs)");
    std::optional<StringRef> fqn = body->getString(key);
    const Payload *payload =
        fqn ? (kind == "tensor_constant" ? archive.constant(*fqn)
                                         : archive.weight(*fqn))
            : nullptr;
    if (fqn && !payload)
      payload = kind == "tensor_constant" ? archive.weight(*fqn)
                                          : archive.constant(*fqn);
    if (!payload)
      return fail(kind + " '" + (fqn ? *fqn : *name) +
                  "' has no data in the archive");
    weights.emplace_back(name->str(), payload);
    weightBytes += payload->storage.size();
  }
  if (options.checkWeights)
    if (llvm::Error err = options.checkWeights(weightBytes))
      return std::move(err);

  Location fileLoc = FileLineColLoc::get(&ctx, archive.path(), 0, 0);
  OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc);
  (*module)->setAttr("kiln.model_name", b.getStringAttr(archive.modelName()));
  (*module)->setAttr("kiln.frontend", b.getStringAttr("torch.export"));
  b.setInsertionPointToEnd(module->getBody());
  auto func =
      func::FuncOp::create(b, fileLoc, "main", b.getFunctionType(argTypes, {}));
  Block *body = func.addEntryBlock();
  b.setInsertionPointToEnd(body);
  for (auto [i, name] : llvm::enumerate(argNames)) {
    func.setArgAttr(i, "kiln.name", b.getStringAttr(name));
    values[name] = body->getArgument(i);
  }
  // Symbolic dims: `kiln.dims` names each input's, `kiln.symbols` bounds
  // them with the program's range_constraints.
  const Object *constraints = archive.program().getObject("range_constraints");
  SmallVector<NamedAttribute> ranges;
  llvm::StringSet<> declared;
  for (auto [i, symbols] : llvm::enumerate(argSymbols)) {
    if (llvm::all_of(symbols, [](const std::string &s) { return s.empty(); }))
      continue;
    SmallVector<Attribute> dims;
    for (const std::string &symbol : symbols) {
      dims.push_back(b.getStringAttr(symbol));
      if (symbol.empty() || !declared.insert(symbol).second)
        continue;
      const Object *range =
          constraints ? constraints->getObject(symbol) : nullptr;
      int64_t lo = range ? range->getInteger("min_val").value_or(0) : 0;
      int64_t hi = range
                       ? range->getInteger("max_val").value_or(kMaxSymbolExtent)
                       : kMaxSymbolExtent;
      ranges.push_back(b.getNamedAttr(
          symbol, b.getDenseI64ArrayAttr(
                      {lo, std::min<int64_t>(hi, kMaxSymbolExtent)})));
    }
    func.setArgAttr(i, "kiln.dims", b.getArrayAttr(dims));
  }
  if (!ranges.empty())
    func->setAttr("kiln.symbols", b.getDictionaryAttr(ranges));
  for (const auto &[name, payload] : weights) {
    auto value = tensorOf(&ctx, *payload, name);
    if (!value)
      return fail(llvm::toString(value.takeError()));
    values[name] = kiln::ConstantOp::create(
        b, NameLoc::get(b.getStringAttr(name)), *value);
  }

  const Array *nodes = archive.graph().getArray("nodes");
  if (!nodes)
    return fail("the graph has no nodes");
  for (const llvm::json::Value &nodeValue : *nodes) {
    const Object *node = nodeValue.getAsObject();
    if (!node)
      return fail("a node is not an object");
    if (llvm::Error err = importNode(*node))
      return fail(llvm::toString(std::move(err)));
  }

  SmallVector<Value> results;
  SmallVector<std::string> resultNames;
  for (const llvm::json::Value &specValue : *outputSpecs) {
    const Object *spec = specValue.getAsObject();
    // The key by reference: a conditional would copy it into a temporary
    // the StringRef outlives (found by the pt2_import fuzzer).
    StringRef kind;
    if (spec && spec->size() == 1)
      kind = spec->begin()->first;
    std::optional<StringRef> name =
        kind.empty() ? std::nullopt
                     : argName(spec->begin()->second.getAsObject());
    if (kind != "user_output")
      return fail("output spec '" + kind +
                  "' is not supported (the program mutates a buffer or "
                  "input, or returns something other than tensors)");
    Value v = name ? lookup(*name) : Value();
    if (!v)
      return fail("output '" + (name ? *name : StringRef("?")) +
                  "' is never computed");
    results.push_back(v);
    resultNames.push_back(name->str());
  }
  func::ReturnOp::create(b, fileLoc, results);
  func.setFunctionType(
      b.getFunctionType(argTypes, ValueRange(results).getTypes()));
  // An output dim computed at run time whose size the archive records as
  // one of the inputs' symbols is labelled with it, for the descriptor.
  llvm::StringSet<> inputSymbols;
  for (const SmallVector<std::string> &symbols : argSymbols)
    for (const std::string &symbol : symbols)
      if (!symbol.empty())
        inputSymbols.insert(symbol);
  const Object *tensorValues = archive.graph().getObject("tensor_values");
  for (auto [i, name] : llvm::enumerate(resultNames)) {
    func.setResultAttr(i, "kiln.name", b.getStringAttr(name));
    auto type = cast<RankedTensorType>(results[i].getType());
    const Object *meta = tensorValues ? tensorValues->getObject(name) : nullptr;
    const Array *sizes = meta ? meta->getArray("sizes") : nullptr;
    if (!sizes || (int64_t)sizes->size() != type.getRank())
      continue;
    SmallVector<Attribute> dims;
    bool any = false;
    for (int64_t d = 0; d < type.getRank(); ++d) {
      const Object *size = (*sizes)[d].getAsObject();
      const Object *expr = size ? size->getObject("as_expr") : nullptr;
      StringRef text = expr ? expr->getString("expr_str").value_or("") : "";
      StringRef symbol;
      if (text.consume_front("Symbol('"))
        symbol = text.take_until([](char ch) { return ch == '\''; });
      bool named = type.isDynamicDim(d) && inputSymbols.contains(symbol);
      dims.push_back(b.getStringAttr(named ? symbol : ""));
      any |= named;
    }
    if (any)
      func.setResultAttr(i, "kiln.dims", b.getArrayAttr(dims));
  }
  if (failed(verify(*module)))
    return fail("internal error: the imported IR does not verify: " +
                lastDiagnostic);
  return std::move(module);
}
} // namespace

llvm::Expected<OwningOpRef<ModuleOp>>
mlir::kiln::pt2::importPt2File(MLIRContext &context, StringRef path,
                               const ImportOptions &options) {
  auto archive = Pt2Archive::open(path);
  if (!archive)
    return archive.takeError();
  return Importer(context, **archive, options).run();
}

llvm::Expected<OwningOpRef<ModuleOp>>
mlir::kiln::pt2::importPt2Bytes(MLIRContext &context, StringRef bytes,
                                StringRef path, const ImportOptions &options) {
  auto archive = Pt2Archive::fromBytes(bytes, path);
  if (!archive)
    return archive.takeError();
  return Importer(context, **archive, options).run();
}

std::vector<std::string> mlir::kiln::pt2::supportedAtenOps() {
  std::vector<std::string> ops;
  for (const auto &entry : handlerTable())
    ops.push_back(entry.getKey().str());
  std::sort(ops.begin(), ops.end());
  return ops;
}
