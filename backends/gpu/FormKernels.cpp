//===- FormKernels.cpp - The entry's loop nests as gpu.launch kernels -----===//
//
// After bufferization every buffer of the entry is a view of its arguments
// (inputs, outputs, the device arena, the device weights), so the host part
// of a GPU artifact only computes views and indices and launches kernels.
// This pass makes every top-level op that touches memory part of a kernel:
//
//   - an scf.parallel nest (a linalg op's parallel dims, a mapped forall) is
//     one kernel over its whole iteration space, linearized: each thread
//     runs one iteration, the innermost dimension varying fastest between
//     neighbouring threads so their accesses coalesce;
//   - a run of other ops with memory effects (a reduction to one value, a
//     scalar store, a sequential loop) becomes a one-thread kernel.
//
// kiln-gpu-outline-kernels later clones the pure ops the kernels read
// (views, index arithmetic, constants) into each kernel.
//
//===----------------------------------------------------------------------===//
#include "backends/gpu/Passes.h"
#include "dialects/kiln/StringKernels.h"

#include "compiler/logging/Logging.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_FORMKERNELS
#include "backends/gpu/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;

namespace {
/// Whether `memref` is host memory: an entry argument marked `kiln.host`
/// (the extents of an input with symbolic dims, the record of an output
/// shaped at run time).
bool isHostMemory(Value memref) {
  auto arg = dyn_cast<BlockArgument>(memref);
  auto func = arg ? dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp())
                  : func::FuncOp();
  return func && func.getArgAttr(arg.getArgNumber(), "kiln.host");
}

/// A load or store of host memory.
bool accessesHostMemory(Operation *op) {
  if (auto load = dyn_cast<memref::LoadOp>(op))
    return isHostMemory(load.getMemRef());
  if (auto store = dyn_cast<memref::StoreOp>(op))
    return isHostMemory(store.getMemRef());
  return false;
}

/// Whether `op` holds a kernel already formed (a contraction or attention
/// kernel built at the tensor level) or a buffer of run-time size: then it
/// cannot itself run inside one kernel.
bool launchesInside(Operation &op) {
  return op
      .walk([](Operation *inner) {
        auto alloc = dyn_cast<memref::AllocOp>(inner);
        return isa<gpu::LaunchOp>(inner) ||
                       (alloc && !alloc.getType().hasStaticShape())
                   ? WalkResult::interrupt()
                   : WalkResult::advance();
      })
      .wasInterrupted();
}

/// A branch that yields only buffers and holds a parallel loop (a run-time
/// broadcast's copy into a static buffer): its loops are better kernels of
/// their own than one thread's.
bool isBufferBranch(Operation &op) {
  return isa<scf::IfOp>(op) &&
         llvm::all_of(op.getResultTypes(),
                      [](Type type) { return isa<MemRefType>(type); }) &&
         op.walk([](scf::ParallelOp) {
             return WalkResult::interrupt();
           }).wasInterrupted();
}

/// Ops the host may run: no memory effects and no regions (views of device
/// buffers are only address arithmetic), and accesses of host memory.
bool isHostOp(Operation *op) {
  return (op->getNumRegions() == 0 && isMemoryEffectFree(op) &&
          !isa<func::ReturnOp>(op)) ||
         accessesHostMemory(op);
}

/// A new gpu.launch before `before` over (blocks x 1 x 1) x (threads x 1 x
/// 1); the builder is left at the start of its body, before the terminator.
gpu::LaunchOp createLaunch(OpBuilder &b, Location loc, Value blocks,
                           int64_t threads) {
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value threadCount = arith::ConstantIndexOp::create(b, loc, threads);
  auto launch =
      gpu::LaunchOp::create(b, loc, blocks, one, one, threadCount, one, one);
  Block &body = launch.getBody().front();
  b.setInsertionPointToEnd(&body);
  gpu::TerminatorOp::create(b, loc);
  b.setInsertionPointToStart(&body);
  return launch;
}

struct FormKernelsPass : public kiln::impl::FormKernelsBase<FormKernelsPass> {
  using Base::Base;

  LogicalResult formBlock(Block &body);
  LogicalResult formParallelKernel(scf::ParallelOp loop);
  LogicalResult formSerialKernel(ArrayRef<Operation *> ops);

