//===- SymbolicShapes.cpp - Shape arithmetic on symbolic dims -------------===//
#include "compiler/import/onnx/SymbolicShapes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"

#include <fmt/format.h>

using namespace mlir;
using namespace mlir::kiln::onnx_import;
namespace k = mlir::kiln;

namespace {
/// Largest tensor kept as scalars: shapes and shape pieces are short.
constexpr int64_t kMaxSymbolicElements = 16;

SymInt constantSym(MLIRContext *ctx, int64_t v) {
  return IntegerAttr::get(IntegerType::get(ctx, 64), v);
}

/// `v` as an i64 Value, materializing a constant.
Value valueOf(NodeContext &c, SymInt v) {
  if (auto attr = dyn_cast<Attribute>(v))
    return arith::ConstantOp::create(c.b, c.loc, cast<TypedAttr>(attr));
  return cast<Value>(v);
}

enum class Arith { Add, Sub, Mul, Div };

SymInt arithSym(NodeContext &c, Arith kind, SymInt a, SymInt b) {
  auto ca = constantOf(a), cb = constantOf(b);
  if (ca && cb) {
    switch (kind) {
    case Arith::Add:
      return constantSym(c.ctx(), *ca + *cb);
    case Arith::Sub:
      return constantSym(c.ctx(), *ca - *cb);
    case Arith::Mul:
      return constantSym(c.ctx(), *ca * *cb);
    case Arith::Div:
      if (*cb != 0)
        return constantSym(c.ctx(), *ca / *cb);
      break;
    }
  }
  // seq - seq (GPT-2's key_length - query_length) is 0.
  if (kind == Arith::Sub && !ca && !cb && cast<Value>(a) == cast<Value>(b))
    return constantSym(c.ctx(), 0);
  if (kind == Arith::Mul && ((ca && *ca == 1) || (cb && *cb == 0)))
    return b;
  if ((kind == Arith::Mul || kind == Arith::Div) && cb && *cb == 1)
    return a;
  if ((kind == Arith::Add || kind == Arith::Sub) && cb && *cb == 0)
    return a;
  Value x = valueOf(c, a), y = valueOf(c, b);
  switch (kind) {
  case Arith::Add:
    return arith::AddIOp::create(c.b, c.loc, x, y).getResult();
  case Arith::Sub:
    return arith::SubIOp::create(c.b, c.loc, x, y).getResult();
  case Arith::Mul:
    return arith::MulIOp::create(c.b, c.loc, x, y).getResult();
  case Arith::Div:
    return arith::DivSIOp::create(c.b, c.loc, x, y).getResult();
  }
  llvm_unreachable("arith kind");
}

/// The entries of `v` when it is an integer constant or a symbolic shape.
std::optional<SymInts> elementsOf(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || !type.hasStaticShape() ||
      !isa<IntegerType>(type.getElementType()) ||
      type.getNumElements() > kMaxSymbolicElements)
    return std::nullopt;
  MLIRContext *ctx = v.getContext();
  DenseElementsAttr attr;
  if (matchPattern(v, m_Constant(&attr))) {
    SymInts out;
    bool isUnsigned = attr.getElementType().isUnsignedInteger();
    for (const APInt &x : attr.getValues<APInt>())
      out.push_back(constantSym(ctx, isUnsigned ? (int64_t)x.getZExtValue()
                                                : x.getSExtValue()));
    return out;
  }
  auto fromElements = v.getDefiningOp<tensor::FromElementsOp>();
  if (!fromElements)
    return std::nullopt;
  SymInts out;
  for (Value e : fromElements.getElements()) {
    IntegerAttr value;
    if (matchPattern(e, m_Constant(&value))) {
      out.push_back(constantSym(ctx, value.getValue().getSExtValue()));
      continue;
    }
    if (auto trunc = e.getDefiningOp<arith::TruncIOp>())
      e = trunc.getIn();
    if (!e.getType().isInteger(64))
      return std::nullopt;
    out.push_back(e);
  }
  return out;
}

bool anyRunTime(ArrayRef<SymInt> values) {
  return llvm::any_of(values, [](SymInt v) { return !constantOf(v); });
}
} // namespace

