//===- ParallelDimsFirst.cpp - Reductions' parallel dims outermost --------===//
//
// convert-linalg-to-parallel-loops makes an scf.parallel only of a linalg
// op's outermost run of parallel dims; the dims after the first reduction
// become sequential scf.for loops. kiln-gpu-form-kernels turns the
// scf.parallel into threads, so a reduction whose parallel dims come last
// (a global average pool over NHWC: [n, h, w, c] with h and w reduced) ran
// as one thread looping over everything. This pass interchanges the loops
// of every linalg.generic with both kinds of dims so the parallel ones come
// first, each kind keeping its order: one thread per output, the innermost
// parallel dim still the fastest between neighbouring threads.
//
//===----------------------------------------------------------------------===//
#include "backends/gpu/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_PARALLELDIMSFIRST
#include "backends/gpu/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;

namespace {
/// The interchange putting `op`'s parallel dims first, or an empty vector
/// when they already are (or there is no reduction).
SmallVector<unsigned> parallelFirst(linalg::GenericOp op) {
  SmallVector<unsigned> parallel, reduction;
  for (auto [index, type] : llvm::enumerate(op.getIteratorTypesArray()))
    (linalg::isParallelIterator(type) ? parallel : reduction).push_back(index);
  SmallVector<unsigned> order(parallel);
  order.append(reduction);
  for (auto [position, dim] : llvm::enumerate(order))
    if (position != dim)
      return order;
  return {};
}

struct ParallelDimsFirstPass
    : public kiln::impl::ParallelDimsFirstBase<ParallelDimsFirstPass> {
  using Base::Base;

  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    SmallVector<linalg::GenericOp> ops;
    getOperation()->walk([&](linalg::GenericOp op) { ops.push_back(op); });
    for (linalg::GenericOp op : ops) {
      SmallVector<unsigned> order = parallelFirst(op);
      if (order.empty())
        continue;
      rewriter.setInsertionPoint(op);
      if (failed(linalg::interchangeGenericOp(rewriter, op, order)))
        return signalPassFailure();
    }
  }
};
} // namespace
