//===- UnifySymbolDims.cpp - one extent per symbolic dim ------------------===//
//
// The runtime checks that inputs sharing a symbol (`kiln.dims` on @main's
// arguments) agree on its extent before anything runs, so every
// `tensor.dim` of such an argument's dim may read the symbol's first
// argument instead. With one value per symbol (after CSE), the run-time
// checks and broadcasts the lowering builds between two inputs' extents
// fold away.
//
// Extents of intermediate results are first traced back to the inputs'
// (the ops' reified result shapes, as resolve-ranked-shaped-type-result-dims
// does), and the comparisons between them folded with canonicalization and
// integer ranges (an extent is never negative), repeatedly: a run-time
// reshape or broadcast that folds exposes the extents of the next layer.
// Functions without symbolic dims are left as they are.
//
//===----------------------------------------------------------------------===//
#include "passes/lowering/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/StringMap.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_UNIFYSYMBOLDIMS
#include "passes/lowering/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;

namespace {
/// An argument's dim: (argument number, dim).
using ArgDim = std::pair<unsigned, int64_t>;

/// `tensor.dim %arg, d` of a symbolic dim -> the same dim of the first
/// argument with that symbol (CSE then makes them one value).
struct ReadSymbolExtent : OpRewritePattern<tensor::DimOp> {
  ReadSymbolExtent(MLIRContext *ctx, Block &entry,
                   const DenseMap<ArgDim, ArgDim> &first)
      : OpRewritePattern(ctx, /*benefit=*/2), entry(entry), first(first) {}

  LogicalResult matchAndRewrite(tensor::DimOp dim,
                                PatternRewriter &rewriter) const override {
    auto arg = dyn_cast<BlockArgument>(dim.getSource());
    std::optional<int64_t> d = dim.getConstantIndex();
    if (!arg || arg.getOwner() != &entry || !d)
      return failure();
    auto it = first.find({arg.getArgNumber(), *d});
    if (it == first.end() || it->second == it->first)
      return failure();
    Value index = arith::ConstantIndexOp::create(rewriter, dim.getLoc(),
                                                 it->second.second);
    rewriter.replaceOpWithNewOp<tensor::DimOp>(
        dim, entry.getArgument(it->second.first), index);
    return success();
  }

  Block &entry;
  const DenseMap<ArgDim, ArgDim> &first;
};

struct UnifySymbolDimsPass
    : public kiln::impl::UnifySymbolDimsBase<UnifySymbolDimsPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    // Each symbolic dim of an argument -> the first argument's dim with
    // that symbol.
    llvm::StringMap<ArgDim> bySymbol;
    DenseMap<ArgDim, ArgDim> first;
    for (unsigned i = 0; i < func.getNumArguments(); ++i) {
      auto dims = func.getArgAttrOfType<ArrayAttr>(i, "kiln.dims");
      for (auto [d, name] :
           llvm::enumerate(dims ? dims.getValue() : ArrayRef<Attribute>())) {
        auto symbol = dyn_cast<StringAttr>(name);
        if (!symbol || symbol.getValue().empty())
          continue;
        ArgDim here{i, (int64_t)d};
        first[here] =
            bySymbol.try_emplace(symbol.getValue(), here).first->second;
      }
    }
    if (first.empty())
      return;

    MLIRContext *ctx = &getContext();
    RewritePatternSet set(ctx);
    set.add<ReadSymbolExtent>(ctx, func.getBody().front(), first);
    memref::populateResolveRankedShapedTypeResultDimsPatterns(set);
    for (Dialect *dialect : ctx->getLoadedDialects())
      dialect->getCanonicalizationPatterns(set);
    for (RegisteredOperationName op : ctx->getRegisteredOperations())
      op.getCanonicalizationPatterns(set, ctx);
    FrozenRewritePatternSet patterns(std::move(set));
    OpPassManager ranges(func::FuncOp::getOperationName());
    ranges.addPass(createCSEPass());
    ranges.addPass(arith::createIntRangeOptimizationsPass());
    // Each round may fold what hid the next layer's extents. A rewrite that
    // does not settle within a round is left where it got to, as the
    // canonicalizer does.
    for (int round = 0; round < 8; ++round) {
      bool changed = false;
      (void)applyPatternsGreedily(func, patterns, {}, &changed);
      if (failed(runPipeline(ranges, func)))
        return signalPassFailure();
      if (!changed)
        break;
    }
  }
};
} // namespace
