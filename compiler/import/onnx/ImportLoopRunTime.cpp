//===- ImportLoopRunTime.cpp - If and Loop as run-time control flow ------===//
//
// An If on a run-time condition becomes one scf.if; each branch is
// imported into its region and only the one taken runs (its checks too).
// An output whose extents differ between the branches is yielded as the
// type both fit, those dims run-time extents:
//
//   %z = scf.if %c -> tensor<?x4xf32> {
//     ... then branch ...  scf.yield tensor.cast %t : tensor<3x4xf32> ...
//   } else {
//     ... else branch ...  scf.yield tensor.cast %e : tensor<5x4xf32> ...
//   }
//
// A Loop that cannot be unrolled (its trip count or condition is known only
// when the model runs and no scan output declares the iteration count, or
// it runs more iterations than unrolling allows) becomes one scf.while over
// tensors; the body graph is imported once, into the loop:
//
//   %n, %v..., %s... = scf.while (%i = 0, %go = cond, %v = v0...,
//                                 %s = <0 x row>...) {
//     scf.condition(%i < M && %go) %i, %v..., %s...
//   } do {
//   ^bb0(%i, %v..., %s...):
//     cond', v'..., row... = body(tensor(%i), true, %v...)
//     scf.yield %i + 1, cond', v'..., concat(%s, row[None])...
//   }
//
// Without a trip count M is INT64_MAX; without a condition %go stays true
// (ONNX ignores the body's condition then). A carried value whose extents
// change from one iteration to the next is carried with those dims as
// run-time extents: the body is imported again with them. Scan outputs
// grow by one row per iteration (a concat, so long loops copy
// quadratically); their rows must have static extents.
//
//===----------------------------------------------------------------------===//
#include "compiler/import/onnx/ImportControlFlow.h"
#include "compiler/import/onnx/ImportNNBuilder.h"

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
/// The type both `a` and `b` fit: dims that differ become run-time ones.
/// Null when the ranks or element types differ.
RankedTensorType join(RankedTensorType a, RankedTensorType b) {
  if (a.getRank() != b.getRank() || a.getElementType() != b.getElementType())
    return {};
  SmallVector<int64_t> shape;
  for (auto [x, y] : llvm::zip(a.getShape(), b.getShape()))
    shape.push_back(x == y ? x : ShapedType::kDynamic);
  return RankedTensorType::get(shape, a.getElementType());
}

std::string typeText(Type t) {
  std::string s;
  llvm::raw_string_ostream(s) << t;
  return s;
}

/// `v` as `type` (a tensor.cast when only static extents differ).
Value widen(OpBuilder &b, Location loc, Value v, Type type) {
  return v.getType() == type ? v : tensor::CastOp::create(b, loc, type, v);
}

/// One attempt at building the loop for `carried` types. `yielded` gets the
/// types the body gives; when one does not fit its carried type the loop is
/// erased again and the result is null.
struct LoopBuilder {
  NodeContext &c;
  const onnx::GraphProto &body;
  Value trips, go;
  int64_t scanOutputs;

  FailureOr<scf::WhileOp> build(ArrayRef<RankedTensorType> carried,
                                SmallVector<RankedTensorType> &yielded);
};

