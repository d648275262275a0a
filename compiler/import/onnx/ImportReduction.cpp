//===- ImportReduction.cpp - Reduce*, ArgMax/ArgMin, Hardmax, CumSum ------===//
//
// ReduceSum takes its axes as an input since opset 13, the others since
// opset 18; before that they are an attribute. Empty axes reduce everything
// unless noop_with_empty_axes is set. ReduceL1/L2/SumSquare/LogSum/LogSumExp
// are written as the kiln ops they are defined by; Hardmax is a one-hot of
// ArgMax.
//
// Axes computed at run time: the model's declared result shape says which
// sets of dims the reduction may be over (with keepdims, the dims that
// become 1; without, every set of that many dims whose removal leaves the
// declared shape). Each candidate set is reduced, the run-time axes pick
// one, and a run whose axes match none fails:
//
//   mask[d] = any(normalize(axes) == d)
//   y = where(mask == S1, reduce(x, S1), where(mask == S2, reduce(x, S2), ..))
//
//===----------------------------------------------------------------------===//

#include "compiler/import/onnx/ImportIndexing.h"
#include "compiler/import/onnx/ImportNNBuilder.h"
#include "compiler/import/onnx/SymbolicShapes.h"

#include "onnx/onnx.pb.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

using namespace mlir;
using namespace mlir::kiln::onnx_import;
namespace k = mlir::kiln;

