//===- PlanArena.cpp - One arena for all intermediate buffers -------------===//
//
// Liveness is measured on the entry block of the function: an op nested in a
// loop counts as its top-level ancestor, so a buffer used in a loop stays live
// for the whole loop. That is coarse but always safe, and after
// bufferization of linalg on tensors almost every op is top level anyway.
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

/// Bytes of a buffer, or nothing if it cannot live in the arena. i1 takes one
/// byte per element, as LLVM stores it.
std::optional<uint64_t> arenaBytes(memref::AllocOp alloc,
                                   const DataLayout &layout) {
  MemRefType type = alloc.getType();
  if (!type.hasStaticShape() || !type.getLayout().isIdentity() ||
      type.getMemorySpace() || !alloc.getSymbolOperands().empty())
    return std::nullopt;
  if (alloc.getAlignment() && *alloc.getAlignment() > kArenaAlignment)
    return std::nullopt;
  Type element = type.getElementType();
  if (!element.isIntOrIndexOrFloat())
    return std::nullopt;
  return uint64_t(type.getNumElements()) * layout.getTypeSize(element);
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

LogicalResult planArena(func::FuncOp func) {
  ModuleOp module = func->getParentOfType<ModuleOp>();
  if (module->hasAttr("kiln.arena_size"))
    return module.emitError("kiln-plan-arena: the arena is already planned");

  Region &region = func.getBody();
  Block &body = region.front();
  DenseMap<Operation *, int64_t> position;
  int64_t next = 0;
  for (Operation &op : body)
    position[&op] = next++;

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
