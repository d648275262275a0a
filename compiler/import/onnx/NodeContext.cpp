//===- NodeContext.cpp - Attribute access and op building for handlers ----===//

#include "compiler/import/onnx/NodeContext.h"

#include "onnx/onnx.pb.h"

#include "mlir/IR/Matchers.h"
#include <fmt/format.h>
#include <fmt/ranges.h>

using namespace mlir;
using namespace mlir::kiln::onnx_import;
namespace k = mlir::kiln;

const std::string &NodeContext::opType() const { return node.op_type(); }

size_t NodeContext::numOutputs() const { return node.output_size(); }

bool NodeContext::hasOutput(size_t i) const {
  return i < (size_t)node.output_size() && !node.output(i).empty();
}

const onnx::AttributeProto *NodeContext::attr(StringRef name) const {
  for (const auto &a : node.attribute())
    if (a.name() == name)
      return &a;
  return nullptr;
}

int64_t NodeContext::attrInt(StringRef name, int64_t dflt) const {
  const auto *a = attr(name);
  return a ? a->i() : dflt;
}

double NodeContext::attrFloat(StringRef name, double dflt) const {
  const auto *a = attr(name);
  return a ? a->f() : dflt;
}

std::string NodeContext::attrString(StringRef name, StringRef dflt) const {
  const auto *a = attr(name);
  return a ? a->s() : dflt.str();
}

std::optional<SmallVector<int64_t>>
NodeContext::attrInts(StringRef name) const {
  const auto *a = attr(name);
  if (!a)
    return std::nullopt;
  return SmallVector<int64_t>(a->ints().begin(), a->ints().end());
}

const onnx::TensorProto *NodeContext::attrTensor(StringRef name) const {
  const auto *a = attr(name);
  return a && a->has_t() ? &a->t() : nullptr;
}

FailureOr<SmallVector<Value>> NodeContext::fail(const std::string &message) {
  error = message;
  return failure();
}

FailureOr<SmallVector<Value>>
NodeContext::unsupported(const std::string &what) {
  errorIsUnsupported = true;
  return fail(what);
}

FailureOr<SmallVector<Value>> NodeContext::needsConstant(size_t i) {
  std::string name = i < (size_t)node.input_size() ? node.input(i) : "";
  return unsupported(fmt::format(
      "needs data-dependent shape (input {} '{}' is computed at run time; "
      "only constant shape inputs are supported)",
      i, name));
}

std::optional<SmallVector<int64_t>> NodeContext::constantInts(size_t i) const {
  DenseElementsAttr attr;
  if (!hasInput(i) || !matchPattern(input(i), m_Constant(&attr)) ||
      !isa<IntegerType>(attr.getElementType()))
    return std::nullopt;
  SmallVector<int64_t> values;
  bool isUnsigned = attr.getElementType().isUnsignedInteger();
  for (const APInt &v : attr.getValues<APInt>())
    values.push_back(isUnsigned ? (int64_t)v.getZExtValue() : v.getSExtValue());
  return values;
}

std::optional<SmallVector<double>> NodeContext::constantFloats(size_t i) const {
  DenseElementsAttr attr;
  if (!hasInput(i) || !matchPattern(input(i), m_Constant(&attr)))
    return std::nullopt;
  SmallVector<double> values;
  if (isa<FloatType>(attr.getElementType())) {
    for (const APFloat &v : attr.getValues<APFloat>())
      values.push_back(v.convertToDouble());
    return values;
  }
  if (auto ints = constantInts(i)) {
    for (int64_t v : *ints)
      values.push_back((double)v);
    return values;
  }
  return std::nullopt;
}

std::optional<SmallVector<int64_t>> NodeContext::declaredShape(size_t i) const {
  if (!declaredShapes || i >= (size_t)node.output_size())
    return std::nullopt;
  auto it = declaredShapes->find(node.output(i));
  if (it == declaredShapes->end())
    return std::nullopt;
  return it->second;
}

LogicalResult NodeContext::requireValues(Value actual,
                                         ArrayRef<int64_t> expected,
                                         const std::string &what) {
  auto type = this->type(actual);
  if (!type.hasStaticShape() ||
      type.getNumElements() != (int64_t)expected.size())
    return failure();
  Type i64 = b.getI64Type();
  auto expectedType = RankedTensorType::get(type.getShape(), i64);
  Value wanted = constant(DenseElementsAttr::get(expectedType, expected));
  if (type.getElementType() != i64) {
    auto cast = make<k::CastOp>(actual, {named("to", TypeAttr::get(i64))});
    if (failed(cast))
      return failure();
    actual = *cast;
  }
  auto same = make<k::EqualOp>({actual, wanted});
  if (failed(same))
    return failure();
  auto asInt = make<k::CastOp>(*same, {named("to", TypeAttr::get(i64))});
  if (failed(asInt))
    return failure();
  SmallVector<int64_t> axes =
      llvm::to_vector(llvm::seq<int64_t>(0, type.getRank()));
  auto all =
      make<k::ReduceMinOp>(*asInt, {named("axes", i64s(axes)),
                                    named("keepdims", b.getBoolAttr(false))});
  if (failed(all))
    return failure();
  auto ok = make<k::EqualOp>({*all, scalar(i64, 1)});
  if (failed(ok))
    return failure();
  k::AssertOp::create(b, loc, *ok, b.getStringAttr(what));
  return success();
}

std::optional<SmallVector<int64_t>> NodeContext::shapeInput(
    size_t i, function_ref<std::optional<SmallVector<int64_t>>()> implied) {
  if (auto values = constantInts(i))
    return values;
  if (!hasInput(i) || !isa<IntegerType>(type(input(i)).getElementType()))
    return std::nullopt;
  auto values = implied();
  if (!values)
    return std::nullopt;
  std::string outputs;
  for (size_t o = 0; o < numOutputs(); ++o)
    if (auto shape = declaredShape(o))
      outputs += fmt::format("{}'{}' as [{}]", outputs.empty() ? "" : ", ",
                             node.output(o), fmt::join(*shape, ", "));
  if (failed(requireValues(input(i), *values,
                           fmt::format("{}: input {} '{}' must be [{}], as "
                                       "the model declares {}",
                                       opType(), i, node.input(i),
                                       fmt::join(*values, ", "), outputs))))
    return std::nullopt;
  return values;
}

const TensorList *NodeContext::sequenceInput(size_t i) const {
  if (!sequences || i >= (size_t)node.input_size())
    return nullptr;
  auto it = sequences->find(node.input(i));
  return it == sequences->end() ? nullptr : &it->second;
}

void NodeContext::setSequenceOutput(size_t i, TensorList list) {
  (*sequences)[node.output(i)] = std::move(list);
}

std::optional<int64_t> NodeContext::normalizeAxis(int64_t axis,
                                                  int64_t rank) const {
  if (axis < -rank || axis >= rank)
    return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}