FailureOr<scf::WhileOp>
LoopBuilder::build(ArrayRef<RankedTensorType> carried,
                   SmallVector<RankedTensorType> &yielded) {
  OpBuilder &b = c.b;
  Location loc = c.loc;
  Type i64 = b.getI64Type(), i1 = b.getI1Type();
  SmallVector<Value> inits{
      arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(0)), go};
  SmallVector<Type> types{i64};
  for (auto [i, type] : llvm::enumerate(carried)) {
    inits.push_back(widen(b, loc, c.input(2 + i), type));
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

  NNBuilder e(c);
  b.setInsertionPointToStart(after);
  Value index = after->getArgument(0);
  SmallVector<Value> bodyInputs{
      tensor::FromElementsOp::create(b, loc, RankedTensorType::get({}, i64),
                                     ValueRange{index}),
      c.scalar(i1, 1.0)};
  for (size_t i = 0; i < carried.size(); ++i)
    bodyInputs.push_back(after->getArgument(1 + i));
  auto out = c.importSubgraph(body, bodyInputs);
  auto erase = [&] {
    b.setInsertionPointAfter(loop);
    loop->erase();
  };
  if (failed(out)) {
    erase();
    return failure();
  }
  yielded.clear();
  for (size_t i = 0; i < carried.size(); ++i)
    yielded.push_back(c.type((*out)[1 + i]));
  for (size_t i = 0; i < carried.size(); ++i)
    if (yielded[i] != carried[i] &&
        join(yielded[i], carried[i]) != carried[i]) {
      erase();
      return scf::WhileOp(); // the caller widens `carried`, tries again
    }

  // The scan outputs: an empty [0, row...] to start, one row per iteration.
  SmallVector<RankedTensorType> rows;
  for (int64_t k = 0; k < scanOutputs; ++k) {
    auto row = c.type((*out)[1 + carried.size() + k]);
    if (!row.hasStaticShape()) {
      erase();
      (void)c.unsupported(
          fmt::format("Loop whose scan output {} has run-time "
                      "extents ({}) and whose iteration count is "
                      "known only at run time",
                      k, typeText(row)));
      return failure();
    }
    rows.push_back(row);
  }
  if (scanOutputs) {
    b.setInsertionPoint(loop);
    SmallVector<Value> newInits(inits);
    SmallVector<Type> newTypes(types);
    for (RankedTensorType row : rows) {
      SmallVector<int64_t> empty{0}, stacked{ShapedType::kDynamic};
      empty.append(row.getShape().begin(), row.getShape().end());
      stacked.append(row.getShape().begin(), row.getShape().end());
      auto stackedType = RankedTensorType::get(stacked, row.getElementType());
      newInits.push_back(widen(
          b, loc, e.splat(empty, row.getElementType(), 0.0), stackedType));
      newTypes.push_back(stackedType);
    }
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
  Value next = go;
  if (c.hasInput(1))
    next = tensor::ExtractOp::create(b, loc, e.scalarOf((*out)[0], i1),
                                     ValueRange{});
  SmallVector<Value> yields{arith::AddIOp::create(
      b, loc, index,
      arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(1)))};
  yields.push_back(next);
  for (size_t i = 0; i < carried.size(); ++i)
    yields.push_back(widen(b, loc, (*out)[1 + i], carried[i]));
  for (int64_t k = 0; k < scanOutputs; ++k) {
    Value row = (*out)[1 + carried.size() + k];
    SmallVector<int64_t> shape{1};
    shape.append(rows[k].getShape().begin(), rows[k].getShape().end());
    Value acc = after->getArgument(1 + carried.size() + k);
    yields.push_back(widen(b, loc, e.concat({acc, e.reshape(row, shape)}, 0),
                           types[1 + carried.size() + k]));
  }
  if (e.failed) {
    erase();
    return failure();
  }
  scf::YieldOp::create(b, loc, yields);

  // The test: another iteration while i < M and the condition holds.
  b.setInsertionPointToEnd(before);
  Value more = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                     before->getArgument(0), trips);
  more = arith::AndIOp::create(b, loc, more, before->getArgument(1));
  SmallVector<Value> forwarded{before->getArgument(0)};
  for (size_t i = 2; i < before->getNumArguments(); ++i)
    forwarded.push_back(before->getArgument(i));
  scf::ConditionOp::create(b, loc, more, forwarded);
  b.setInsertionPointAfter(loop);
  return loop;
}
} // namespace