  void runOnOperation() override {
    auto entry = getOperation().lookupSymbol<func::FuncOp>(entryName);
    if (!entry || entry.isExternal()) {
      getOperation().emitError()
          << "kiln-gpu-form-kernels: no entry function @" << entryName;
      return signalPassFailure();
    }
    if (!entry.getBody().hasOneBlock()) {
      entry.emitError("kiln-gpu-form-kernels: the entry must be one block "
                      "(structured control flow)");
      return signalPassFailure();
    }
    // String ops call the runtime's CPU string kernels.
    WalkResult strings = entry.walk([&](func::CallOp call) {
      if (kiln::stringKernelOf(call).empty())
        return WalkResult::advance();
      call.emitError("string operations run on the CPU only; compile this "
                     "model for a CPU target");
      return WalkResult::interrupt();
    });
    if (strings.wasInterrupted())
      return signalPassFailure();

    if (failed(formBlock(entry.getBody().front())))
      return signalPassFailure();
    // What a kernel cannot do: read or write host memory (the host reads
    // it first), or allocate a buffer of run-time size (per-iteration
    // scratch over symbolic dims).
    WalkResult device = entry.walk([&](gpu::LaunchOp launch) {
      WalkResult inside = launch.walk([&](Operation *op) {
        if (accessesHostMemory(op)) {
          op->emitError("a kernel would read the extents or a record in "
                        "host memory; not supported on GPU targets yet");
          return WalkResult::interrupt();
        }
        auto alloc = dyn_cast<memref::AllocOp>(op);
        if (alloc && !alloc.getType().hasStaticShape()) {
          alloc.emitError("a buffer whose size is only known at run time "
                          "inside a kernel (per-iteration scratch); not "
                          "supported on GPU targets yet");
          return WalkResult::interrupt();
        }
        return WalkResult::advance();
      });
      return inside.wasInterrupted() ? WalkResult::interrupt()
                                     : WalkResult::advance();
    });
    if (device.wasInterrupted())
      return signalPassFailure();
  }
};

/// Forms the kernels of `body`, the entry's or a host-side branch's.
LogicalResult FormKernelsPass::formBlock(Block &body) {
  SmallVector<Operation *> run;
  auto flush = [&]() -> LogicalResult {
    if (run.empty())
      return success();
    LogicalResult result = formSerialKernel(run);
    run.clear();
    return result;
  };
  auto readsRun = [&](Operation &op) {
    return llvm::any_of(op.getOperands(), [&](Value v) {
      Operation *def = v.getDefiningOp();
      return def && llvm::is_contained(run, def);
    });
  };
  // Values of the run read inside `op`'s regions.
  auto readsRunInside = [&](Operation &op) {
    bool reads = false;
    op.walk([&](Operation *inner) {
      if (inner != &op)
        reads |= readsRun(*inner);
    });
    return reads;
  };
  // A run of plain reads (a scalar input such as Trilu's k, hoisted out
  // of the loop that uses it) moves into that loop: each thread reads it.
  auto onlyReadsFor = [&](Operation &loop) {
    return llvm::all_of(run, [&](Operation *op) {
      return (isa<memref::LoadOp>(op) || isHostOp(op)) &&
             llvm::all_of(op->getUsers(), [&](Operation *user) {
               return loop.isProperAncestor(user) ||
                      llvm::is_contained(run, user);
             });
    });
  };
  for (Operation &op : llvm::make_early_inc_range(body)) {
    if (isa<func::ReturnOp, scf::YieldOp, scf::ConditionOp, gpu::LaunchOp>(
            op)) {
      if (failed(flush()))
        return failure();
      continue;
    }
    // A branch on what the host knows (a symbolic dim's broadcast, a
    // choice between two views), or a loop whose bounds and carried values
    // the host knows, stays on the host with the kernels of its body
    // inside it.
    if (isa<scf::IfOp, scf::ForOp, scf::WhileOp>(op) && !readsRun(op) &&
        !readsRunInside(op) &&
        (launchesInside(op) || isBufferBranch(op) || isMemoryEffectFree(&op))) {
      if (failed(flush()))
        return failure();
      for (Region &region : op.getRegions())
        for (Block &block : region)
          if (failed(formBlock(block)))
            return failure();
      continue;
    }
    // A view between two serial ops does not split their kernel; pure
    // arithmetic on what the run computed joins it.
    if (isHostOp(&op) && !readsRun(op))
      continue;
    if (accessesHostMemory(&op)) {
      op.emitError("a value computed on the device is needed by the host "
                   "(a run-time shape or loop bound); not supported on GPU "
                   "targets yet");
      return failure();
    }
    if (isHostOp(&op)) {
      run.push_back(&op);
      continue;
    }
    // A buffer of run-time size (symbolic dims) is device memory from
    // the runtime's alloc callback, asked for by the host; its size must
    // not be something the device computed.
    if (isa<memref::AllocOp, cf::AssertOp>(op) && !readsRun(op))
      continue;
    // A loop whose bounds the device computes, or whose body reads what
    // a serial run computed, runs in that run's kernel.
    auto loop = dyn_cast<scf::ParallelOp>(op);
    if (loop && !run.empty() && !readsRun(op) && readsRunInside(op) &&
        onlyReadsFor(op)) {
      Block *loopBody = loop.getBody();
      for (Operation *read : llvm::reverse(run))
        read->moveBefore(loopBody, loopBody->begin());
      run.clear();
    }
    if (loop && loop.getNumResults() == 0 && !readsRun(op) &&
        !readsRunInside(op)) {
      if (failed(flush()) || failed(formParallelKernel(loop)))
        return failure();
      continue;
    }
    run.push_back(&op);
  }
  return flush();
}

