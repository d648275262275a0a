//===- AtenSymbolic.cpp - Arithmetic on symbolic sizes --------------------===//
//
// A program exported with symbolic sizes computes on them: `sym_size` reads
// an extent, and the Python operators torch.export may serialize
// (`_operator.add` ... `_operator.rshift`, `math.trunc`, `torch.sym_max`,
// `torch.sym_ite`, ...; torch's _SYM_OPS, every one of them) combine
// SymInts, SymFloats and SymBools into views' sizes, scalars of tensor ops
// and run-time assertions. Each becomes scalar arith on i64, f64 or i1 values
// with Python's rules: an int and a float give a float, `//` and `%` round
// toward negative infinity, `/` is always a float, a bool counts as 0 or 1.
//
//   %s = sym_size(x, 1); %m = s % 4; %p = (4 - m) % 4
//   ->  %s = index_cast(tensor.dim %x, 1) : i64
//       %r = arith.remsi %s, 4; (%r + 4 when %r and 4 differ in sign)
//
// `aten._assert_scalar` becomes a kiln.assert: a run whose sizes break an
// assertion the exporter recorded fails with its message.
//
//===----------------------------------------------------------------------===//
#include "compiler/import/pt2/AtenContext.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::pt2;

namespace {
void assertAtRunTime(AtenContext &c, Value ok, const Twine &message);

bool isFloat(Value v) { return isa<FloatType>(v.getType()); }
bool isBool(Value v) { return v.getType().isInteger(1); }

Results noTensors() { return SmallVector<Value>{Value()}; }

/// `v` as an f64 (ints signed, bools as 0/1).
Value toFloat(AtenContext &c, Value v) {
  Type f64 = c.b.getF64Type();
  if (isFloat(v))
    return v;
  if (isBool(v))
    return arith::UIToFPOp::create(c.b, c.loc, f64, v);
  return arith::SIToFPOp::create(c.b, c.loc, f64, v);
}

/// `v` as an i64 (bools as 0/1, floats truncated toward zero: Python's
/// int()).
Value toInt(AtenContext &c, Value v) {
  Type i64 = c.b.getI64Type();
  if (isBool(v))
    return arith::ExtUIOp::create(c.b, c.loc, i64, v);
  if (isFloat(v))
    return arith::FPToSIOp::create(c.b, c.loc, i64, v);
  return v;
}

/// Both operands in the type Python computes `a op b` in: f64 if either is
/// a float, else i64.
std::pair<Value, Value> promote(AtenContext &c, Value a, Value b) {
  if (isFloat(a) || isFloat(b))
    return {toFloat(c, a), toFloat(c, b)};
  return {toInt(c, a), toInt(c, b)};
}

Value constantLike(AtenContext &c, Value like, double value) {
  if (isFloat(like))
    return arith::ConstantFloatOp::create(c.b, c.loc, c.b.getF64Type(),
                                          llvm::APFloat(value));
  return arith::ConstantIntOp::create(c.b, c.loc, like.getType(),
                                      (int64_t)value);
}

/// Python's a % b: the remainder takes b's sign.
Value pythonMod(AtenContext &c, Value a, Value b) {
  OpBuilder &ob = c.b;
  Location loc = c.loc;
  Value zero = constantLike(c, a, 0);
  Value r, rNeg, bNeg, nonZero;
  if (isFloat(a)) {
    r = arith::RemFOp::create(ob, loc, a, b);
    rNeg = arith::CmpFOp::create(ob, loc, arith::CmpFPredicate::OLT, r, zero);
    bNeg = arith::CmpFOp::create(ob, loc, arith::CmpFPredicate::OLT, b, zero);
    nonZero =
        arith::CmpFOp::create(ob, loc, arith::CmpFPredicate::ONE, r, zero);
  } else {
    r = arith::RemSIOp::create(ob, loc, a, b);
    rNeg = arith::CmpIOp::create(ob, loc, arith::CmpIPredicate::slt, r, zero);
    bNeg = arith::CmpIOp::create(ob, loc, arith::CmpIPredicate::slt, b, zero);
    nonZero = arith::CmpIOp::create(ob, loc, arith::CmpIPredicate::ne, r, zero);
  }
  Value differ = arith::XOrIOp::create(ob, loc, rNeg, bNeg);
  Value fix = arith::AndIOp::create(ob, loc, differ, nonZero);
  Value shifted = isFloat(a) ? Value(arith::AddFOp::create(ob, loc, r, b))
                             : Value(arith::AddIOp::create(ob, loc, r, b));
  return arith::SelectOp::create(ob, loc, fix, shifted, r);
}

/// Whether the node's output is a SymFloat (how `pow` tells an int result
/// from a float one: 2 ** -1 is 0.5).
bool floatOutput(AtenContext &c) {
  const llvm::json::Array *outputs = c.node.getArray("outputs");
  const llvm::json::Object *out =
      outputs && !outputs->empty() ? outputs->front().getAsObject() : nullptr;
  return out && out->getObject("as_sym_float");
}

/// a ** b: by repeated squaring for a constant exponent >= 0 on ints,
/// else math.powf (rounded back to an int when the program says it is one).
Value power(AtenContext &c, Value a, Value b) {
  APInt exponent;
  if (!isFloat(a) && !isFloat(b) && !floatOutput(c) &&
      matchPattern(b, m_ConstantInt(&exponent)) && !exponent.isNegative() &&
      exponent.getActiveBits() < 32) {
    Value base = toInt(c, a);
    Value result = arith::ConstantIntOp::create(c.b, c.loc, base.getType(), 1);
    for (uint64_t e = exponent.getZExtValue(); e; e >>= 1) {
      if (e & 1)
        result = arith::MulIOp::create(c.b, c.loc, result, base);
      if (e > 1)
        base = arith::MulIOp::create(c.b, c.loc, base, base);
    }
    return result;
  }
  Value r = math::PowFOp::create(c.b, c.loc, toFloat(c, a), toFloat(c, b));
  if (floatOutput(c))
    return r;
  return arith::FPToSIOp::create(c.b, c.loc, c.b.getI64Type(),
                                 math::RoundOp::create(c.b, c.loc, r));
}

enum class Binary {
  Add,
  Sub,
  Mul,
  TrueDiv,
  FloorDiv,
  Mod,
  Pow,
  Shl,
  Shr,
  And,
  Or,
  Max,
  Min
};

Value binaryOp(AtenContext &c, Binary kind, Value a, Value b) {
  OpBuilder &ob = c.b;
  Location loc = c.loc;
  if (kind == Binary::And || kind == Binary::Or) {
    // Bools stay bools (the & of two SymBools); ints combine bitwise.
    if (!(isBool(a) && isBool(b)))
      std::tie(a, b) = promote(c, a, b);
    return kind == Binary::And ? Value(arith::AndIOp::create(ob, loc, a, b))
                               : Value(arith::OrIOp::create(ob, loc, a, b));
  }
  if (kind == Binary::Pow)
    return power(c, a, b);
  if (kind == Binary::TrueDiv)
    return arith::DivFOp::create(ob, loc, toFloat(c, a), toFloat(c, b));
  std::tie(a, b) = promote(c, a, b);
  bool f = isFloat(a);
  switch (kind) {
  case Binary::Add:
    return f ? Value(arith::AddFOp::create(ob, loc, a, b))
             : Value(arith::AddIOp::create(ob, loc, a, b));
  case Binary::Sub:
    return f ? Value(arith::SubFOp::create(ob, loc, a, b))
             : Value(arith::SubIOp::create(ob, loc, a, b));
  case Binary::Mul:
    return f ? Value(arith::MulFOp::create(ob, loc, a, b))
             : Value(arith::MulIOp::create(ob, loc, a, b));
  case Binary::FloorDiv:
    if (f)
      return math::FloorOp::create(ob, loc,
                                   arith::DivFOp::create(ob, loc, a, b));
    return arith::FloorDivSIOp::create(ob, loc, a, b);
  case Binary::Mod:
    return pythonMod(c, a, b);
  case Binary::Shl:
    return arith::ShLIOp::create(ob, loc, toInt(c, a), toInt(c, b));
  case Binary::Shr:
    return arith::ShRSIOp::create(ob, loc, toInt(c, a), toInt(c, b));
  case Binary::Max:
    return f ? Value(arith::MaxNumFOp::create(ob, loc, a, b))
             : Value(arith::MaxSIOp::create(ob, loc, a, b));
  case Binary::Min:
    return f ? Value(arith::MinNumFOp::create(ob, loc, a, b))
             : Value(arith::MinSIOp::create(ob, loc, a, b));
  default:
    llvm_unreachable("handled above");
  }
}

Results binary(AtenContext &c, Binary kind) {
  FailureOr<Value> a = c.symScalar("a"), b = c.symScalar("b");
  if (failed(a) || failed(b))
    return failure();
  bool bitwise = kind == Binary::Shl || kind == Binary::Shr ||
                 kind == Binary::And || kind == Binary::Or;
  if (bitwise && (isFloat(*a) || isFloat(*b)))
    return c.fail("a bitwise operator on a float"), failure();
  // Integer // and % by a divisor known only at run time: Python raises
  // on 0, LLVM's division would trap; the run fails with a message.
  APInt divisor;
  if ((kind == Binary::FloorDiv || kind == Binary::Mod) && !isFloat(*a) &&
      !isFloat(*b) && !matchPattern(*b, m_ConstantInt(&divisor))) {
    Value d = toInt(c, *b);
    assertAtRunTime(c,
                    arith::CmpIOp::create(c.b, c.loc, arith::CmpIPredicate::ne,
                                          d, constantLike(c, d, 0)),
                    "integer division or modulo by zero");
  }
  c.setSymOutput(binaryOp(c, kind, *a, *b));
  return noTensors();
}

Results compare(AtenContext &c, arith::CmpIPredicate ip,
                arith::CmpFPredicate fp) {
  FailureOr<Value> a = c.symScalar("a"), b = c.symScalar("b");
  if (failed(a) || failed(b))
    return failure();
  auto [x, y] = promote(c, *a, *b);
  c.setSymOutput(isFloat(x)
                     ? Value(arith::CmpFOp::create(c.b, c.loc, fp, x, y))
                     : Value(arith::CmpIOp::create(c.b, c.loc, ip, x, y)));
  return noTensors();
}

enum class Unary { Neg, Pos, Not, Trunc, ToFloat, Sqrt };

Results unary(AtenContext &c, Unary kind, StringRef arg = "a") {
  FailureOr<Value> a = c.symScalar(arg);
  if (failed(a))
    return failure();
  Value v = *a, r;
  switch (kind) {
  case Unary::Neg:
    r = isFloat(v)
            ? Value(arith::NegFOp::create(c.b, c.loc, v))
            : Value(arith::SubIOp::create(
                  c.b, c.loc, constantLike(c, toInt(c, v), 0), toInt(c, v)));
    break;
  case Unary::Pos:
    r = isBool(v) ? toInt(c, v) : v;
    break;
  case Unary::Not:
    if (!isBool(v))
      return c.fail("sym_not of a number, not a SymBool"), failure();
    r = arith::XOrIOp::create(
        c.b, c.loc, v,
        arith::ConstantIntOp::create(c.b, c.loc, v.getType(), 1));
    break;
  case Unary::Trunc: // math.trunc and torch.sym_int: toward zero
    r = toInt(c, v);
    break;
  case Unary::ToFloat:
    r = toFloat(c, v);
    break;
  case Unary::Sqrt:
    r = math::SqrtOp::create(c.b, c.loc, toFloat(c, v));
    break;
  }
  c.setSymOutput(r);
  return noTensors();
}

/// torch.sym_ite(b, t, f): t where b holds, else f.
Results ifThenElse(AtenContext &c) {
  FailureOr<Value> cond = c.symScalar("b"), t = c.symScalar("t"),
                   f = c.symScalar("f");
  if (failed(cond) || failed(t) || failed(f))
    return failure();
  if (!isBool(*cond))
    return c.fail("sym_ite's condition is not a SymBool"), failure();
  auto [x, y] =
      isBool(*t) && isBool(*f) ? std::make_pair(*t, *f) : promote(c, *t, *f);
  c.setSymOutput(arith::SelectOp::create(c.b, c.loc, *cond, x, y));
  return noTensors();
}

/// Ends the run with `message` unless `ok` (an i1) holds.
void assertAtRunTime(AtenContext &c, Value ok, const Twine &message) {
  Value cond = tensor::FromElementsOp::create(
      c.b, c.loc, RankedTensorType::get({}, c.b.getI1Type()), ok);
  AssertOp::create(c.b, c.loc, cond, c.b.getStringAttr(message));
}

/// aten._assert_scalar(cond, msg): a check the exporter kept for run time.
Results assertScalar(AtenContext &c) {
  FailureOr<Value> cond = c.symScalar("self");
  FailureOr<std::string> message = c.string("assert_msg");
  if (failed(cond) || failed(message))
    return failure();
  Value ok = *cond;
  if (!isBool(ok))
    ok =
        isFloat(ok)
            ? Value(arith::CmpFOp::create(c.b, c.loc, arith::CmpFPredicate::UNE,
                                          ok, constantLike(c, ok, 0)))
            : Value(arith::CmpIOp::create(c.b, c.loc, arith::CmpIPredicate::ne,
                                          ok, constantLike(c, ok, 0)));
  // torch writes a sentence of its own: "Runtime assertion failed for ...".
  assertAtRunTime(c, ok, *message);
  return noTensors();
}

/// aten.sym_constrain_range(_for_size)(size, min, max): min <= size <= max,
/// checked when the model runs (the bounds that are given; a size is at
/// least 0 by default).
Results constrainRange(AtenContext &c, bool forSize) {
  FailureOr<Value> size = c.symInt("size");
  if (failed(size))
    return failure();
  Value ok;
  std::string bounds;
  for (auto [name, pred] : {std::make_pair("min", arith::CmpIPredicate::sge),
                            std::make_pair("max", arith::CmpIPredicate::sle)}) {
    bool sizeFloor = forSize && StringRef(name) == "min";
    if (c.isNone(name) && !sizeFloor)
      continue;
    FailureOr<int64_t> bound =
        c.isNone(name) ? FailureOr<int64_t>(0) : c.integer(name);
    if (failed(bound))
      return failure();
    Value within = arith::CmpIOp::create(
        c.b, c.loc, pred, *size,
        arith::ConstantIntOp::create(c.b, c.loc, c.b.getI64Type(), *bound));
    ok = ok ? Value(arith::AndIOp::create(c.b, c.loc, ok, within)) : within;
    bounds += (bounds.empty() ? "" : ", ") + std::string(name) + " " +
              std::to_string(*bound);
  }
  if (ok)
    assertAtRunTime(c, ok,
                    "a size is outside the range the program "
                    "allows (" +
                        bounds + ")");
  return noTensors();
}

/// A size of a tensor as a symbolic integer (an i64 value for the views
/// and arithmetic that read it); no tensor.
Results symSize(AtenContext &c) {
  FailureOr<Value> x = c.tensor("self");
  FailureOr<int64_t> d = c.integer("dim");
  if (failed(x) || failed(d))
    return failure();
  FailureOr<int64_t> axis = c.dim(*d, c.type(*x).getRank());
  if (failed(axis))
    return failure();
  c.setSymOutput(c.extent(*x, *axis));
  return noTensors();
}
} // namespace