Results mlir::kiln::onnx_import::importRunTimeIf(
    NodeContext &c, const onnx::GraphProto &thenBody,
    const onnx::GraphProto &elseBody, Value cond) {
  OpBuilder &b = c.b;
  Location loc = c.loc;
  NNBuilder e(c);
  Value flag = e.scalarOf(cond, b.getI1Type());
  if (e.failed)
    return failure();
  flag = tensor::ExtractOp::create(b, loc, flag, ValueRange{});
  // The branches first, in an scf.if without results.
  auto untyped = scf::IfOp::create(b, loc, TypeRange{}, flag,
                                   /*addThenBlock=*/false,
                                   /*addElseBlock=*/false);
  auto erase = [&] {
    b.setInsertionPointAfter(untyped);
    untyped->erase();
  };
  SmallVector<SmallVector<Value>> outs;
  for (auto [region, branch] :
       {std::pair(&untyped.getThenRegion(), &thenBody),
        std::pair(&untyped.getElseRegion(), &elseBody)}) {
    b.createBlock(region);
    auto out = c.importSubgraph(*branch, {});
    if (failed(out)) {
      erase();
      return failure();
    }
    outs.push_back(*out);
  }
  if (outs[0].size() != outs[1].size()) {
    erase();
    return c.fail("the branches give different numbers of outputs");
  }
  SmallVector<Type> types;
  for (auto [i, pair] : llvm::enumerate(llvm::zip(outs[0], outs[1]))) {
    auto [t, f] = pair;
    RankedTensorType both = join(c.type(t), c.type(f));
    if (!both) {
      std::string a = typeText(t.getType()), b = typeText(f.getType());
      erase();
      return c.unsupported(fmt::format("If whose branches give output {} as "
                                       "{} and {}",
                                       i, a, b));
    }
    types.push_back(both);
  }
  for (auto [region, out] : {std::pair(&untyped.getThenRegion(), &outs[0]),
                             std::pair(&untyped.getElseRegion(), &outs[1])}) {
    b.setInsertionPointToEnd(&region->front());
    SmallVector<Value> yields;
    for (auto [v, type] : llvm::zip(*out, types))
      yields.push_back(widen(b, loc, v, type));
    scf::YieldOp::create(b, loc, yields);
  }
  b.setInsertionPoint(untyped);
  auto typed = scf::IfOp::create(b, loc, types, flag, /*addThenBlock=*/false,
                                 /*addElseBlock=*/false);
  typed.getThenRegion().takeBody(untyped.getThenRegion());
  typed.getElseRegion().takeBody(untyped.getElseRegion());
  untyped->erase();
  b.setInsertionPointAfter(typed);
  return SmallVector<Value>(typed.getResults().begin(),
                            typed.getResults().end());
}

Results mlir::kiln::onnx_import::importRunTimeLoop(NodeContext &c,
                                                   const onnx::GraphProto &body,
                                                   size_t carried,
                                                   int64_t scanOutputs) {
  if (!c.hasInput(0) && !c.hasInput(1))
    return c.unsupported("Loop with neither a trip count nor a condition "
                         "(it never ends)");
  OpBuilder &b = c.b;
  Location loc = c.loc;
  NNBuilder e(c);
  auto scalar = [&](Value v, Type type) -> Value {
    Value s = e.scalarOf(v, type);
    return e.failed ? Value()
                    : tensor::ExtractOp::create(b, loc, s, ValueRange{});
  };
  Value trips =
      c.hasInput(0)
          ? scalar(c.input(0), b.getI64Type())
          : arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(INT64_MAX));
  Value go = c.hasInput(1)
                 ? scalar(c.input(1), b.getI1Type())
                 : arith::ConstantOp::create(b, loc, b.getBoolAttr(true));
  if (!trips || !go)
    return failure();

  SmallVector<RankedTensorType> types, yielded;
  for (size_t i = 0; i < carried; ++i)
    types.push_back(c.type(c.input(2 + i)));
  LoopBuilder builder{c, body, trips, go, scanOutputs};
  // Each retry turns at least one more dim into a run-time one.
  for (int attempt = 0;; ++attempt) {
    auto loop = builder.build(types, yielded);
    if (failed(loop))
      return failure();
    bool fits = true;
    for (size_t i = 0; i < carried; ++i) {
      RankedTensorType wide = join(types[i], yielded[i]);
      if (!wide)
        return c.unsupported(
            fmt::format("Loop whose body gives carried value {} as {} for {}",
                        i, typeText(yielded[i]), typeText(types[i])));
      fits &= wide == types[i];
      types[i] = wide;
    }
    if (fits) {
      ValueRange results = loop->getResults().drop_front();
      return SmallVector<Value>(results.begin(), results.end());
    }
    if (attempt > 8)
      return c.fail("the carried values' types do not settle");
  }
}
