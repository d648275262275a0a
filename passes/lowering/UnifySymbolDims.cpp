//===- UnifySymbolDims.cpp - one extent per symbolic dim ------------------===//
//
// The runtime checks that inputs sharing a symbol (`kiln.dims` on @main's
// arguments) agree on its extent before anything runs, so every
// `tensor.dim` of such an argument's dim may read the symbol's first
// argument instead. With one SSA value per symbol, the run-time checks and
// broadcasts the lowering builds between two inputs' extents fold away.
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
/// `tensor.dim %arg, d` of a symbolic dim -> the symbol's one extent.
struct ReadSymbolExtent : OpRewritePattern<tensor::DimOp> {
  ReadSymbolExtent(MLIRContext *ctx,
                   const DenseMap<std::pair<Value, int64_t>, Value> &extents)
      : OpRewritePattern(ctx, /*benefit=*/2), extents(extents) {}

  LogicalResult matchAndRewrite(tensor::DimOp dim,
                                PatternRewriter &rewriter) const override {
    std::optional<int64_t> d = dim.getConstantIndex();
    if (!d)
      return failure();
    Value extent = extents.lookup({dim.getSource(), *d});
    if (!extent || extent == dim.getResult())
      return failure();
    rewriter.replaceOp(dim, extent);
    return success();
  }

  const DenseMap<std::pair<Value, int64_t>, Value> &extents;
};

struct UnifySymbolDimsPass
    : public kiln::impl::UnifySymbolDimsBase<UnifySymbolDimsPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    // Each symbolic dim of an argument -> one `tensor.dim` of the first
    // argument with that symbol, made at the entry.
    Block &entry = func.getBody().front();
    OpBuilder b = OpBuilder::atBlockBegin(&entry);
    llvm::StringMap<Value> bySymbol;
    DenseMap<std::pair<Value, int64_t>, Value> extents;
    for (unsigned i = 0; i < func.getNumArguments(); ++i) {
      auto dims = func.getArgAttrOfType<ArrayAttr>(i, "kiln.dims");
      for (auto [d, name] :
           llvm::enumerate(dims ? dims.getValue() : ArrayRef<Attribute>())) {
        auto symbol = dyn_cast<StringAttr>(name);
        if (!symbol || symbol.getValue().empty())
          continue;
        Value arg = func.getArgument(i);
        Value &value = bySymbol[symbol.getValue()];
        if (!value) {
          Value index = arith::ConstantIndexOp::create(b, arg.getLoc(), d);
          value = tensor::DimOp::create(b, arg.getLoc(), arg, index);
        }
        extents[{arg, (int64_t)d}] = value;
      }
    }
    if (extents.empty())
      return;

    MLIRContext *ctx = &getContext();
    RewritePatternSet set(ctx);
    set.add<ReadSymbolExtent>(ctx, extents);
    memref::populateResolveRankedShapedTypeResultDimsPatterns(set);
    for (Dialect *dialect : ctx->getLoadedDialects())
      dialect->getCanonicalizationPatterns(set);
    for (RegisteredOperationName op : ctx->getRegisteredOperations())
      op.getCanonicalizationPatterns(set, ctx);
    FrozenRewritePatternSet patterns(std::move(set));
    OpPassManager ranges(func::FuncOp::getOperationName());
    ranges.addPass(createCSEPass());
    ranges.addPass(arith::createIntRangeOptimizationsPass());
    // Each round may fold what hid the next layer's extents.
    for (int round = 0; round < 8; ++round) {
      bool changed = false;
      if (failed(applyPatternsGreedily(func, patterns, {}, &changed)) ||
          failed(runPipeline(ranges, func)))
        return signalPassFailure();
      if (!changed)
        break;
    }
  }
};
} // namespace
