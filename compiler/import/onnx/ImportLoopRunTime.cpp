//===- ImportLoopRunTime.cpp - Loop and Scan as run-time loops ------------===//
//
// A Loop that cannot be unrolled (its trip count or condition is known only
// when the model runs and no scan output declares the iteration count, or
// it runs more iterations than unrolling allows), and a Scan over a
// run-time extent, become one scf.while over tensors; the body graph is
// imported once, into the loop:
//
//   %n, %v..., %s... = scf.while (%i = 0, %go = cond, %v = v0...,
//                                 %s = <0 x row>...) {
//     scf.condition(%i < M && %go) %i, %v..., %s...
//   } do {
//   ^bb0(%i, %v..., %s...):
//     cond', v'..., row... = body(inputs(%i, %v...))
//     scf.yield %i + 1, cond', v'..., concat(%s, row[None])...
//   }
//
// Loop: the body takes (tensor(%i), true, %v...); without a trip count M
// is INT64_MAX; without a condition %go stays true (ONNX ignores the
// body's condition then). Scan: M is the scan axis' extent (every scan
// input's, checked when the model runs), the body takes the states and
// slice %i (or M - 1 - %i, reversed) of each scan input; a scan output
// stacks its rows newest first when reversed, then moves the stacked dim
// to its axis.
//
// A carried value whose extents change from one iteration to the next is
// carried with those dims as run-time extents: the body is imported again
// with them. A scan output of static rows, when the trip count is known as
// the loop starts (a Scan, a Loop with a trip count and no condition), is
// allocated for it and written row by row (an insert_slice). Others grow by one
// row per iteration (a concat, so long loops copy quadratically): a row with
// run-time extents replaces the empty start on the first iteration; with no
// iteration its run-time extents read 0.
//
//===----------------------------------------------------------------------===//
#include "compiler/import/onnx/ImportControlFlow.h"
#include "compiler/import/onnx/ImportNNBuilder.h"
#include "compiler/import/onnx/SymbolicShapes.h"

#include "onnx/onnx.pb.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include <fmt/format.h>

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::onnx_import;
namespace k = mlir::kiln;

namespace {
/// What one run-time loop computes (see the file comment).
struct LoopSpec {
  /// The body graph, imported with `inputs`; or null, and `step` builds
  /// each iteration's outputs itself.
  const onnx::GraphProto *body = nullptr;
  Value trips, go;
  /// Body output 0 is the next condition (a Loop with a condition input).
  bool condFromBody = false;
  /// `trips` is the iteration count, known when the loop starts (a Scan's
  /// length, a Loop's trip count without a condition): stacks of static
  /// rows are allocated for it up front.
  bool sized = false;
  /// Index of the first carried value among the body outputs.
  size_t firstCarried = 0;
  SmallVector<Value> inits;
  int64_t scanOutputs = 0;
  /// Per scan output: stack the newest row first.
  SmallVector<bool> newestFirst;
  /// The run-time extents (i64) of the scan outputs' rows, in order, known
  /// before the loop (a recurrence's batch): rows with that many run-time
  /// extents are allocated up front too.
  SmallVector<Value> rowExtents;
  /// The body's inputs for iteration `index` (i64) and carried values.
  std::function<FailureOr<SmallVector<Value>>(Value index, ValueRange carried)>
      inputs;
  /// Without a body graph: the outputs of iteration `index` (i64).
  RecurrenceStep step;
};

/// The empty start of a stack of `row`s, typed [?, row...]: [0, row...]
/// with the row's run-time extents 0.
Value emptyStack(NNBuilder &e, OpBuilder &b, Location loc,
                 RankedTensorType row) {
  SmallVector<int64_t> empty{0}, stacked{ShapedType::kDynamic};
  for (int64_t d : row.getShape()) {
    empty.push_back(ShapedType::isDynamic(d) ? 0 : d);
    stacked.push_back(d);
  }
  return widen(b, loc, e.splat(empty, row.getElementType(), 0.0),
               RankedTensorType::get(stacked, row.getElementType()));
}

/// `stack` with `row` added (first when `first`), typed as `stack`.
Value push(NodeContext &c, NNBuilder &e, Value stack, Value row, Value index,
           bool first) {
  OpBuilder &b = c.b;
  Location loc = c.loc;
  SymInts shape{b.getI64IntegerAttr(1)};
  for (int64_t d = 0; d < e.rank(row); ++d)
    shape.push_back(dimOf(c, row, d));
  auto unsqueezed = reshapeSymbolic(c, row, shape, /*allowZero=*/true);
  if (failed(unsqueezed))
    return e.failed = true, Value();
  auto concat = [&] {
    return widen(b, loc,
                 first ? e.concat({*unsqueezed, stack}, 0)
                       : e.concat({stack, *unsqueezed}, 0),
                 stack.getType());
  };
  if (c.type(row).hasStaticShape())
    return concat();
  // The empty start's run-time extents are 0: the first row replaces it.
  Value isFirst = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::eq, index,
      arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(0)));
  auto pick = scf::IfOp::create(b, loc, stack.getType(), isFirst,
                                /*withElseRegion=*/true);
  b.setInsertionPointToStart(&pick.getThenRegion().front());
  scf::YieldOp::create(b, loc, widen(b, loc, *unsqueezed, stack.getType()));
  b.setInsertionPointToStart(&pick.getElseRegion().front());
  scf::YieldOp::create(b, loc, concat());
  b.setInsertionPointAfter(pick);
  return pick.getResult(0);
}

