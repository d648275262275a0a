//===- ImportIfRunTime.cpp - If on a run-time condition -------------------===//
//
// An If on a run-time condition becomes one scf.if; each branch is
// imported into its region and only the one taken runs (its checks too).
// An output whose extents differ between the branches is yielded as the
// type both fit, those dims run-time extents:
//
//   %z = scf.if %c -> tensor<?x4xf32> {
//     ... then branch ...  scf.yield tensor.cast %t : tensor<6x4xf32> ...
//   } else {
//     ... else branch ...  scf.yield tensor.cast %e : tensor<3x4xf32> ...
//   }
//
//===----------------------------------------------------------------------===//
#include "compiler/import/onnx/ImportControlFlow.h"
#include "compiler/import/onnx/ImportNNBuilder.h"

#include "onnx/onnx.pb.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include <fmt/format.h>

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::onnx_import;

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
    RankedTensorType both = joinTypes(c.type(t), c.type(f));
    if (!both) {
      std::string thenType = typeText(t.getType()),
                  elseType = typeText(f.getType());
      erase();
      return c.unsupported(fmt::format("If whose branches give output {} as "
                                       "{} and {}",
                                       i, thenType, elseType));
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
