//===- PlanArena.cpp - One arena for all intermediate buffers -------------===//
//
// Liveness is measured on the entry block of the function: an op nested in a
// loop counts as its top-level ancestor, so a buffer used in a loop stays live
// for the whole loop. That is coarse but always safe, and after
// bufferization of linalg on tensors almost every op is top level anyway.
//
// Buffers of run-time size whose one run-time extent is the same value n (a
// symbolic batch: after kiln-unify-symbol-dims every image buffer reads it
// from one tensor.dim) share a second arena of S * n bytes, allocated once
// when n is known: their sizes are c_i * n (c_i a multiple of 64 bytes),
// so offsets o_i planned for the sizes c_i, scaled by n, keep buffers that
// are live together apart. Before, each was a scratch allocation of its
// own, none reused within a run.
//
//   %a = memref.alloc(%n) : memref<?x56x56x24xf32>
//   ->
//   %group = memref.alloc(S * %n) : memref<?xi8>      (after %n)
//   %a = memref.view %group[o_a * %n][%n] : memref<?xi8> to
//   memref<?x56x56x24xf32>
//
//===----------------------------------------------------------------------===//
#include "backends/cpu/ArenaPlanner.h"
#include "backends/cpu/Passes.h"
#include "dialects/kiln/StringKernels.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/DataLayoutInterfaces.h"
#include "llvm/ADT/MapVector.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_PLANARENA
#include "backends/cpu/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;

namespace {
constexpr uint64_t kArenaAlignment = 64;

struct ArenaCandidate {
  memref::AllocOp alloc;
  kiln::ArenaBuffer buffer;
  SmallVector<memref::DeallocOp> deallocs;
};

/// Bytes of a buffer's static dims (all of it when static, per unit of
/// its run-time extents otherwise), or nothing if it cannot live in an
/// arena. i1 takes one byte per element, as LLVM stores it.
std::optional<uint64_t> staticBytes(memref::AllocOp alloc,
                                    const DataLayout &layout) {
  MemRefType type = alloc.getType();
  if (!type.getLayout().isIdentity() || type.getMemorySpace() ||
      !alloc.getSymbolOperands().empty())
    return std::nullopt;
  if (alloc.getAlignment() && *alloc.getAlignment() > kArenaAlignment)
    return std::nullopt;
  Type element = type.getElementType();
  if (!element.isIntOrIndexOrFloat())
    return std::nullopt;
  uint64_t bytes = layout.getTypeSize(element);
  for (int64_t d : type.getShape())
    if (!ShapedType::isDynamic(d))
      bytes *= d;
  return bytes;
}

/// Bytes of a static buffer, or nothing if it cannot live in the arena.
std::optional<uint64_t> arenaBytes(memref::AllocOp alloc,
                                   const DataLayout &layout) {
  if (!alloc.getType().hasStaticShape())
    return std::nullopt;
  return staticBytes(alloc, layout);
}

/// Bytes of a buffer per unit of its one run-time extent, or nothing if it
/// cannot live in a scaled arena: whole alignment units only, so offsets
/// stay aligned whatever the extent is and no slot is padded (a [?, 1] f32
/// buffer padded to 64 bytes per row would take 16 times its size).
std::optional<uint64_t> scaledBytes(memref::AllocOp alloc,
                                    const DataLayout &layout) {
  if (alloc.getType().getNumDynamicDims() != 1)
    return std::nullopt;
  std::optional<uint64_t> bytes = staticBytes(alloc, layout);
  if (!bytes || *bytes == 0 || *bytes % kArenaAlignment)
    return std::nullopt;
  return bytes;
}

/// Computes the live interval of `cand.alloc` in `body`, following every
/// value that may alias it. Fails if the buffer escapes the function or a
/// nested buffer is yielded out of a loop (its slot would be reused by the
/// next iteration while still live); yielded out of an `scf.if` it lives on
/// in the if's results.
LogicalResult computeLiveRange(Block &body,
                               const DenseMap<Operation *, int64_t> &position,
                               ArenaCandidate &cand) {
  Operation *allocAnchor = body.findAncestorOpInBlock(*cand.alloc);
  bool nested = allocAnchor != cand.alloc.getOperation();
  int64_t first = position.lookup(allocAnchor), last = first;

  SmallVector<Value> worklist{cand.alloc.getResult()};
  DenseSet<Value> seen{cand.alloc.getResult()};
  auto follow = [&](ValueRange values) {
    for (Value v : values)
      if (isa<BaseMemRefType>(v.getType()) && seen.insert(v).second)
        worklist.push_back(v);
  };
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (Operation *user : value.getUsers()) {
      if (isa<func::ReturnOp>(user) ||
          // The runtime's string kernels use their buffers only during
          // the call; any other call may keep them.
          (isa<CallOpInterface>(user) && kiln::stringKernelOf(user).empty()))
        return failure();
      if (auto dealloc = dyn_cast<memref::DeallocOp>(user)) {
        cand.deallocs.push_back(dealloc);
        continue;
      }
      Operation *anchor = body.findAncestorOpInBlock(*user);
      if (!anchor)
        return failure();
      first = std::min(first, position.lookup(anchor));
      last = std::max(last, position.lookup(anchor));
      // Any memref an op produces from this buffer may alias it: views,
      // casts, reshapes, loop and branch results.
      follow(user->getResults());
      if (user->hasTrait<OpTrait::IsTerminator>()) {
        Operation *parent = user->getParentOp();
        // A buffer made in a loop body and yielded out of it would share
        // its slot with the next iteration's; one yielded out of an scf.if
        // branch only lives on in the if's results (a reshape's shape made
        // in the branch that needs it: it was left a heap buffer, leaked on
        // every run).
        if (nested && !isa_and_nonnull<scf::IfOp, scf::IndexSwitchOp>(parent))
          return failure();
        if (parent)
          follow(parent->getResults());
      }
    }
  }
  cand.buffer.firstUse = first;
  cand.buffer.lastUse = last;
  return success();
}