void mlir::kiln::pt2::registerAtenSymbolicHandlers(
    llvm::StringMap<AtenHandler> &t) {
  t["aten.sym_size.int"] = symSize;
  auto bin = [&](StringRef name, Binary kind) {
    t[name] = [kind](AtenContext &c) { return binary(c, kind); };
  };
  bin("_operator.add", Binary::Add);
  bin("_operator.sub", Binary::Sub);
  bin("_operator.mul", Binary::Mul);
  bin("_operator.truediv", Binary::TrueDiv);
  bin("_operator.floordiv", Binary::FloorDiv);
  bin("_operator.mod", Binary::Mod);
  bin("_operator.pow", Binary::Pow);
  bin("_operator.lshift", Binary::Shl);
  bin("_operator.rshift", Binary::Shr);
  bin("_operator.and_", Binary::And);
  bin("_operator.or_", Binary::Or);
  bin("torch.sym_max", Binary::Max);
  bin("torch.sym_min", Binary::Min);
  using IP = arith::CmpIPredicate;
  using FP = arith::CmpFPredicate;
  auto cmp = [&](StringRef name, IP ip, FP fp) {
    t[name] = [ip, fp](AtenContext &c) { return compare(c, ip, fp); };
  };
  cmp("_operator.eq", IP::eq, FP::OEQ);
  cmp("_operator.ne", IP::ne, FP::UNE);
  cmp("_operator.lt", IP::slt, FP::OLT);
  cmp("_operator.le", IP::sle, FP::OLE);
  cmp("_operator.gt", IP::sgt, FP::OGT);
  cmp("_operator.ge", IP::sge, FP::OGE);
  auto un = [&](StringRef name, Unary kind, StringRef arg = "a") {
    t[name] = [kind, arg = arg.str()](AtenContext &c) {
      return unary(c, kind, arg);
    };
  };
  un("_operator.neg", Unary::Neg);
  un("_operator.pos", Unary::Pos);
  un("torch.sym_not", Unary::Not);
  un("math.trunc", Unary::Trunc, "x");
  un("torch.sym_int", Unary::Trunc);
  un("torch.sym_float", Unary::ToFloat);
  un("torch._sym_sqrt", Unary::Sqrt);
  t["torch.sym_ite"] = ifThenElse;
  t["aten._assert_scalar.default"] = assertScalar;
  t["aten.sym_constrain_range.default"] = [](AtenContext &c) {
    return constrainRange(c, false);
  };
  t["aten.sym_constrain_range_for_size.default"] = [](AtenContext &c) {
    return constrainRange(c, true);
  };
}