namespace {
/// The normalized, sorted axes of a Reduce* node; empty when
/// noop_with_empty_axes makes the reduction itself an identity (ReduceL1
/// still takes the absolute value then, as numpy's sum over axis=() does).
FailureOr<SmallVector<int64_t>> reductionAxes(NodeContext &c,
                                              int64_t axesInputSince) {
  int64_t rank = c.type(c.input(0)).getRank();
  std::optional<SmallVector<int64_t>> axes;
  if (c.opset < axesInputSince) {
    axes = c.attrInts("axes");
  } else if (c.hasInput(1)) {
    axes = c.constantInts(1);
    // An axes input with no elements is known even when fed at run time.
    if (!axes && c.type(c.input(1)).getNumElements() == 0)
      axes.emplace();
    if (!axes) {
      (void)c.needsConstant(1);
      return failure();
    }
  }
  if (!axes || axes->empty()) {
    if (c.attrInt("noop_with_empty_axes", 0))
      return SmallVector<int64_t>();
    axes.emplace();
    for (int64_t d = 0; d < rank; ++d)
      axes->push_back(d);
  }
  SmallVector<int64_t> normalized;
  for (int64_t a : *axes) {
    auto axis = c.normalizeAxis(a, rank);
    if (!axis) {
      (void)c.fail(fmt::format("axis {} out of range for rank {}", a, rank));
      return failure();
    }
    if (!llvm::is_contained(normalized, *axis))
      normalized.push_back(*axis);
  }
  llvm::sort(normalized);
  return normalized;
}

template <typename OpTy>
FailureOr<Value> makeReduce(NodeContext &c, Value x, ArrayRef<int64_t> axes,
                            bool keepdims) {
  if (axes.empty())
    return x;
  return c.make<OpTy>(x, {c.named("axes", c.i64s(axes)),
                          c.named("keepdims", c.b.getBoolAttr(keepdims))});
}

/// Builds the reduction of a node from its axes; `build` gets the input, the
/// axes and keepdims.
using ReduceBuilder = std::function<FailureOr<Value>(NodeContext &, Value,
                                                     ArrayRef<int64_t>, bool)>;

/// The sets of dims a reduction of `in` may be over to give `declared`:
/// each as a 0/1 mask per dim. With keepdims the dims of extent 1 may go
/// either way and give the same values: one set, which leaves them out.
SmallVector<SmallVector<int64_t>> candidateSets(ArrayRef<int64_t> in,
                                                ArrayRef<int64_t> declared,
                                                int64_t count, bool keepdims) {
  int64_t rank = in.size();
  SmallVector<SmallVector<int64_t>> sets;
  if (keepdims) {
    if ((int64_t)declared.size() != rank)
      return sets;
    SmallVector<int64_t> set(rank, 0);
    for (int64_t d = 0; d < rank; ++d) {
      if (declared[d] != in[d] && declared[d] != 1)
        return sets;
      set[d] = declared[d] == 1 && in[d] != 1;
    }
    sets.push_back(set);
    return sets;
  }
  if ((int64_t)declared.size() != rank - count || rank > 12)
    return sets;
  for (int64_t bits = 0; bits < (1 << rank); ++bits) {
    if (llvm::popcount((uint64_t)bits) != count)
      continue;
    SmallVector<int64_t> set, kept;
    for (int64_t d = 0; d < rank; ++d) {
      set.push_back((bits >> d) & 1);
      if (!set.back())
        kept.push_back(in[d]);
    }
    if (ArrayRef(kept) == declared)
      sets.push_back(set);
  }
  return sets;
}

/// A reduction whose axes (input 1) are computed at run time, over the
/// candidate sets the declared result shape allows (see the file comment).
/// Failure with no error set when the model declares no usable shape.
Results runTimeAxesReduce(NodeContext &c, const ReduceBuilder &build) {
  auto in = c.type(c.input(0));
  auto axesType = c.type(c.input(1));
  auto declared = c.declaredShape(0);
  bool keepdims = c.attrInt("keepdims", 1) != 0;
  if (!declared || !in.hasStaticShape() || axesType.getRank() != 1 ||
      !axesType.hasStaticShape())
    return failure();
  int64_t rank = in.getRank(), n = axesType.getDimSize(0);
  auto sets = candidateSets(in.getShape(), *declared, n, keepdims);
  if (sets.empty() || sets.size() > 16)
    return failure();
  NNBuilder e(c);
  Type i64 = c.b.getI64Type();
  Value axes = e.cast(c.input(1), i64);
  Value zero = e.k(axes, 0), one = e.k(axes, 1);
  // Every axis in [-rank, rank).
  Value inRange = e.op<k::AndOp>(
      {e.greater(axes, e.k(axes, -rank - 1)), e.less(axes, e.k(axes, rank))});
  Value allInRange = e.reduceMin(e.cast(inRange, i64), {0}, false);
  Value norm = e.select(e.less(axes, zero), e.add(axes, e.k(axes, rank)), axes);
  Value dims =
      i64Tensor(c, {1, rank}, llvm::to_vector(llvm::seq<int64_t>(0, rank)));
  Value mask =
      e.reshape(e.reduceMax(e.cast(e.equal(e.reshape(norm, {n, 1}), dims), i64),
                            {0}, false),
                {rank});
  if (e.failed)
    return failure();
  std::string where =
      fmt::format("{}: input 1 '{}'", c.opType(), c.node.input(1));
  k::AssertOp::create(
      c.b, c.loc, e.equal(allInRange, one),
      c.b.getStringAttr(
          fmt::format("{} has an axis out of range for rank {}", where, rank)));
  Value result, anyMatch;
  for (const auto &set : sets) {
    // The dims whose membership matters: all, or those of extent > 1.
    SmallVector<int64_t> axesOfSet, relevant;
    for (int64_t d = 0; d < rank; ++d) {
      if (set[d])
        axesOfSet.push_back(d);
      relevant.push_back(!keepdims || in.getDimSize(d) != 1);
    }
    Value same = e.equal(mask, i64Tensor(c, {rank}, set));
    same = e.op<k::OrOp>({same, e.equal(i64Tensor(c, {rank}, relevant), zero)});
    Value match = e.equal(e.reduceMin(e.cast(same, i64), {0}, false), one);
    auto reduced = build(c, c.input(0), axesOfSet, keepdims);
    if (e.failed || failed(reduced))
      return failure();
    result = result ? e.select(match, *reduced, result) : *reduced;
    anyMatch = anyMatch ? e.op<k::OrOp>({anyMatch, match}) : match;
  }
  if (e.failed)
    return failure();
  k::AssertOp::create(
      c.b, c.loc, anyMatch,
      c.b.getStringAttr(fmt::format(
          "{} reduces dims that do not give the declared [{}] of '{}'", where,
          fmt::join(*declared, ", "), c.node.output(0))));
  return e.done({result});
}

OpHandler reduce(int64_t axesInputSince, ReduceBuilder build) {
  return [axesInputSince, build](NodeContext &c) -> Results {
    // Axes computed at run time: the declared shape's candidates, when it
    // gives some; otherwise reductionAxes reports the input as unsupported.
    if (c.opset >= axesInputSince && c.hasInput(1) && !c.constantInts(1) &&
        c.type(c.input(1)).getNumElements() != 0) {
      Results r = runTimeAxesReduce(c, build);
      if (succeeded(r) || !c.error.empty())
        return r;
    }
    auto axes = reductionAxes(c, axesInputSince);
    if (failed(axes))
      return failure();
    return one(build(c, c.input(0), *axes, c.attrInt("keepdims", 1) != 0));
  };
}

template <typename OpTy> OpHandler reduce(int64_t axesInputSince) {
  return reduce(axesInputSince, makeReduce<OpTy>);
}

/// reduce_sum(f(x)) for an elementwise f given as a kiln op on x (and x).
template <typename OpTy, bool squareArg>
FailureOr<Value> sumOf(NodeContext &c, Value x, ArrayRef<int64_t> axes,
                       bool keepdims) {
  FailureOr<Value> fx;
  if constexpr (squareArg)
    fx = c.make<OpTy>({x, x});
  else
    fx = c.make<OpTy>(x);
  if (failed(fx))
    return failure();
  return makeReduce<k::ReduceSumOp>(c, *fx, axes, keepdims);
}

FailureOr<Value> reduceL2(NodeContext &c, Value x, ArrayRef<int64_t> axes,
                          bool keepdims) {
  auto sum = sumOf<k::MulOp, true>(c, x, axes, keepdims);
  return failed(sum) ? sum : c.make<k::SqrtOp>(*sum);
}

FailureOr<Value> reduceLogSum(NodeContext &c, Value x, ArrayRef<int64_t> axes,
                              bool keepdims) {
  auto sum = makeReduce<k::ReduceSumOp>(c, x, axes, keepdims);
  return failed(sum) ? sum : c.make<k::LogOp>(*sum);
}

/// log(sum(exp(x - m))) + m with m the max over the axes, so exp never
/// overflows.
FailureOr<Value> reduceLogSumExp(NodeContext &c, Value x,
                                 ArrayRef<int64_t> axes, bool keepdims) {
  auto max = makeReduce<k::ReduceMaxOp>(c, x, axes, /*keepdims=*/true);
  if (failed(max))
    return failure();
  auto shifted = c.make<k::SubOp>({x, *max});
  if (failed(shifted))
    return failure();
  auto exps = c.make<k::ExpOp>(*shifted);
  if (failed(exps))
    return failure();
  auto sum = makeReduce<k::ReduceSumOp>(c, *exps, axes, keepdims);
  if (failed(sum))
    return failure();
  auto log = c.make<k::LogOp>(*sum);
  if (failed(log))
    return failure();
  auto maxShaped = c.make<k::ReshapeOp>(
      *max, {c.named("shape", c.i64s(c.type(*log).getShape()))});
  if (failed(maxShaped))
    return failure();
  return c.make<k::AddOp>({*log, *maxShaped});
}

template <typename OpTy> OpHandler argReduce() {
  return [](NodeContext &c) -> Results {
    int64_t rank = c.type(c.input(0)).getRank();
    auto axis = c.normalizeAxis(c.attrInt("axis", 0), rank);
    if (!axis)
      return c.fail(fmt::format("axis {} out of range for rank {}",
                                c.attrInt("axis", 0), rank));
    return one(c.make<OpTy>(
        c.input(0),
        {c.named("axis", c.b.getI64IntegerAttr(*axis)),
         c.named("keepdims", c.b.getBoolAttr(c.attrInt("keepdims", 1))),
         c.named("select_last_index",
                 c.b.getBoolAttr(c.attrInt("select_last_index", 0)))}));
  };
}

/// One-hot of the first maximum along `axis`: arg_max compared with an iota
/// along the axis (a constant, or a kiln.dynamic_range of the run-time
/// extent). Before opset 13 the input is coerced to 2-D at `axis` (like
/// Softmax).
Results importHardmax(NodeContext &c) {
  Value x = c.input(0);
  auto type = c.type(x);
  int64_t rank = type.getRank();
  auto axis = c.normalizeAxis(c.attrInt("axis", c.opset < 13 ? 1 : -1), rank);
  if (!axis)
    return c.fail(fmt::format("axis out of range for rank {}", rank));
  bool runTime = !type.hasStaticShape();
  auto reshape = [&](Value v, ArrayRef<SymInt> shape) -> FailureOr<Value> {
    if (runTime)
      return reshapeSymbolic(c, v, shape, /*allowZero=*/true);
    SmallVector<int64_t> dims;
    for (SymInt d : shape)
      dims.push_back(*constantOf(d));
    return c.make<k::ReshapeOp>(v, {c.named("shape", c.i64s(dims))});
  };
  SymInts dims;
  for (int64_t d = 0; d < rank; ++d)
    dims.push_back(dimOf(c, x, d));
  if (c.opset < 13) {
    SymInt outer = c.b.getI64IntegerAttr(1), inner = outer;
    for (int64_t d = 0; d < rank; ++d)
      (d < *axis ? outer : inner) =
          mulSym(c, d < *axis ? outer : inner, dims[d]);
    auto flat = reshape(x, {outer, inner});
    if (failed(flat))
      return failure();
    x = *flat;
    axis = 1;
  }
  auto xType = c.type(x);
  auto index =
      c.make<k::ArgMaxOp>(x, {c.named("axis", c.b.getI64IntegerAttr(*axis)),
                              c.named("keepdims", c.b.getBoolAttr(true))});
  if (failed(index))
    return failure();
  // The positions along the axis, shaped [1, ..., n, ..., 1].
  Type i64 = c.b.getI64Type();
  SymInt n = dimOf(c, x, *axis);
  SymInts iotaShape(xType.getRank(), c.b.getI64IntegerAttr(1));
  iotaShape[*axis] = n;
  FailureOr<Value> positions;
  if (auto known = constantOf(n)) {
    SmallVector<int64_t> iota(*known), shape(xType.getRank(), 1);
    for (int64_t i = 0; i < *known; ++i)
      iota[i] = i;
    shape[*axis] = *known;
    positions = c.constant(cast<ElementsAttr>(DenseElementsAttr::get(
        RankedTensorType::get(shape, i64), ArrayRef<int64_t>(iota))));
  } else {
    positions = c.make<k::DynamicRangeOp>(
        {c.scalar(i64, 0.0),
         materialize(c, {n}, RankedTensorType::get({}, i64)),
         c.scalar(i64, 1.0)});
    if (succeeded(positions))
      positions = reshapeSymbolic(c, *positions, iotaShape, true);
  }
  if (failed(positions))
    return failure();
  auto hot = c.make<k::EqualOp>({*index, *positions});
  if (failed(hot))
    return failure();
  auto result = c.make<k::CastOp>(
      *hot, {c.named("to", TypeAttr::get(type.getElementType()))});
  if (failed(result) || c.opset >= 13)
    return one(result);
  return one(reshape(*result, dims));
}

FailureOr<Value> makeCumSum(NodeContext &c, Value x, int64_t axis) {
  return c.make<k::CumSumOp>(
      x, {c.named("axis", c.b.getI64IntegerAttr(axis)),
          c.named("exclusive", c.b.getBoolAttr(c.attrInt("exclusive", 0))),
          c.named("reverse", c.b.getBoolAttr(c.attrInt("reverse", 0)))});
}

/// CumSum's axis is a tensor input. When it is only known at run time (and
/// the input has more than one axis), every axis is summed and the one asked
/// for selected: rank times the work, but correct for any axis.
Results importCumSum(NodeContext &c) {
  Value x = c.input(0);
  int64_t rank = c.type(x).getRank();
  if (rank == 0)
    return c.fail("needs an input of rank >= 1");
  std::optional<SmallVector<int64_t>> axisValue = c.constantInts(1);
  if (!axisValue && rank == 1)
    axisValue = SmallVector<int64_t>{0};
  if (axisValue) {
    if (axisValue->size() != 1)
      return c.fail("axis must be a scalar");
    auto axis = c.normalizeAxis((*axisValue)[0], rank);
    if (!axis)
      return c.fail(fmt::format("axis {} out of range for rank {}",
                                (*axisValue)[0], rank));
    return one(makeCumSum(c, x, *axis));
  }
  Value axisInput = c.input(1);
  Type axisType = c.type(axisInput).getElementType();
  auto result = makeCumSum(c, x, rank - 1);
  for (int64_t d = rank - 2; d >= 0 && succeeded(result); --d) {
    auto sums = makeCumSum(c, x, d);
    auto isD = c.make<k::EqualOp>({axisInput, c.scalar(axisType, d)});
    auto isNegD = c.make<k::EqualOp>({axisInput, c.scalar(axisType, d - rank)});
    if (failed(sums) || failed(isD) || failed(isNegD))
      return failure();
    auto picked = c.make<k::OrOp>({*isD, *isNegD});
    if (failed(picked))
      return failure();
    result = c.make<k::WhereOp>({*picked, *sums, *result});
  }
  return one(result);
}
} // namespace

void mlir::kiln::onnx_import::registerReductionHandlers(
    llvm::StringMap<OpHandler> &t) {
  t["ReduceSum"] = reduce<k::ReduceSumOp>(13);
  t["ReduceMean"] = reduce<k::ReduceMeanOp>(18);
  t["ReduceMax"] = reduce<k::ReduceMaxOp>(18);
  t["ReduceMin"] = reduce<k::ReduceMinOp>(18);
  t["ReduceProd"] = reduce<k::ReduceProdOp>(18);
  t["ReduceL1"] = reduce(18, sumOf<k::AbsOp, false>);
  t["ReduceL2"] = reduce(18, reduceL2);
  t["ReduceSumSquare"] = reduce(18, sumOf<k::MulOp, true>);
  t["ReduceLogSum"] = reduce(18, reduceLogSum);
  t["ReduceLogSumExp"] = reduce(18, reduceLogSumExp);
  t["ArgMax"] = argReduce<k::ArgMaxOp>();
  t["ArgMin"] = argReduce<k::ArgMinOp>();
  t["Hardmax"] = importHardmax;
  t["CumSum"] = importCumSum;
}
