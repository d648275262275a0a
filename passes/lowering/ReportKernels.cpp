//===- ReportKernels.cpp - the kernels of a model, for --report -----------===//
//
// Lists, in program order, the kernels the CPU backend will emit for each
// function and the ONNX nodes each covers, read from the locations the
// importer gave every op (FusedLoc<"OpType">[NameLoc "node"]; merged
// contractions and fused attention carry all their nodes' locations).
//
// A kernel is a top-level loop nest of the lowered function: a linalg op or
// an scf loop (attention, scatter, top-k), or a call of one of the runtime's
// string kernels (named after the kernel, e.g. `0:normalize_strings`). Ops the
// CPU backend folds into another are grouped with it, as its elementwise fusion
// does:
//   - an all-parallel linalg.generic whose only user is a linalg.generic
//     joins that consumer's kernel;
//   - a linalg.fill/linalg.broadcast whose only user takes it as its init
//     (a contraction's zero or bias) joins that user's kernel;
//   - a bias broadcast shared by NHWC convolutions as their init joins the
//     first one's kernel (the NHWC kernels read the bias, not the
//     broadcast).
// Reshapes and slices are views, not kernels. Each kernel is named
// `<index>:<op>` after its last (anchor) op, e.g. `3:conv_2d_nchw_fchw`.
// The CPU backend decides later which elementwise consumers it applies in
// a contraction's register tiles (backends/cpu/EpilogueFusion.cpp); it moves
// their nodes into the contraction's kernel itself (report::foldKernel), so
// this list only predicts what is certain at this stage.
//
//===----------------------------------------------------------------------===//
#include "passes/lowering/Passes.h"

#include "dialects/kiln/NodeLocation.h"
#include "dialects/kiln/StringKernels.h"

#include "compiler/logging/Logging.h"
#include "compiler/logging/Report.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"

#include <set>

namespace mlir::kiln {
#define GEN_PASS_DEF_REPORTKERNELS
#include "passes/lowering/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;

namespace {

bool isAllParallelGeneric(Operation *op) {
  auto generic = dyn_cast<linalg::GenericOp>(op);
  return generic && generic.getNumLoops() == generic.getNumParallelLoops();
}

/// Whether `op` (or an op in its body) works on a tensor of run-time shape.
bool hasRunTimeExtents(Operation *op) {
  auto dynamic = [](Type type) {
    auto shaped = dyn_cast<ShapedType>(type);
    return shaped && shaped.hasRank() && !shaped.hasStaticShape();
  };
  WalkResult found = op->walk([&](Operation *nested) {
    if (llvm::any_of(nested->getOperandTypes(), dynamic) ||
        llvm::any_of(nested->getResultTypes(), dynamic))
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return found.wasInterrupted();
}

bool isKernel(Operation *op) {
  return isa<linalg::LinalgOp, LoopLikeOpInterface>(op) ||
         !stringKernelOf(op).empty();
}

/// The first of the NHWC convolutions whose inits are all of the uses of
/// `op`, a per-channel bias broadcast over [N, H, W]: the CPU backend's
/// NHWC kernels start their accumulators from the bias vector instead
/// (backends/cpu/NhwcInit.cpp), so the broadcast is never a kernel of its
/// own, however many convolutions share it.
Operation *seededNhwcConvolution(Operation *op) {
  auto broadcast = dyn_cast<linalg::BroadcastOp>(op);
  if (!broadcast || broadcast.getDimensions() != ArrayRef<int64_t>{0, 1, 2} ||
      op->use_empty())
    return nullptr;
  Operation *first = nullptr;
  for (OpOperand &use : op->getResult(0).getUses()) {
    Operation *user = use.getOwner();
    auto conv = dyn_cast<linalg::LinalgOp>(user);
    if (!isa<linalg::Conv2DNhwcHwcfOp, linalg::DepthwiseConv2DNhwcHwcOp>(
            user) ||
        !conv.isDpsInit(&use) || user->getBlock() != op->getBlock())
      return nullptr;
    if (!first || user->isBeforeInBlock(first))
      first = user;
  }
  return first;
}

/// The op whose kernel `op` is folded into, or null if it anchors its own.
Operation *foldedInto(Operation *op) {
  if (Operation *conv = seededNhwcConvolution(op))
    return conv;
  if (!op->hasOneUse() || op->getNumResults() != 1)
    return nullptr;
  OpOperand &use = *op->getResult(0).getUses().begin();
  Operation *user = use.getOwner();
  if (user->getBlock() != op->getBlock())
    return nullptr;
  if (isAllParallelGeneric(op) && isa<linalg::GenericOp>(user))
    return user;
  if (isa<linalg::FillOp, linalg::BroadcastOp>(op))
    if (auto dps = dyn_cast<linalg::LinalgOp>(user))
      if (dps.isDpsInit(&use))
        return user;
  return nullptr;
}

struct ReportKernelsPass
    : public kiln::impl::ReportKernelsBase<ReportKernelsPass> {
  using Base::Base;

  void runOnOperation() override {
    int64_t index = 0;
    for (auto func : getOperation().getOps<FunctionOpInterface>()) {
      if (func.isExternal())
        continue;
      for (Block &block : func.getFunctionBody()) {
        // Anchor of each op's kernel, resolved through chains of folds.
        auto anchorOf = [&](Operation *op) {
          Operation *a = op;
          while (Operation *next = foldedInto(a))
            a = next;
          return a;
        };
        llvm::MapVector<Operation *, SmallVector<Operation *>> kernels;
        for (Operation &op : block)
          if (isKernel(&op))
            kernels[anchorOf(&op)].push_back(&op);
        // Anchors come last in their group: order kernels by anchor.
        SmallVector<Operation *> anchors;
        for (auto &entry : kernels)
          anchors.push_back(entry.first);
        llvm::sort(anchors, [](Operation *a, Operation *b) {
          return a->isBeforeInBlock(b);
        });
        for (Operation *a : anchors) {
          std::vector<std::string> names;
          for (Operation *op : kernels[a]) {
            appendOnnxNodeNames(op->getLoc(), names);
            op->walk([&](Operation *nested) {
              if (nested != op && isKernel(nested))
                appendOnnxNodeNames(nested->getLoc(), names);
            });
          }
          StringRef stringKernel = stringKernelOf(a);
          std::string name =
              std::to_string(index++) + ":" +
              (stringKernel.empty() ? a->getName().stripDialect().str()
                                    : stringKernel.str());
          // Loops over symbolic dims: code for any extent, not tiles sized
          // for one shape.
          if (hasRunTimeExtents(a)) {
            name += " (run-time extents)";
            report::count("kernels_run_time_extents");
          }
          KILN_LOG("lowering", Info)
              << name << " <- " << llvm::join(names, ", ") << "\n";
          report::kernel(name, names);
        }
      }
    }
  }
};
} // namespace