std::optional<int64_t> mlir::kiln::onnx_import::constantOf(SymInt v) {
  if (auto attr = dyn_cast<Attribute>(v))
    return cast<IntegerAttr>(attr).getValue().getSExtValue();
  IntegerAttr value;
  if (matchPattern(cast<Value>(v), m_Constant(&value)))
    return value.getValue().getSExtValue();
  return std::nullopt;
}

std::optional<SymInts>
mlir::kiln::onnx_import::symbolicInts(const NodeContext &c, size_t i) {
  if (!c.hasInput(i))
    return std::nullopt;
  return elementsOf(c.input(i));
}

bool mlir::kiln::onnx_import::isSymbolicShape(Value v) {
  auto elements = elementsOf(v);
  return elements && anyRunTime(*elements);
}

Value mlir::kiln::onnx_import::materialize(NodeContext &c,
                                           ArrayRef<SymInt> values,
                                           RankedTensorType type) {
  Type et = type.getElementType();
  if (!anyRunTime(values)) {
    SmallVector<APInt> constants;
    for (SymInt v : values)
      constants.push_back(
          APInt(et.getIntOrFloatBitWidth(), *constantOf(v), /*isSigned=*/true));
    return c.constant(
        cast<ElementsAttr>(DenseElementsAttr::get(type, constants)));
  }
  SmallVector<Value> elements;
  for (SymInt v : values) {
    if (auto constant = constantOf(v)) {
      elements.push_back(arith::ConstantOp::create(
          c.b, c.loc, IntegerAttr::get(et, *constant)));
      continue;
    }
    Value x = cast<Value>(v);
    if (x.getType() != et)
      x = arith::TruncIOp::create(c.b, c.loc, et, x);
    elements.push_back(x);
  }
  return tensor::FromElementsOp::create(c.b, c.loc, type, elements);
}

namespace {
/// The value run-time dim `d` of `v` is known to equal, found by following
/// `v` back through ops that keep the extent (transposes, elementwise ops,
/// normalizations, matmuls, reshapes to symbolic shapes) to a graph input's
/// symbol or a shape entry; null if none. Two dims that reach the same
/// value are equal, so `k_len - q_len` folds to 0.
Value knownExtent(NodeContext &c, Value v, int64_t d, int depth = 0) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || !type.isDynamicDim(d) || depth > 64)
    return {};
  if (c.symbolDim)
    if (Value s = c.symbolDim(v, d))
      return s;
  Operation *op = v.getDefiningOp();
  if (!op)
    return {};
  auto same = [&](Value from, int64_t dim) {
    return knownExtent(c, from, dim, depth + 1);
  };
  if (auto transpose = dyn_cast<k::TransposeOp>(op))
    return same(transpose.getInput(), transpose.getPerm()[d]);
  if (auto reshape = dyn_cast<k::DynamicReshapeOp>(op)) {
    auto shape = elementsOf(reshape.getShape());
    if (shape && d < (int64_t)shape->size())
      if (auto value = dyn_cast<Value>((*shape)[d]))
        return value;
    return {};
  }
  if (auto matmul = dyn_cast<k::MatMulOp>(op)) {
    int64_t rank = type.getRank();
    auto lhs = cast<RankedTensorType>(matmul.getLhs().getType());
    auto rhs = cast<RankedTensorType>(matmul.getRhs().getType());
    if (d == rank - 1)
      return same(matmul.getRhs(), rhs.getRank() - 1);
    if (d == rank - 2 && lhs.getRank() >= 2)
      return same(matmul.getLhs(), lhs.getRank() - 2);
    int64_t fromLhs = d - (rank - lhs.getRank());
    if (fromLhs >= 0 && lhs.isDynamicDim(fromLhs))
      return same(matmul.getLhs(), fromLhs);
    return {};
  }
  // Same-shaped or broadcasting ops: the first operand whose aligned dim
  // is run-time (a 1 broadcasts, a static extent would have made d static).
  if (isa<k::AddOp, k::SubOp, k::MulOp, k::DivOp, k::WhereOp, k::LayerNormOp,
          k::SoftmaxOp, k::CastOp, k::ReluOp, k::GeluOp, k::ErfOp, k::TanhOp,
          k::SigmoidOp, k::SqrtOp, k::ExpOp, k::NegOp, k::PowOp>(op)) {
    for (Value operand : op->getOperands()) {
      auto t = dyn_cast<RankedTensorType>(operand.getType());
      int64_t at = t ? d - (type.getRank() - t.getRank()) : -1;
      if (at >= 0 && t.isDynamicDim(at))
        return same(operand, at);
    }
  }
  return {};
}
} // namespace