/// Whether a stack of `row`s is allocated for the trip count up front and
/// written row by row (static rows, or rows whose run-time extents are
/// `spec.rowExtents`, of types the lowering keeps as they are), rather
/// than grown by concatenation.
bool preallocates(const LoopSpec &spec, RankedTensorType row) {
  Type element = row.getElementType();
  auto integer = dyn_cast<IntegerType>(element);
  return spec.sized &&
         (row.hasStaticShape() ||
          (int64_t)spec.rowExtents.size() == row.getNumDynamicDims()) &&
         (isa<FloatType>(element) || (integer && integer.isSignless()));
}

/// The i64 `v` as an index.
Value asIndex(OpBuilder &b, Location loc, Value v) {
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
}

/// `stack` [M, row...] with `row` written at `at` (an i64). A run-time row
/// extent must be the stack's (allocated for the extents the loop was
/// given): checked, so a body whose rows differ fails the run instead of
/// writing past its stack.
Value writeRow(NNBuilder &e, OpBuilder &b, Location loc, Value stack, Value row,
               Value at) {
  auto rowType = cast<RankedTensorType>(row.getType());
  SmallVector<int64_t> one{1};
  llvm::append_range(one, rowType.getShape());
  Value unsqueezed = e.reshape(row, one);
  if (!unsqueezed)
    return Value();
  SmallVector<OpFoldResult> offsets(one.size(), b.getIndexAttr(0)), sizes,
      strides(one.size(), b.getIndexAttr(1));
  offsets[0] = asIndex(b, loc, at);
  for (auto [i, d] : llvm::enumerate(one)) {
    if (!ShapedType::isDynamic(d)) {
      sizes.push_back(b.getIndexAttr(d));
      continue;
    }
    Value extent = tensor::DimOp::create(b, loc, row, int64_t(i) - 1);
    Value same =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, extent,
                              tensor::DimOp::create(b, loc, stack, int64_t(i)));
    k::AssertOp::create(
        b, loc,
        tensor::FromElementsOp::create(
            b, loc, RankedTensorType::get({}, b.getI1Type()), ValueRange{same}),
        b.getStringAttr(fmt::format(
            "a step's output differs from the stack's row in dim {}", i - 1)));
    sizes.push_back(extent);
  }
  return tensor::InsertSliceOp::create(b, loc, unsqueezed, stack, offsets,
                                       sizes, strides);
}