LogicalResult FormKernelsPass::formParallelKernel(scf::ParallelOp loop) {
  Location loc = loop.getLoc();
  OpBuilder b(loop);
  // Trip count of each dimension: constants when the bounds are, else
  // computed on the host.
  SmallVector<Value> trips;
  // The iteration count while every loop is static (-1 once one is not).
  int64_t knownTotal = 1;
  Value total;
  for (auto [lb, ub, step] :
       llvm::zip(loop.getLowerBound(), loop.getUpperBound(), loop.getStep())) {
    std::optional<int64_t> l = getConstantIntValue(lb),
                           u = getConstantIntValue(ub),
                           s = getConstantIntValue(step);
    Value trip;
    if (l && u && s && *s > 0) {
      int64_t count = *u > *l ? llvm::divideCeil(*u - *l, *s) : 0;
      trip = arith::ConstantIndexOp::create(b, loc, count);
      if (knownTotal >= 0)
        knownTotal *= count;
    } else {
      Value extent = arith::SubIOp::create(b, loc, ub, lb);
      trip = arith::CeilDivUIOp::create(b, loc, extent, step);
      knownTotal = -1;
    }
    trips.push_back(trip);
    total =
        total ? arith::MulIOp::create(b, loc, total, trip).getResult() : trip;
  }
  // Small loops take a block of whole warps, not the full block size.
  int64_t threads = threadsPerBlock;
  Value blocks;
  std::optional<int64_t> staticTotal;
  if (knownTotal >= 0)
    staticTotal = knownTotal;
  if (staticTotal) {
    if (*staticTotal == 0) {
      loop.erase();
      return success();
    }
    total = arith::ConstantIndexOp::create(b, loc, *staticTotal);
    threads = std::min<int64_t>(threads, llvm::alignTo(*staticTotal, 32));
    int64_t blockCount = llvm::divideCeil(*staticTotal, threads);
    if (blockCount > std::numeric_limits<int32_t>::max())
      return loop.emitError("a loop nest of ")
             << *staticTotal << " iterations is too large for one GPU grid";
    blocks = arith::ConstantIndexOp::create(b, loc, blockCount);
  }
  KILN_LOG("gpu", Debug) << "loop nest at " << loc << ": "
                         << (staticTotal ? std::to_string(*staticTotal)
                                         : std::string("run-time"))
                         << " iterations, blocks of " << threads
                         << " threads\n";
  Value threadCount = arith::ConstantIndexOp::create(b, loc, threads);
  if (!blocks)
    blocks = arith::CeilDivUIOp::create(b, loc, total, threadCount);
  gpu::LaunchOp launch = createLaunch(b, loc, blocks, threads);

  // linear = blockIdx.x * threads + threadIdx.x; the tail block's extra
  // threads do nothing.
  gpu::KernelDim3 blockIds = launch.getBlockIds();
  gpu::KernelDim3 threadIds = launch.getThreadIds();
  Value linear = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, blockIds.x, threadCount),
      threadIds.x);
  Value inRange =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, linear, total);
  auto guard = scf::IfOp::create(b, loc, inRange, /*withElseRegion=*/false);
  b.setInsertionPointToStart(&guard.getThenRegion().front());

  // Innermost dimension fastest.
  IRMapping mapping;
  Value rest = linear;
  for (int64_t d = loop.getNumLoops() - 1; d >= 0; --d) {
    Value index =
        d == 0 ? rest : arith::RemUIOp::create(b, loc, rest, trips[d]);
    if (d > 0)
      rest = arith::DivUIOp::create(b, loc, rest, trips[d]);
    Value iv = index;
    if (getConstantIntValue(loop.getStep()[d]) != 1)
      iv = arith::MulIOp::create(b, loc, iv, loop.getStep()[d]);
    if (getConstantIntValue(loop.getLowerBound()[d]) != 0)
      iv = arith::AddIOp::create(b, loc, loop.getLowerBound()[d], iv);
    mapping.map(loop.getInductionVars()[d], iv);
  }
  for (Operation &op : loop.getBody()->without_terminator())
    b.clone(op, mapping);
  loop.erase();
  return success();
}

LogicalResult FormKernelsPass::formSerialKernel(ArrayRef<Operation *> ops) {
  // Results used after the run would have to travel back to the host.
  DenseSet<Operation *> inRun(ops.begin(), ops.end());
  for (Operation *op : ops)
    for (Value result : op->getResults())
      for (Operation *user : result.getUsers())
        if (!inRun.contains(user) &&
            !inRun.contains(op->getBlock()->findAncestorOpInBlock(*user)))
          return op->emitError("a value computed on the device is needed by "
                               "the host (a run-time shape or loop bound); "
                               "not supported on GPU targets yet");
  // At the last op: host ops between the run's ops (views the run reads)
  // then come before the kernel.
  Location loc = ops.front()->getLoc();
  KILN_LOG("gpu", Info) << "one-thread kernel for " << ops.size()
                        << " op(s) at " << loc
                        << " (a reduction to one value or a scalar update: "
                           "runs serially)\n";
  OpBuilder b(ops.back());
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  gpu::LaunchOp launch = createLaunch(b, loc, one, 1);
  Operation *terminator = launch.getBody().front().getTerminator();
  for (Operation *op : ops)
    op->moveBefore(terminator);
  return success();
}
} // namespace