SymInt mlir::kiln::onnx_import::dimOf(NodeContext &c, Value v, int64_t d) {
  auto type = c.type(v);
  if (!type.isDynamicDim(d))
    return constantSym(c.ctx(), type.getDimSize(d));
  if (Value known = knownExtent(c, v, d))
    return known;
  Value dim = tensor::DimOp::create(c.b, c.loc, v, d);
  return arith::IndexCastOp::create(c.b, c.loc, c.b.getI64Type(), dim)
      .getResult();
}

Value mlir::kiln::onnx_import::i64Value(OpBuilder &b, Location loc, SymInt v) {
  if (auto known = constantOf(v))
    return arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(*known));
  return cast<Value>(v);
}

SymInt mlir::kiln::onnx_import::mulSym(NodeContext &c, SymInt a, SymInt b) {
  return arithSym(c, Arith::Mul, a, b);
}

SymInt mlir::kiln::onnx_import::numElementsOf(NodeContext &c, Value v) {
  SymInt count = constantSym(c.ctx(), 1);
  for (int64_t d = 0; d < c.type(v).getRank(); ++d)
    count = mulSym(c, count, dimOf(c, v, d));
  return count;
}

namespace {
/// The entries `op` computes from its symbolic operands, or nullopt.
std::optional<SymInts> evaluate(NodeContext &c, Operation *op) {
  auto operandElements = [&](unsigned i) {
    return elementsOf(op->getOperand(i));
  };
  if (auto gather = dyn_cast<k::GatherOp>(op)) {
    auto data = operandElements(0), indices = operandElements(1);
    if (!data || !indices || gather.getAxis() != 0 ||
        c.type(gather.getData()).getRank() != 1)
      return std::nullopt;
    SymInts out;
    for (SymInt i : *indices) {
      auto index = constantOf(i);
      if (!index)
        return std::nullopt;
      int64_t at = *index < 0 ? *index + (int64_t)data->size() : *index;
      if (at < 0 || at >= (int64_t)data->size())
        return std::nullopt;
      out.push_back((*data)[at]);
    }
    return out;
  }
  if (isa<k::ReshapeOp>(op))
    return operandElements(0);
  if (auto cast = dyn_cast<k::CastOp>(op)) {
    if (!isa<IntegerType>(cast.getTo()))
      return std::nullopt;
    return operandElements(0);
  }
  if (auto concat = dyn_cast<k::ConcatOp>(op)) {
    if (c.type(concat.getResult()).getRank() != 1)
      return std::nullopt;
    SymInts out;
    for (unsigned i = 0; i < op->getNumOperands(); ++i) {
      auto part = operandElements(i);
      if (!part)
        return std::nullopt;
      out.append(*part);
    }
    return out;
  }
  if (auto slice = dyn_cast<k::SliceOp>(op)) {
    auto data = operandElements(0);
    if (!data || c.type(slice.getInput()).getRank() != 1)
      return std::nullopt;
    int64_t start = slice.getStarts()[0], end = slice.getEnds()[0],
            step = slice.getSteps()[0];
    SymInts out;
    for (int64_t i = start; step > 0 ? i < end : i > end; i += step)
      if (i >= 0 && i < (int64_t)data->size())
        out.push_back((*data)[i]);
    return out;
  }
  std::optional<Arith> kind;
  if (isa<k::AddOp>(op))
    kind = Arith::Add;
  else if (isa<k::SubOp>(op))
    kind = Arith::Sub;
  else if (isa<k::MulOp>(op))
    kind = Arith::Mul;
  else if (isa<k::DivOp>(op))
    kind = Arith::Div;
  if (!kind)
    return std::nullopt;
  auto lhs = operandElements(0), rhs = operandElements(1);
  if (!lhs || !rhs ||
      (lhs->size() != rhs->size() && lhs->size() != 1 && rhs->size() != 1))
    return std::nullopt;
  size_t n = std::max(lhs->size(), rhs->size());
  SymInts out;
  for (size_t i = 0; i < n; ++i)
    out.push_back(arithSym(c, *kind, (*lhs)[lhs->size() == 1 ? 0 : i],
                           (*rhs)[rhs->size() == 1 ? 0 : i]));
  return out;
}
} // namespace