/// Program order of the ops of `body`.
DenseMap<Operation *, int64_t> positionsOf(Block &body) {
  DenseMap<Operation *, int64_t> position;
  int64_t next = 0;
  for (Operation &op : body)
    position[&op] = next++;
  return position;
}

/// The scaled arenas of the file comment: one per run-time extent value
/// shared by at least two buffers (with a single block to order them).
void planScaledArenas(func::FuncOp func) {
  if (!func.getBody().hasOneBlock())
    return;
  Block &body = func.getBody().front();
  DenseMap<Operation *, int64_t> position = positionsOf(body);
  DataLayout layout = DataLayout::closest(func);
  llvm::MapVector<Value, SmallVector<ArenaCandidate>> groups;
  func.walk([&](memref::AllocOp alloc) {
    std::optional<uint64_t> bytes = scaledBytes(alloc, layout);
    if (!bytes)
      return;
    // Scratch of a parallel loop's iterations: one slot would be shared by
    // the threads (kiln-privatize-parallel-allocs gives static ones each
    // thread's stack; those of run-time size stay allocations).
    if (alloc->getParentOfType<scf::ForallOp>() ||
        alloc->getParentOfType<scf::ParallelOp>())
      return;
    Value extent = alloc.getDynamicSizes()[0];
    // The group's buffer goes where the extent is defined: it must be
    // defined in the entry block (or be one of its arguments).
    if (extent.getParentBlock() != &body)
      return;
    ArenaCandidate cand{alloc, {*bytes, 0, 0}, {}};
    if (failed(computeLiveRange(body, position, cand)))
      return;
    groups[extent].push_back(std::move(cand));
  });
  for (auto &[extent, candidates] : groups) {
    if (candidates.size() < 2)
      continue;
    std::vector<kiln::ArenaBuffer> buffers;
    for (const ArenaCandidate &cand : candidates)
      buffers.push_back(cand.buffer);
    kiln::ArenaPlan plan = kiln::planArena(buffers, kArenaAlignment);
    OpBuilder b(func.getContext());
    if (Operation *def = extent.getDefiningOp())
      b.setInsertionPointAfter(def);
    else
      b.setInsertionPointToStart(&body);
    Location loc = func.getLoc();
    auto scaled = [&](uint64_t units) {
      return arith::MulIOp::create(
          b, loc, arith::ConstantIndexOp::create(b, loc, units), extent);
    };
    Value group = memref::AllocOp::create(
        b, loc, MemRefType::get({ShapedType::kDynamic}, b.getI8Type()),
        ValueRange{scaled(plan.size)}, b.getI64IntegerAttr(kArenaAlignment));
    for (auto [cand, offset] : llvm::zip_equal(candidates, plan.offsets)) {
      b.setInsertionPoint(cand.alloc);
      Value view =
          memref::ViewOp::create(b, cand.alloc.getLoc(), cand.alloc.getType(),
                                 group, scaled(offset), ValueRange{extent});
      cand.alloc.getResult().replaceAllUsesWith(view);
      for (memref::DeallocOp dealloc : cand.deallocs)
        dealloc.erase();
      cand.alloc.erase();
    }
  }
}