/// One attempt at building the loop for `carried` types. `yielded` gets the
/// types the body gives; when one does not fit its carried type the loop is
/// erased again and the result is null. `preallocated` gets, per scan
/// output, whether its stack was allocated up front.
FailureOr<scf::WhileOp> buildLoop(NodeContext &c, const LoopSpec &spec,
                                  ArrayRef<RankedTensorType> carried,
                                  SmallVector<RankedTensorType> &yielded,
                                  SmallVector<bool> &preallocated) {
  OpBuilder &b = c.b;
  Location loc = c.loc;
  Type i64 = b.getI64Type(), i1 = b.getI1Type();
  size_t n = carried.size();
  SmallVector<Value> inits{
      arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(0)), spec.go};
  SmallVector<Type> types{i64};
  for (auto [init, type] : llvm::zip(spec.inits, carried)) {
    inits.push_back(widen(b, loc, init, type));
    types.push_back(type);
  }
  // The loop without its scan outputs first: their row types are known only
  // once the body is imported.
  SmallVector<Type> beforeTypes{i64, i1};
  beforeTypes.append(types.begin() + 1, types.end());
  auto loop = scf::WhileOp::create(b, loc, types, inits);
  SmallVector<Location> locs(beforeTypes.size(), loc);
  Block *before = b.createBlock(&loop.getBefore(), {}, beforeTypes, locs);
  Block *after =
      b.createBlock(&loop.getAfter(), {}, types, ArrayRef(locs).drop_back());
  auto erase = [&] {
    b.setInsertionPointAfter(loop);
    loop->erase();
  };

  NNBuilder e(c);
  b.setInsertionPointToStart(after);
  Value index = after->getArgument(0);
  ValueRange carriedArgs = after->getArguments().slice(1, n);
  FailureOr<SmallVector<Value>> out = failure();
  if (!spec.body) {
    out = spec.step(index, carriedArgs);
  } else if (auto bodyInputs = spec.inputs(index, carriedArgs);
             succeeded(bodyInputs)) {
    out = c.importSubgraph(*spec.body, *bodyInputs);
  }
  if (failed(out)) {
    erase();
    return failure();
  }
  if (out->size() != spec.firstCarried + n + spec.scanOutputs) {
    erase();
    (void)c.fail(fmt::format("the body gives {} outputs, the node needs {}",
                             out->size(),
                             spec.firstCarried + n + spec.scanOutputs));
    return failure();
  }
  ArrayRef<Value> next = ArrayRef(*out).drop_front(spec.firstCarried);
  yielded.clear();
  for (size_t i = 0; i < n; ++i)
    yielded.push_back(c.type(next[i]));
  for (size_t i = 0; i < n; ++i)
    if (joinTypes(yielded[i], carried[i]) != carried[i]) {
      erase();
      return scf::WhileOp(); // the caller widens `carried`, tries again
    }

  // The scan outputs: a stack of the trip count's rows, written one per
  // iteration, or an empty stack grown by one row per iteration.
  ArrayRef<Value> rows = next.drop_front(n);
  preallocated.clear();
  if (spec.scanOutputs) {
    b.setInsertionPoint(loop);
    SmallVector<Value> newInits(inits);
    for (Value row : rows) {
      RankedTensorType rowType = c.type(row);
      preallocated.push_back(preallocates(spec, rowType));
      if (!preallocated.back()) {
        newInits.push_back(emptyStack(e, b, loc, rowType));
        continue;
      }
      SmallVector<int64_t> shape{ShapedType::kDynamic};
      llvm::append_range(shape, rowType.getShape());
      Value count = arith::MaxSIOp::create(
          b, loc, spec.trips,
          arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(0)));
      SmallVector<Value> extents{asIndex(b, loc, count)};
      if (!rowType.hasStaticShape())
        for (Value extent : spec.rowExtents)
          extents.push_back(asIndex(b, loc, extent));
      newInits.push_back(tensor::EmptyOp::create(
          b, loc, shape, rowType.getElementType(), extents));
    }
    SmallVector<Type> newTypes(types);
    for (Value init : ArrayRef(newInits).drop_front(types.size() + 1))
      newTypes.push_back(init.getType());
    auto grown = scf::WhileOp::create(b, loc, newTypes, newInits);
    grown.getBefore().takeBody(loop.getBefore());
    grown.getAfter().takeBody(loop.getAfter());
    loop->erase();
    loop = grown;
    before = &loop.getBefore().front();
    after = &loop.getAfter().front();
    for (size_t k = types.size(); k < newTypes.size(); ++k) {
      before->addArgument(newTypes[k], loc);
      after->addArgument(newTypes[k], loc);
    }
    types = newTypes;
  }

  // The body's end: the next condition, the carried values, one more row.
  b.setInsertionPointToEnd(after);
  Value more = spec.go;
  if (spec.condFromBody)
    more = tensor::ExtractOp::create(b, loc, e.scalarOf((*out)[0], i1),
                                     ValueRange{});
  SmallVector<Value> yields{arith::AddIOp::create(
      b, loc, index,
      arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(1)))};
  yields.push_back(more);
  for (size_t i = 0; i < n; ++i)
    yields.push_back(widen(b, loc, next[i], carried[i]));
  for (auto [k, row] : llvm::enumerate(rows)) {
    Value stack = after->getArgument(1 + n + k);
    if (!preallocated[k]) {
      yields.push_back(push(c, e, stack, row, index, spec.newestFirst[k]));
      continue;
    }
    Value at = index;
    if (spec.newestFirst[k])
      at = arith::SubIOp::create(
          b, loc,
          arith::SubIOp::create(
              b, loc, spec.trips,
              arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(1))),
          index);
    yields.push_back(writeRow(e, b, loc, stack, row, at));
  }
  if (llvm::is_contained(yields, Value()))
    e.failed = true;
  if (e.failed) {
    erase();
    return failure();
  }
  scf::YieldOp::create(b, loc, yields);

  // The test: another iteration while i < M and the condition holds.
  b.setInsertionPointToEnd(before);
  Value test = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                     before->getArgument(0), spec.trips);
  test = arith::AndIOp::create(b, loc, test, before->getArgument(1));
  SmallVector<Value> forwarded{before->getArgument(0)};
  for (size_t i = 2; i < before->getNumArguments(); ++i)
    forwarded.push_back(before->getArgument(i));
  scf::ConditionOp::create(b, loc, test, forwarded);
  b.setInsertionPointAfter(loop);
  return loop;
}

