//===- Flops.cpp - Floating-point work of a lowered model -----------------===//
#include "compiler/driver/Flops.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"

using namespace mlir;

namespace {
/// Product of the static trip counts of the scf loops around `op` inside
/// its function, or 0 if one is not static.
double enclosingTrips(Operation *op) {
  double trips = 1;
  for (Operation *parent = op->getParentOp();
       parent && !isa<func::FuncOp>(parent); parent = parent->getParentOp()) {
    if (auto loop = dyn_cast<scf::ForOp>(parent)) {
      std::optional<APInt> count = loop.getStaticTripCount();
      if (!count)
        return 0;
      trips *= double(count->getZExtValue());
    } else if (auto forall = dyn_cast<scf::ForallOp>(parent)) {
      for (auto [lb, ub, step] : llvm::zip_equal(forall.getStaticLowerBound(),
                                                 forall.getStaticUpperBound(),
                                                 forall.getStaticStep())) {
        if (ShapedType::isDynamic(lb) || ShapedType::isDynamic(ub) ||
            ShapedType::isDynamic(step) || step <= 0)
          return 0;
        trips *= double(ub > lb ? (ub - lb + step - 1) / step : 0);
      }
    }
  }
  return trips;
}
} // namespace

uint64_t mlir::kiln::countContractionFlops(ModuleOp module) {
  auto main = module.lookupSymbol<func::FuncOp>("main");
  if (!main)
    return 0;
  double flops = 0;
  main.walk([&](linalg::LinalgOp op) {
    // Contractions and convolutions multiply (pooling, also a
    // "convolution" to linalg, does not).
    bool counted = linalg::isaContractionOpInterface(op) ||
                   isa<linalg::ConvolutionOpInterface>(op.getOperation());
    bool multiplies = false;
    op->walk([&](arith::MulFOp) { multiplies = true; });
    if (!counted || !multiplies)
      return;
    double points = 2;
    for (int64_t extent : op.getStaticLoopRanges()) {
      if (ShapedType::isDynamic(extent))
        return;
      points *= double(extent);
    }
    flops += points * enclosingTrips(op);
  });
  return static_cast<uint64_t>(flops);
}
