//===- ImportStrings.cpp - ONNX string ops --------------------------------===//
//
// String tensors import as `tensor<...x!kiln.string>`. Casts between strings
// and numbers become kiln.cast_to_string / kiln.cast_from_string, and
// StringNormalizer kiln.normalize_strings, whose result extent is the
// model's declared one (checked when the model runs) or `?` (computed by the
// run). Data movement ops take string tensors like any other; every other
// op rejects them (stringInputAllowed).
//
//===----------------------------------------------------------------------===//
#include "compiler/import/onnx/NodeContext.h"

#include "onnx/onnx.pb.h"

#include "mlir/IR/Verifier.h"
#include "llvm/ADT/StringSet.h"

#include <fmt/format.h>

using namespace mlir;
using namespace mlir::kiln::onnx_import;
namespace k = mlir::kiln;

bool mlir::kiln::onnx_import::stringInputAllowed(llvm::StringRef opType) {
  // Ops whose ONNX type constraints admit strings and that only move
  // elements (or that are string ops themselves).
  static const llvm::StringSet<> allowed = {
      "Identity",     "Reshape",          "Flatten",  "Squeeze",
      "Unsqueeze",    "Transpose",        "Concat",   "Split",
      "Slice",        "Gather",           "Expand",   "Tile",
      "Compress",     "GatherElements",   "GatherND", "Cast",
      "CastLike",     "StringNormalizer", "Shape",    "Size",
      "DepthToSpace", "SpaceToDepth"};
  return allowed.contains(opType);
}

/// The string kernels take element counts known at compile time; a string
/// tensor of run-time extent comes only from StringNormalizer without a
/// declared output shape.
static Results runTimeSized(NodeContext &c, const char *op) {
  return c.unsupported(fmt::format(
      "{} of a string tensor whose size is computed at run time (declare "
      "the shape of the StringNormalizer output that feeds it)",
      op));
}

Results mlir::kiln::onnx_import::castTo(NodeContext &c, Value input, Type to) {
  Type from = c.type(input).getElementType();
  bool fromString = isa<k::StringType>(from), toString = isa<k::StringType>(to);
  if (!fromString && !toString)
    return one(c.make<k::CastOp>(input, {c.named("to", TypeAttr::get(to))}));
  if (fromString && toString)
    return SmallVector<Value>{input};
  if (!c.type(input).hasStaticShape())
    return runTimeSized(c, "Cast");
  auto resultType = c.type(input).clone(to);
  Operation *op;
  if (toString)
    op = k::CastToStringOp::create(c.b, c.loc, resultType, input);
  else
    op = k::CastFromStringOp::create(c.b, c.loc, resultType, input);
  if (failed(mlir::verify(op))) {
    op->erase();
    std::string number;
    llvm::raw_string_ostream(number) << (toString ? from : to);
    return c.unsupported(fmt::format("a cast {} string {} {} is not supported",
                                     toString ? "to" : "from",
                                     toString ? "from" : "to", number));
  }
  return SmallVector<Value>{op->getResult(0)};
}

namespace {
Results importStringNormalizer(NodeContext &c) {
  Value x = c.input(0);
  if (!x)
    return c.fail("needs input X");
  auto type = c.type(x);
  if (!isa<k::StringType>(type.getElementType()))
    return c.fail("input X must be a string tensor");
  if (!type.hasStaticShape())
    return runTimeSized(c, "StringNormalizer");
  if (type.getRank() < 1 || type.getRank() > 2 ||
      (type.getRank() == 2 && type.getDimSize(0) != 1))
    return c.fail(fmt::format(
        "input X must be [C] or [1, C], not a tensor "
        "of rank {}{}",
        type.getRank(), type.getRank() == 2 ? " with a first dim != 1" : ""));
  std::string action = c.attrString("case_change_action", "NONE");
  if (action != "NONE" && action != "LOWER" && action != "UPPER")
    return c.fail(fmt::format("case_change_action must be NONE, LOWER or "
                              "UPPER, not '{}'",
                              action));
  std::string locale = c.attrString("locale", "");
  SmallVector<Attribute> stopwords;
  if (const auto *a = c.attr("stopwords"))
    for (const std::string &word : a->strings()) {
      if (word.find('\0') != std::string::npos)
        return c.fail("a stopword holds a NUL byte");
      stopwords.push_back(c.b.getStringAttr(word));
    }
  // The result keeps the input's rank; its last extent is what the model
  // declares (checked at run time) or computed by the run.
  SmallVector<int64_t> shape(type.getShape());
  shape.back() = ShapedType::kDynamic;
  if (auto declared = c.declaredShape(0);
      declared && declared->size() == shape.size() && declared->back() >= 1 &&
      declared->back() <= std::max<int64_t>(type.getShape().back(), 1))
    shape.back() = declared->back();
  auto op = k::NormalizeStringsOp::create(
      c.b, c.loc, RankedTensorType::get(shape, type.getElementType()), x,
      c.b.getArrayAttr(stopwords), c.b.getStringAttr(action),
      c.b.getBoolAttr(c.attrInt("is_case_sensitive", 0) != 0));
  return SmallVector<Value>{op.getResult()};
}
} // namespace

void mlir::kiln::onnx_import::registerStringHandlers(
    llvm::StringMap<OpHandler> &t) {
  t["StringNormalizer"] = importStringNormalizer;
}