Value mlir::kiln::onnx_import::foldShapeArithmetic(NodeContext &c, Value v) {
  Operation *op = v.getDefiningOp();
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!op || !isa_and_nonnull<k::KilnDialect>(op->getDialect()) || !type ||
      !type.hasStaticShape() || !isa<IntegerType>(type.getElementType()) ||
      type.getNumElements() > kMaxSymbolicElements ||
      op->getNumResults() != 1 ||
      !llvm::any_of(op->getOperands(), isSymbolicShape))
    return v;
  OpBuilder::InsertionGuard guard(c.b);
  c.b.setInsertionPoint(op);
  auto values = evaluate(c, op);
  if (!values || (int64_t)values->size() != type.getNumElements())
    return v;
  Value folded = materialize(c, *values, type);
  v.replaceAllUsesWith(folded);
  if (op->use_empty())
    op->erase();
  return folded;
}

FailureOr<Value> mlir::kiln::onnx_import::reshapeSymbolic(
    NodeContext &c, Value input, ArrayRef<SymInt> target, bool allowZero) {
  auto inputType = c.type(input);
  int64_t inRank = inputType.getRank();
  SymInts resolved;
  int64_t inferAt = -1;
  for (auto [i, t] : llvm::enumerate(target)) {
    SymInt value = t;
    if (auto constant = constantOf(t)) {
      if (*constant == 0 && !allowZero) {
        if ((int64_t)i >= inRank) {
          c.error = fmt::format("shape copies dim {} that the input does not "
                                "have",
                                i);
          return failure();
        }
        value = dimOf(c, input, i);
      } else if (*constant == -1) {
        if (inferAt >= 0) {
          c.error = "shape has more than one -1";
          return failure();
        }
        inferAt = i;
      } else if (*constant < 0) {
        c.error = "shape has a negative dim";
        return failure();
      }
    }
    resolved.push_back(value);
  }
  if (inferAt >= 0) {
    SymInt known = constantSym(c.ctx(), 1);
    for (auto [i, v] : llvm::enumerate(resolved))
      if ((int64_t)i != inferAt)
        known = mulSym(c, known, v);
    resolved[inferAt] = arithSym(c, Arith::Div, numElementsOf(c, input), known);
  }
  SmallVector<int64_t> staticShape;
  for (SymInt v : resolved)
    staticShape.push_back(constantOf(v).value_or(-1));
  if (inputType.hasStaticShape() && !anyRunTime(resolved))
    return c.make<k::ReshapeOp>(input, {c.named("shape", c.i64s(staticShape))});
  Value shape = materialize(
      c, resolved,
      RankedTensorType::get({(int64_t)resolved.size()}, c.b.getI64Type()));
  return c.make<k::DynamicReshapeOp>(
      {input, shape}, {c.named("allow_zero", c.b.getBoolAttr(true)),
                       c.named("static_shape", c.i64s(staticShape))});
}

FailureOr<Value>
mlir::kiln::onnx_import::expandSymbolic(NodeContext &c, Value input,
                                        ArrayRef<SymInt> shape) {
  auto inputType = c.type(input);
  int64_t r = inputType.getRank(), n = shape.size();
  int64_t rank = std::max(r, n);
  SmallVector<int64_t> known;
  for (int64_t i = 0; i < rank; ++i) {
    std::optional<int64_t> s =
        i >= rank - n ? constantOf(shape[i - (rank - n)]) : 1;
    int64_t x = i >= rank - r ? inputType.getDimSize(i - (rank - r)) : 1;
    if (!ShapedType::isDynamic(x) && x != 1) {
      if (s && *s != 1 && *s != x) {
        c.error = fmt::format("shape does not broadcast with the input (dim "
                              "{}: {} vs {})",
                              i, x, *s);
        return failure();
      }
      known.push_back(x);
    } else if (s && *s != 1) {
      known.push_back(*s);
    } else if (s && !ShapedType::isDynamic(x)) {
      known.push_back(1);
    } else {
      known.push_back(-1);
    }
  }
  Value shapeValue =
      materialize(c, shape, RankedTensorType::get({n}, c.b.getI64Type()));
  return c.make<k::DynamicExpandOp>({input, shapeValue},
                                    {c.named("static_shape", c.i64s(known))});
}
