//===- PrivatizeParallelAllocs.cpp - Per-iteration scratch of foralls -----===//
//
// A buffer allocated inside an scf.forall body is scratch of one iteration,
// but kiln-plan-arena would give it one arena slot shared by every thread
// running the loop. Each such buffer (static shape, identity layout, in all
// at most kMaxPrivateBytes per loop) becomes a memref.alloca at the start of
// the body; allocations nested in inner sequential loops are hoisted there
// too (like the arena's one slot per loop, one buffer serves every inner
// iteration). Deallocs of these buffers are erased.
//
// kiln-hoist-static-allocas then moves every fixed-size alloca to the entry
// block of its function once the parallel loops are outlined: an outlined
// body runs on one thread per call, so an entry-block alloca is per thread,
// and the stack no longer grows with every iteration of the loop around it.
//
//===----------------------------------------------------------------------===//
#include "backends/cpu/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_PRIVATIZEPARALLELALLOCS
#include "backends/cpu/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;

namespace {

/// More per-iteration scratch than this is an error (thread stacks are a
/// few MB), not a silent race on a shared arena slot.
constexpr int64_t kMaxPrivateBytes = 256 * 1024;

std::optional<int64_t> privateBytes(memref::AllocOp alloc) {
  MemRefType type = alloc.getType();
  if (!type.hasStaticShape() || !type.getLayout().isIdentity() ||
      type.getMemorySpace() || !type.getElementType().isIntOrIndexOrFloat())
    return std::nullopt;
  int64_t bits = type.getElementTypeBitWidth();
  return type.getNumElements() * std::max<int64_t>(bits / 8, 1);
}

struct PrivatizeParallelAllocs
    : kiln::impl::PrivatizeParallelAllocsBase<PrivatizeParallelAllocs> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<scf::ForallOp> loops;
    // Outermost foralls only: an inner forall's iterations run inside one
    // iteration of the outer one, whose scope covers them.
    getOperation()->walk([&](scf::ForallOp loop) {
      if (!loop->getParentOfType<scf::ForallOp>())
        loops.push_back(loop);
    });
    for (scf::ForallOp loop : loops)
      if (failed(privatize(loop)))
        return signalPassFailure();
  }

  LogicalResult privatize(scf::ForallOp loop) {
    // Dynamically shaped buffers keep calling the allocator (thread-safe);
    // kiln-plan-arena leaves them alone too.
    SmallVector<memref::AllocOp> allocs;
    int64_t total = 0;
    loop.getBody()->walk([&](memref::AllocOp a) {
      if (std::optional<int64_t> bytes = privateBytes(a)) {
        allocs.push_back(a);
        total += *bytes;
      }
    });
    if (allocs.empty())
      return success();
    if (total > kMaxPrivateBytes)
      return loop.emitOpError("kiln-privatize-parallel-allocs: ")
             << total << " bytes of per-iteration scratch exceed the "
             << kMaxPrivateBytes << "-byte stack budget";

    OpBuilder b(loop.getContext());
    b.setInsertionPointToStart(loop.getBody());
    for (memref::AllocOp alloc : allocs) {
      auto alloca = memref::AllocaOp::create(b, alloc.getLoc(), alloc.getType(),
                                             alloc.getAlignmentAttr());
      for (Operation *user : llvm::make_early_inc_range(alloc->getUsers()))
        if (isa<memref::DeallocOp>(user))
          user->erase();
      alloc.replaceAllUsesWith(alloca.getResult());
      alloc.erase();
    }
    return success();
  }
};
} // namespace

namespace mlir::kiln {
#define GEN_PASS_DEF_HOISTSTATICALLOCAS
#include "backends/cpu/Passes.h.inc"
} // namespace mlir::kiln

namespace {
struct HoistStaticAllocas
    : kiln::impl::HoistStaticAllocasBase<HoistStaticAllocas> {
  using Base::Base;

  void runOnOperation() override {
    getOperation()->walk([&](FunctionOpInterface func) {
      if (func.isExternal())
        return;
      Block &entry = func.getFunctionBody().front();
      SmallVector<memref::AllocaOp> nested;
      func.walk([&](memref::AllocaOp alloca) {
        if (alloca->getBlock() != &entry && alloca.getType().hasStaticShape() &&
            alloca.getDynamicSizes().empty() &&
            alloca.getSymbolOperands().empty())
          nested.push_back(alloca);
      });
      for (memref::AllocaOp alloca : nested)
        alloca->moveBefore(&entry, entry.begin());
    });
  }
};
} // namespace