/// Builds the loop, widening the carried types until the body's fit them;
/// the final carried values then the stacks.
Results runLoop(NodeContext &c, const LoopSpec &spec) {
  SmallVector<RankedTensorType> types, yielded;
  SmallVector<bool> preallocated;
  int64_t dims = 0;
  for (Value v : spec.inits) {
    types.push_back(c.type(v));
    dims += types.back().getRank();
  }
  // Each retry turns at least one more dim into a run-time one.
  for (int64_t attempt = 0;; ++attempt) {
    auto loop = buildLoop(c, spec, types, yielded, preallocated);
    if (failed(loop))
      return failure();
    bool fits = true;
    for (size_t i = 0; i < types.size(); ++i) {
      RankedTensorType wide = joinTypes(types[i], yielded[i]);
      if (!wide)
        return c.unsupported(fmt::format(
            "{} whose body gives carried value {} as {} for {}", c.opType(), i,
            typeText(yielded[i]), typeText(types[i])));
      fits &= wide == types[i];
      types[i] = wide;
    }
    if (fits) {
      ValueRange results = loop->getResults().drop_front();
      return SmallVector<Value>(results.begin(), results.end());
    }
    if (attempt > dims)
      return c.fail("the carried values' types do not settle");
  }
}

} // namespace

Results mlir::kiln::onnx_import::importRunTimeLoop(
    NodeContext &c, const onnx::GraphProto &body, size_t carried,
    int64_t scanOutputs, Value tripCount, Value cond) {
  if (!tripCount && !cond)
    return c.unsupported("Loop with neither a trip count nor a condition "
                         "(it never ends)");
  OpBuilder &b = c.b;
  Location loc = c.loc;
  Type i64 = b.getI64Type(), i1 = b.getI1Type();
  LoopSpec spec{&body};
  spec.trips =
      tripCount
          ? Value(tensor::ExtractOp::create(b, loc, tripCount, ValueRange{}))
          : arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(INT64_MAX));
  spec.go = cond ? Value(tensor::ExtractOp::create(b, loc, cond, ValueRange{}))
                 : arith::ConstantOp::create(b, loc, b.getBoolAttr(true));
  spec.condFromBody = bool(cond);
  // With a condition the trip count only bounds the loop (often INT64_MAX).
  spec.sized = tripCount && !cond;
  spec.firstCarried = 1;
  for (size_t i = 0; i < carried; ++i)
    spec.inits.push_back(c.input(2 + i));
  spec.scanOutputs = scanOutputs;
  spec.newestFirst.assign(scanOutputs, false);
  spec.inputs = [&](Value index,
                    ValueRange values) -> FailureOr<SmallVector<Value>> {
    SmallVector<Value> inputs{
        tensor::FromElementsOp::create(b, loc, RankedTensorType::get({}, i64),
                                       ValueRange{index}),
        c.scalar(i1, 1.0)};
    inputs.append(values.begin(), values.end());
    return inputs;
  };
  return runLoop(c, spec);
}