LogicalResult planArena(func::FuncOp func) {
  ModuleOp module = func->getParentOfType<ModuleOp>();
  if (module->hasAttr("kiln.arena_size"))
    return module.emitError("kiln-plan-arena: the arena is already planned");

  Region &region = func.getBody();
  Block &body = region.front();
  DenseMap<Operation *, int64_t> position = positionsOf(body);
  int64_t next = position.size();

  DataLayout layout = DataLayout::closest(func);
  SmallVector<ArenaCandidate> candidates;
  func.walk([&](memref::AllocOp alloc) {
    std::optional<uint64_t> bytes = arenaBytes(alloc, layout);
    if (!bytes)
      return;
    ArenaCandidate cand{alloc, {*bytes, 0, 0}, {}};
    if (!region.hasOneBlock()) {
      // Unstructured control flow: no order to reason with, so every buffer
      // is live everywhere.
      cand.buffer.firstUse = 0;
      cand.buffer.lastUse = next;
    } else if (failed(computeLiveRange(body, position, cand))) {
      return;
    }
    candidates.push_back(std::move(cand));
  });

  std::vector<kiln::ArenaBuffer> buffers;
  for (const ArenaCandidate &cand : candidates)
    buffers.push_back(cand.buffer);
  kiln::ArenaPlan plan = kiln::planArena(buffers, kArenaAlignment);

  MLIRContext *ctx = func.getContext();
  auto arenaType =
      MemRefType::get({int64_t(plan.size)}, IntegerType::get(ctx, 8));
  unsigned argIndex = func.getNumArguments();
  NamedAttribute marker(StringAttr::get(ctx, "kiln.arena"), UnitAttr::get(ctx));
  if (failed(func.insertArgument(argIndex, arenaType,
                                 DictionaryAttr::get(ctx, marker),
                                 func.getLoc())))
    return func.emitError("kiln-plan-arena: cannot add the arena argument");
  Value arena = func.getArgument(argIndex);

  OpBuilder builder(ctx);
  for (auto [cand, offset] : llvm::zip_equal(candidates, plan.offsets)) {
    builder.setInsertionPoint(cand.alloc);
    Location loc = cand.alloc.getLoc();
    Value byteShift = arith::ConstantIndexOp::create(builder, loc, offset);
    Value view = memref::ViewOp::create(builder, loc, cand.alloc.getType(),
                                        arena, byteShift, ValueRange{});
    cand.alloc.getResult().replaceAllUsesWith(view);
    for (memref::DeallocOp dealloc : cand.deallocs)
      dealloc.erase();
    cand.alloc.erase();
  }
  module->setAttr("kiln.arena_size",
                  IntegerAttr::get(IntegerType::get(ctx, 64), plan.size));
  planScaledArenas(func);
  return success();
}

struct PlanArenaPass : public kiln::impl::PlanArenaBase<PlanArenaPass> {
  using Base::Base;

  void runOnOperation() override {
    auto func = getOperation().lookupSymbol<func::FuncOp>(entryName);
    if (!func || func.isExternal()) {
      getOperation().emitError()
          << "kiln-plan-arena: no entry function @" << entryName;
      return signalPassFailure();
    }
    if (failed(planArena(func)))
      signalPassFailure();
  }
};
} // namespace
