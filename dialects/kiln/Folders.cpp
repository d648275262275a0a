//===- Folders.cpp - Constant folding of kiln ops -------------------------===//
//
// Folds ops whose operands are small dense constants. Exported graphs compute
// shapes at run time (Shape -> Gather -> Concat -> Reshape); with static input
// shapes the importer turns Shape into a constant and these folders reduce
// the rest to the attribute that kiln.reshape and friends need. Large tensors
// (weights) are not folded here: they stay raw blobs.
//
//===----------------------------------------------------------------------===//

#include "dialects/kiln/KilnOps.h"

#include "mlir/IR/Matchers.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/APInt.h"
#include "llvm/ADT/APSInt.h"

using namespace mlir;
using namespace mlir::kiln;

namespace {
constexpr int64_t kMaxFoldElements = 4096;

/// A small constant operand: its elements as attributes, row-major.
struct Elements {
  RankedTensorType type;
  SmallVector<Attribute> values;
};

std::optional<Elements> getElements(Attribute attr) {
  auto dense = dyn_cast_if_present<DenseElementsAttr>(attr);
  if (!dense)
    return std::nullopt;
  auto type = cast<RankedTensorType>(dense.getType());
  if (type.getNumElements() > kMaxFoldElements)
    return std::nullopt;
  Elements e{type, {}};
  llvm::append_range(e.values, dense.getValues<Attribute>());
  return e;
}

SmallVector<int64_t> stridesOf(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t i = (int64_t)shape.size() - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

/// Linear index into `in` (broadcast to `out`) of the element at `outIndex`.
int64_t broadcastIndex(int64_t outIndex, ArrayRef<int64_t> out,
                       ArrayRef<int64_t> in) {
  SmallVector<int64_t> outStrides = stridesOf(out), inStrides = stridesOf(in);
  int64_t offset = out.size() - in.size(), result = 0;
  for (size_t d = 0; d < out.size(); ++d) {
    int64_t coord = (outIndex / outStrides[d]) % out[d];
    if ((int64_t)d >= offset && in[d - offset] != 1)
      result += coord * inStrides[d - offset];
  }
  return result;
}

DenseElementsAttr makeDense(Type type, ArrayRef<Attribute> values) {
  return DenseElementsAttr::get(cast<ShapedType>(type), values);
}

using IntFn = std::function<std::optional<APInt>(const APInt &, const APInt &)>;
using FloatFn =
    std::function<std::optional<APFloat>(const APFloat &, const APFloat &)>;

/// Folds a broadcasting binary op; a missing function means "do not fold".
OpFoldResult foldBinary(Type resultType, ArrayRef<Attribute> operands,
                        IntFn intFn, FloatFn floatFn,
                        Type valueType = nullptr) {
  auto lhs = getElements(operands[0]), rhs = getElements(operands[1]);
  auto type = cast<RankedTensorType>(resultType);
  if (!lhs || !rhs || !type.hasStaticShape() ||
      type.getNumElements() > kMaxFoldElements)
    return {};
  Type elementType = valueType ? valueType : type.getElementType();
  SmallVector<Attribute> values;
  for (int64_t i = 0; i < type.getNumElements(); ++i) {
    Attribute a =
        lhs->values[broadcastIndex(i, type.getShape(), lhs->type.getShape())];
    Attribute b =
        rhs->values[broadcastIndex(i, type.getShape(), rhs->type.getShape())];
    if (auto ia = dyn_cast<IntegerAttr>(a)) {
      auto ib = dyn_cast<IntegerAttr>(b);
      if (!intFn || !ib || ia.getType() != ib.getType())
        return {};
      auto r = intFn(ia.getValue(), ib.getValue());
      if (!r)
        return {};
      values.push_back(IntegerAttr::get(elementType, *r));
    } else if (auto fa = dyn_cast<FloatAttr>(a)) {
      auto fb = dyn_cast<FloatAttr>(b);
      if (!floatFn || !fb || fa.getType() != fb.getType())
        return {};
      auto r = floatFn(fa.getValue(), fb.getValue());
      if (!r)
        return {};
      if (elementType.isInteger(1))
        values.push_back(IntegerAttr::get(elementType, r->isNonZero()));
      else
        values.push_back(FloatAttr::get(elementType, *r));
    } else {
      return {};
    }
  }
  return makeDense(type, values);
}

/// Unsigned ints and bools (false < true) compare without sign.
bool isUnsigned(Type type) {
  Type et = cast<RankedTensorType>(type).getElementType();
  return et.isUnsignedInteger() || et.isInteger(1);
}

APInt boolInt(bool b) { return APInt(1, b ? 1 : 0); }
APFloat boolFloat(bool b) { return APFloat(b ? 1.0f : 0.0f); }
} // namespace

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

OpFoldResult AddOp::fold(FoldAdaptor a) {
  return foldBinary(
      getType(), a.getOperands(),
      [](const APInt &x, const APInt &y) { return x + y; },
      [](const APFloat &x, const APFloat &y) { return x + y; });
}

OpFoldResult SubOp::fold(FoldAdaptor a) {
  return foldBinary(
      getType(), a.getOperands(),
      [](const APInt &x, const APInt &y) { return x - y; },
      [](const APFloat &x, const APFloat &y) { return x - y; });
}

OpFoldResult MulOp::fold(FoldAdaptor a) {
  return foldBinary(
      getType(), a.getOperands(),
      [](const APInt &x, const APInt &y) { return x * y; },
      [](const APFloat &x, const APFloat &y) { return x * y; });
}

OpFoldResult DivOp::fold(FoldAdaptor a) {
  bool isU = isUnsigned(getType());
  return foldBinary(
      getType(), a.getOperands(),
      [isU](const APInt &x, const APInt &y) -> std::optional<APInt> {
        if (y.isZero())
          return std::nullopt;
        return isU ? x.udiv(y) : x.sdiv(y);
      },
      [](const APFloat &x, const APFloat &y) { return x / y; });
}

OpFoldResult NegOp::fold(FoldAdaptor a) {
  auto in = getElements(a.getInput());
  if (!in)
    return {};
  SmallVector<Attribute> values;
  for (Attribute v : in->values) {
    if (auto i = dyn_cast<IntegerAttr>(v))
      values.push_back(IntegerAttr::get(i.getType(), -i.getValue()));
    else if (auto f = dyn_cast<FloatAttr>(v))
      values.push_back(FloatAttr::get(f.getType(), -f.getValue()));
    else
      return {};
  }
  return makeDense(getType(), values);
}

OpFoldResult PowOp::fold(FoldAdaptor) { return {}; }

OpFoldResult MaxOp::fold(FoldAdaptor a) {
  bool isU = isUnsigned(getType());
  return foldBinary(
      getType(), a.getOperands(),
      [isU](const APInt &x, const APInt &y) {
        return (isU ? x.ugt(y) : x.sgt(y)) ? x : y;
      },
      [](const APFloat &x, const APFloat &y) { return llvm::maximum(x, y); });
}

OpFoldResult MinOp::fold(FoldAdaptor a) {
  bool isU = isUnsigned(getType());
  return foldBinary(
      getType(), a.getOperands(),
      [isU](const APInt &x, const APInt &y) {
        return (isU ? x.ult(y) : x.slt(y)) ? x : y;
      },
      [](const APFloat &x, const APFloat &y) { return llvm::minimum(x, y); });
}

OpFoldResult EqualOp::fold(FoldAdaptor a) {
  return foldBinary(
      getType(), a.getOperands(),
      [](const APInt &x, const APInt &y) { return boolInt(x == y); },
      [](const APFloat &x, const APFloat &y) {
        return boolFloat(x.compare(y) == APFloat::cmpEqual);
      });
}

OpFoldResult LessOp::fold(FoldAdaptor a) {
  bool isU = isUnsigned(getLhs().getType());
  return foldBinary(
      getType(), a.getOperands(),
      [isU](const APInt &x, const APInt &y) {
        return boolInt(isU ? x.ult(y) : x.slt(y));
      },
      [](const APFloat &x, const APFloat &y) {
        return boolFloat(x.compare(y) == APFloat::cmpLessThan);
      });
}

OpFoldResult GreaterOp::fold(FoldAdaptor a) {
  bool isU = isUnsigned(getLhs().getType());
  return foldBinary(
      getType(), a.getOperands(),
      [isU](const APInt &x, const APInt &y) {
        return boolInt(isU ? x.ugt(y) : x.sgt(y));
      },
      [](const APFloat &x, const APFloat &y) {
        return boolFloat(x.compare(y) == APFloat::cmpGreaterThan);
      });
}

OpFoldResult LessEqualOp::fold(FoldAdaptor a) {
  bool isU = isUnsigned(getLhs().getType());
  return foldBinary(
      getType(), a.getOperands(),
      [isU](const APInt &x, const APInt &y) {
        return boolInt(isU ? x.ule(y) : x.sle(y));
      },
      [](const APFloat &x, const APFloat &y) {
        auto c = x.compare(y);
        return boolFloat(c == APFloat::cmpLessThan || c == APFloat::cmpEqual);
      });
}

OpFoldResult GreaterEqualOp::fold(FoldAdaptor a) {
  bool isU = isUnsigned(getLhs().getType());
  return foldBinary(
      getType(), a.getOperands(),
      [isU](const APInt &x, const APInt &y) {
        return boolInt(isU ? x.uge(y) : x.sge(y));
      },
      [](const APFloat &x, const APFloat &y) {
        auto c = x.compare(y);
        return boolFloat(c == APFloat::cmpGreaterThan ||
                         c == APFloat::cmpEqual);
      });
}

OpFoldResult ModOp::fold(FoldAdaptor a) {
  bool isU = isUnsigned(getType()), fmod = getFmod();
  return foldBinary(
      getType(), a.getOperands(),
      [isU, fmod](const APInt &x, const APInt &y) -> std::optional<APInt> {
        if (y.isZero())
          return std::nullopt;
        if (isU)
          return x.urem(y);
        APInt r = x.srem(y);
        // Python-style: a non-zero remainder takes the divisor's sign.
        if (!fmod && !r.isZero() && r.isNegative() != y.isNegative())
          r += y;
        return r;
      },
      [](const APFloat &x, const APFloat &y) -> std::optional<APFloat> {
        APFloat r = x;
        r.mod(y);
        return r;
      });
}

OpFoldResult AndOp::fold(FoldAdaptor a) {
  return foldBinary(
      getType(), a.getOperands(),
      [](const APInt &x, const APInt &y) { return x & y; }, nullptr);
}

OpFoldResult OrOp::fold(FoldAdaptor a) {
  return foldBinary(
      getType(), a.getOperands(),
      [](const APInt &x, const APInt &y) { return x | y; }, nullptr);
}

OpFoldResult XorOp::fold(FoldAdaptor a) {
  return foldBinary(
      getType(), a.getOperands(),
      [](const APInt &x, const APInt &y) { return x ^ y; }, nullptr);
}

OpFoldResult ShiftLeftOp::fold(FoldAdaptor a) {
  return foldBinary(
      getType(), a.getOperands(),
      [](const APInt &x, const APInt &y) {
        return y.uge(x.getBitWidth()) ? APInt(x.getBitWidth(), 0) : x.shl(y);
      },
      nullptr);
}

OpFoldResult ShiftRightOp::fold(FoldAdaptor a) {
  return foldBinary(
      getType(), a.getOperands(),
      [](const APInt &x, const APInt &y) {
        return y.uge(x.getBitWidth()) ? APInt(x.getBitWidth(), 0) : x.lshr(y);
      },
      nullptr);
}

OpFoldResult WhereOp::fold(FoldAdaptor a) {
  auto cond = getElements(a.getCondition());
  auto x = getElements(a.getX()), y = getElements(a.getY());
  auto type = getType();
  if (!cond || !x || !y || !type.hasStaticShape() ||
      type.getNumElements() > kMaxFoldElements)
    return {};
  SmallVector<Attribute> values;
  for (int64_t i = 0; i < type.getNumElements(); ++i) {
    auto c = cast<IntegerAttr>(cond->values[broadcastIndex(
        i, type.getShape(), cond->type.getShape())]);
    const Elements &pick = c.getValue().isZero() ? *y : *x;
    values.push_back(
        pick.values[broadcastIndex(i, type.getShape(), pick.type.getShape())]);
  }
  return makeDense(type, values);
}

OpFoldResult CastOp::fold(FoldAdaptor a) {
  if (getInput().getType() == getType())
    return getInput();
  auto in = getElements(a.getInput());
  if (!in)
    return {};
  Type from = in->type.getElementType(), to = getTo();
  SmallVector<Attribute> values;
  for (Attribute v : in->values) {
    if (auto i = dyn_cast<IntegerAttr>(v)) {
      APInt x = i.getValue();
      bool sign = !from.isUnsignedInteger() && !from.isInteger(1);
      if (auto toInt = dyn_cast<IntegerType>(to)) {
        unsigned width = toInt.getWidth();
        APInt r = width == 1
                      ? boolInt(!x.isZero())
                      : (sign ? x.sextOrTrunc(width) : x.zextOrTrunc(width));
        values.push_back(IntegerAttr::get(to, r));
      } else if (auto toFloat = dyn_cast<FloatType>(to)) {
        APFloat f(toFloat.getFloatSemantics());
        f.convertFromAPInt(x, sign, APFloat::rmNearestTiesToEven);
        values.push_back(FloatAttr::get(to, f));
      } else {
        return {};
      }
    } else if (auto f = dyn_cast<FloatAttr>(v)) {
      APFloat x = f.getValue();
      bool losesInfo;
      if (auto toInt = dyn_cast<IntegerType>(to)) {
        if (toInt.getWidth() == 1) {
          values.push_back(IntegerAttr::get(to, boolInt(x.isNonZero())));
          continue;
        }
        APSInt r(toInt.getWidth(), /*isUnsigned=*/toInt.isUnsigned());
        bool exact;
        if (x.convertToInteger(r, APFloat::rmTowardZero, &exact) &
            APFloat::opInvalidOp)
          return {};
        values.push_back(IntegerAttr::get(to, r));
      } else if (auto toFloat = dyn_cast<FloatType>(to)) {
        x.convert(toFloat.getFloatSemantics(), APFloat::rmNearestTiesToEven,
                  &losesInfo);
        values.push_back(FloatAttr::get(to, x));
      } else {
        return {};
      }
    } else {
      return {};
    }
  }
  return makeDense(getType(), values);
}

OpFoldResult ReshapeOp::fold(FoldAdaptor a) {
  if (getInput().getType() == getType())
    return getInput();
  if (auto dense = dyn_cast_if_present<DenseElementsAttr>(a.getInput()))
    return dense.reshape(getType());
  return {};
}

OpFoldResult TransposeOp::fold(FoldAdaptor a) {
  ArrayRef<int64_t> perm = getPerm();
  if (llvm::all_of(llvm::enumerate(perm),
                   [](auto p) { return (int64_t)p.index() == p.value(); }))
    return getInput();
  // Small integer constants: shape arithmetic (torch's exporter builds
  // Pad's pads as [begins, ends] through a transpose of [n, 2]). Float
  // weights stay as they are for the passes that read them.
  auto type = getType();
  auto in = getElements(a.getInput());
  if (!in || !type.hasStaticShape() || !type.getElementType().isInteger())
    return {};
  SmallVector<int64_t> outStrides = stridesOf(type.getShape());
  SmallVector<int64_t> inStrides = stridesOf(in->type.getShape());
  SmallVector<Attribute> values;
  for (int64_t i = 0; i < type.getNumElements(); ++i) {
    int64_t src = 0;
    for (int64_t d = 0; d < type.getRank(); ++d)
      src += (i / outStrides[d]) % type.getDimSize(d) * inStrides[perm[d]];
    values.push_back(in->values[src]);
  }
  return makeDense(type, values);
}

OpFoldResult ExpandOp::fold(FoldAdaptor a) {
  if (getInput().getType() == getType())
    return getInput();
  if (auto dense = dyn_cast_if_present<DenseElementsAttr>(a.getInput()))
    if (dense.isSplat())
      return DenseElementsAttr::get(getType(),
                                    dense.getSplatValue<Attribute>());
  return {};
}

OpFoldResult ConcatOp::fold(FoldAdaptor a) {
  if (getInputs().size() == 1)
    return getInputs().front();
  auto type = getType();
  if (!type.hasStaticShape() || type.getNumElements() > kMaxFoldElements)
    return {};
  SmallVector<Elements> inputs;
  for (Attribute attr : a.getInputs()) {
    auto e = getElements(attr);
    if (!e)
      return {};
    inputs.push_back(std::move(*e));
  }
  // Row-major: for each outer index, append each input's inner block.
  int64_t axis = getAxis();
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= type.getDimSize(d);
  SmallVector<Attribute> values;
  for (int64_t o = 0; o < outer; ++o)
    for (const Elements &e : inputs) {
      int64_t block = outer ? e.type.getNumElements() / outer : 0;
      llvm::append_range(values,
                         ArrayRef<Attribute>(e.values).slice(o * block, block));
    }
  return makeDense(type, values);
}

OpFoldResult SliceOp::fold(FoldAdaptor a) {
  if (getInput().getType() == getType() &&
      llvm::all_of(getStarts(), [](int64_t s) { return s == 0; }) &&
      llvm::all_of(getSteps(), [](int64_t s) { return s == 1; }))
    return getInput();
  auto in = getElements(a.getInput());
  if (!in)
    return {};
  auto type = getType();
  SmallVector<int64_t> outStrides = stridesOf(type.getShape());
  SmallVector<int64_t> inStrides = stridesOf(in->type.getShape());
  SmallVector<Attribute> values;
  for (int64_t i = 0; i < type.getNumElements(); ++i) {
    int64_t src = 0;
    for (int64_t d = 0; d < type.getRank(); ++d) {
      int64_t coord = (i / outStrides[d]) % type.getDimSize(d);
      src += (getStarts()[d] + coord * getSteps()[d]) * inStrides[d];
    }
    values.push_back(in->values[src]);
  }
  return makeDense(type, values);
}

OpFoldResult GatherOp::fold(FoldAdaptor a) {
  auto data = getElements(a.getData()), indices = getElements(a.getIndices());
  auto type = getType();
  if (!data || !indices || !type.hasStaticShape() ||
      type.getNumElements() > kMaxFoldElements)
    return {};
  int64_t axis = getAxis();
  ArrayRef<int64_t> dataShape = data->type.getShape();
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= dataShape[d];
  for (int64_t d = axis + 1; d < (int64_t)dataShape.size(); ++d)
    inner *= dataShape[d];
  int64_t axisSize = dataShape[axis];
  SmallVector<Attribute> values;
  for (int64_t o = 0; o < outer; ++o)
    for (Attribute idxAttr : indices->values) {
      int64_t idx = cast<IntegerAttr>(idxAttr).getValue().getSExtValue();
      if (idx < 0)
        idx += axisSize;
      if (idx < 0 || idx >= axisSize)
        return {};
      for (int64_t j = 0; j < inner; ++j)
        values.push_back(data->values[(o * axisSize + idx) * inner + j]);
    }
  return makeDense(type, values);
}