Results mlir::kiln::onnx_import::importRunTimeScan(
    NodeContext &c, const onnx::GraphProto &body, ArrayRef<Value> states,
    ArrayRef<Value> scans, ArrayRef<int64_t> axes, ArrayRef<int64_t> directions,
    ArrayRef<int64_t> outAxes, ArrayRef<int64_t> outDirections) {
  OpBuilder &b = c.b;
  Location loc = c.loc;
  NNBuilder e(c);
  Type i64 = b.getI64Type();
  LoopSpec spec{&body};
  spec.trips = i64Value(b, loc, dimOf(c, scans[0], axes[0]));
  spec.go = arith::ConstantOp::create(b, loc, b.getBoolAttr(true));
  spec.sized = true;
  // Every scan input is as long as the first.
  std::optional<int64_t> steps = constantOf(dimOf(c, scans[0], axes[0]));
  for (size_t j = 1; j < scans.size(); ++j) {
    SymInt length = dimOf(c, scans[j], axes[j]);
    std::optional<int64_t> known = constantOf(length);
    if (known && steps) {
      if (*known != *steps)
        return c.fail("the scan inputs differ in length");
      continue;
    }
    Value same = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                       i64Value(b, loc, length), spec.trips);
    k::AssertOp::create(
        b, loc,
        tensor::FromElementsOp::create(
            b, loc, RankedTensorType::get({}, b.getI1Type()), ValueRange{same}),
        b.getStringAttr(fmt::format("Scan: scan input {} differs in length "
                                    "from scan input 0",
                                    j)));
  }
  spec.inits.assign(states.begin(), states.end());
  size_t numStates = states.size();
  spec.scanOutputs = (int64_t)body.output_size() - (int64_t)numStates;
  if (spec.scanOutputs < 0)
    return c.fail("the body gives fewer outputs than there are states");
  for (int64_t k = 0; k < spec.scanOutputs; ++k)
    spec.newestFirst.push_back(k < (int64_t)outDirections.size() &&
                               outDirections[k]);
  spec.inputs = [&](Value index,
                    ValueRange values) -> FailureOr<SmallVector<Value>> {
    SmallVector<Value> inputs(values.begin(), values.end());
    Value reversed = arith::SubIOp::create(
        b, loc,
        arith::SubIOp::create(
            b, loc, spec.trips,
            arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(1))),
        index);
    for (auto [j, v] : llvm::enumerate(scans)) {
      Value at = tensor::FromElementsOp::create(
          b, loc, RankedTensorType::get({}, i64),
          ValueRange{directions[j] ? reversed : index});
      auto slice = c.make<k::GatherOp>(
          {v, at}, {c.named("axis", b.getI64IntegerAttr(axes[j]))});
      if (failed(slice))
        return failure();
      inputs.push_back(*slice);
    }
    return inputs;
  };
  auto results = runLoop(c, spec);
  if (failed(results))
    return failure();
  // Each stack's dim 0 moves to its scan output axis.
  for (int64_t k = 0; k < spec.scanOutputs; ++k) {
    Value &stack = (*results)[numStates + k];
    int64_t rank = e.rank(stack);
    int64_t axis = k < (int64_t)outAxes.size() ? outAxes[k] : 0;
    if (axis < 0)
      axis += rank;
    if (axis < 0 || axis >= rank)
      return c.fail("scan_output_axes out of range");
    if (axis == 0)
      continue;
    SmallVector<int64_t> perm;
    for (int64_t d = 1; d <= axis; ++d)
      perm.push_back(d);
    perm.push_back(0);
    for (int64_t d = axis + 1; d < rank; ++d)
      perm.push_back(d);
    stack = e.transpose(stack, perm);
  }
  return e.done(*results);
}

Results mlir::kiln::onnx_import::importRunTimeRecurrence(
    NodeContext &c, Value steps, ArrayRef<Value> inits, int64_t stacked,
    bool reversed, RecurrenceStep step, ArrayRef<Value> rowExtents) {
  LoopSpec spec;
  spec.trips = steps;
  spec.go = arith::ConstantOp::create(c.b, c.loc, c.b.getBoolAttr(true));
  spec.sized = true;
  spec.inits.assign(inits.begin(), inits.end());
  spec.scanOutputs = stacked;
  spec.newestFirst.assign(stacked, reversed);
  spec.step = std::move(step);
  spec.rowExtents.assign(rowExtents.begin(), rowExtents.end());
  return runLoop(c, spec);
}
