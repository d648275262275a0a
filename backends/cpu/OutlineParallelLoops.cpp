//===- OutlineParallelLoops.cpp - Loop bodies for the runtime's pool ------===//
//
// Generated code creates no threads: the runtime lends its pool through
// kiln_runtime_callbacks::parallel_for(pool, n, body, ctx). This pass turns
// each big scf.parallel of the entry function (top level, or in its
// sequential loops, branches and scf.while steps) into
//   * @__kiln_parallel_body_K(begin, end, <entry args>): runs iterations
//     [begin, end) of the loop's leading dimensions;
//   * a call to the declaration @__kiln_parallel_for_K(n, runtime,
//     <entry args>), which the artifact writer defines in LLVM IR: it packs
//     the pointers into a context and calls parallel_for (or the body
//     directly when the runtime offers no pool).
// The entry function gets a trailing `memref<0xi8> {kiln.runtime}` argument,
// the callbacks pointer, even when no loop is outlined, so its signature does
// not depend on the model.
//
// Captured values reach the body as entry arguments, rebuilt constants,
// globals and views, scalars in one-element stack slots, or, for buffers of
// run-time size (a symbolic batch or sequence) and buffers an enclosing
// loop carries (an scf.while's state), as their base buffer (a rank-0
// memref, one pointer) with the offset, sizes and strides as scalars,
// viewed again with memref.reinterpret_cast inside the body:
//
//   %base, %off, %sizes:4, %strides:4 = memref.extract_strided_metadata %buf
//   ... body: %buf' = memref.reinterpret_cast %base_arg to offset: [0],
//             sizes: [%s0, 12, %s2, 64], strides: [%t0, %t1, 64, 1]
//
//===----------------------------------------------------------------------===//
#include "backends/cpu/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/RegionUtils.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_OUTLINEPARALLELLOOPS
#include "backends/cpu/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;

namespace {
/// Estimated number of ops `block` executes (unknown trip counts count 16).
int64_t estimateWork(Block &block) {
  int64_t work = 0;
  for (Operation &op : block) {
    if (auto loop = dyn_cast<scf::ForOp>(op)) {
      std::optional<APInt> trip = loop.getStaticTripCount();
      work +=
          (trip ? trip->getSExtValue() : 16) * estimateWork(*loop.getBody());
    } else if (auto loop = dyn_cast<scf::ParallelOp>(op)) {
      int64_t trips = 1;
      for (auto [lb, ub, step] : llvm::zip_equal(
               loop.getLowerBound(), loop.getUpperBound(), loop.getStep())) {
        std::optional<int64_t> l = getConstantIntValue(lb),
                               u = getConstantIntValue(ub),
                               s = getConstantIntValue(step);
        trips *= (l && u && s && *s > 0) ? llvm::divideCeil(*u - *l, *s) : 16;
      }
      work += trips * estimateWork(*loop.getBody());
    } else {
      work += 1;
    }
  }
  return work;
}

/// Whether `op` can be recreated inside the body from its operands.
bool isRematerializable(Operation *op) {
  return isa<arith::ConstantOp, memref::GetGlobalOp, memref::ViewOp,
             memref::SubViewOp, memref::CastOp, memref::CollapseShapeOp,
             memref::ExpandShapeOp, memref::ReinterpretCastOp>(op);
}

class ParallelLoopOutliner {
public:
  ParallelLoopOutliner(func::FuncOp entry, Value runtime, int64_t minWork,
                       int64_t minChunks)
      : entry(entry), runtime(runtime), minWork(minWork), minChunks(minChunks) {
  }

  /// Outlines `loop` if it is worth it and possible.
  void tryOutline(scf::ParallelOp loop);

private:
  /// Appends to `ops` (dependencies first) what rebuilds `value` in the body;
  /// an integer scalar that cannot be rebuilt (the induction variable of an
  /// enclosing loop, a run-time extent) goes to `scalars`, passed to the
  /// body through memory. Fails if `value` cannot reach the body.
  LogicalResult collectRebuild(Value value, llvm::SetVector<Operation *> &ops,
                               llvm::SetVector<Value> &scalars);
  /// A buffer that cannot be rebuilt (run-time sized): its base and the
  /// metadata values the body needs to view it again.
  struct CapturedBuffer {
    Value buffer, base, offset;
    SmallVector<Value> sizes, strides;
  };
  llvm::SetVector<Value> capturedBuffers;
  void buildBody(func::FuncOp body, scf::ParallelOp loop,
                 ArrayRef<Operation *> rebuild, ArrayRef<Value> scalars,
                 ArrayRef<CapturedBuffer> buffers, ArrayRef<Value> tripValues,
                 ArrayRef<int64_t> lbs, ArrayRef<int64_t> steps,
                 ArrayRef<int64_t> trips, unsigned prefix);

  func::FuncOp entry;
  Value runtime;
  int64_t minWork, minChunks;
  int counter = 0;
};
} // namespace

LogicalResult
ParallelLoopOutliner::collectRebuild(Value value,
                                     llvm::SetVector<Operation *> &ops,
                                     llvm::SetVector<Value> &scalars) {
  bool isScalar = value.getType().isIntOrIndex();
  if (auto arg = dyn_cast<BlockArgument>(value)) {
    if (arg.getOwner() == &entry.getBody().front())
      return success(value != runtime);
    if (isScalar)
      scalars.insert(value);
    // A buffer carried by an enclosing loop (an scf.while's state): passed
    // like a run-time sized one, by its metadata.
    if (auto type = dyn_cast<MemRefType>(value.getType());
        type && type.getRank() > 0) {
      capturedBuffers.insert(value);
      return success();
    }
    return success(isScalar);
  }
  Operation *def = value.getDefiningOp();
  if (ops.contains(def))
    return success();
  if (!isRematerializable(def) || def->getNumRegions()) {
    if (isScalar)
      scalars.insert(value);
    if (isa<MemRefType>(value.getType()) &&
        cast<MemRefType>(value.getType()).getRank() > 0) {
      capturedBuffers.insert(value);
      return success();
    }
    return success(isScalar);
  }
  for (Value operand : def->getOperands())
    if (failed(collectRebuild(operand, ops, scalars)))
      return failure();
  ops.insert(def);
  return success();
}

void ParallelLoopOutliner::tryOutline(scf::ParallelOp loop) {
  if (loop.getNumResults() != 0)
    return;
  // A run-time upper bound (a symbolic batch) gives a trip count computed
  // before the loop and passed to the body like a captured scalar; its
  // estimate for the work and chunk heuristics is 16.
  SmallVector<int64_t> lbs, steps, trips;
  SmallVector<Value> tripValues;
  OpBuilder beforeLoop(loop);
  for (auto [lb, ub, step] : llvm::zip_equal(
           loop.getLowerBound(), loop.getUpperBound(), loop.getStep())) {
    std::optional<int64_t> l = getConstantIntValue(lb),
                           u = getConstantIntValue(ub),
                           s = getConstantIntValue(step);
    if (!l || !s || *s <= 0 || (u && *u <= *l))
      return;
    lbs.push_back(*l);
    steps.push_back(*s);
    trips.push_back(u ? llvm::divideCeil(*u - *l, *s) : 16);
    Value trip;
    if (!u) {
      Location at = loop.getLoc();
      Value span = arith::SubIOp::create(
          beforeLoop, at, ub,
          arith::ConstantIndexOp::create(beforeLoop, at, *l));
      trip = arith::CeilDivUIOp::create(
          beforeLoop, at, span,
          arith::ConstantIndexOp::create(beforeLoop, at, *s));
    }
    tripValues.push_back(trip);
  }
  int64_t iterations = 1;
  for (int64_t t : trips)
    iterations *= t;
  int64_t bodyWork = estimateWork(*loop.getBody());
  if (iterations < 2 || iterations * bodyWork < minWork)
    return;

  llvm::SetVector<Value> captured;
  getUsedValuesDefinedAbove(loop.getRegion(), captured);
  llvm::SetVector<Operation *> rebuild;
  llvm::SetVector<Value> scalars;
  capturedBuffers.clear();
  for (Value value : captured)
    if (failed(collectRebuild(value, rebuild, scalars)))
      return;
  // Run-time sized buffers: their metadata, the dynamic parts as scalars.
  SmallVector<CapturedBuffer> buffers;
  for (Value buffer : capturedBuffers) {
    auto meta = memref::ExtractStridedMetadataOp::create(beforeLoop,
                                                         loop.getLoc(), buffer);
    CapturedBuffer c{buffer, meta.getBaseBuffer(), meta.getOffset(),
                     llvm::to_vector_of<Value>(meta.getSizes()),
                     llvm::to_vector_of<Value>(meta.getStrides())};
    auto type = cast<MemRefType>(buffer.getType());
    auto [strides, offset] = type.getStridesAndOffset();
    if (ShapedType::isDynamic(offset))
      scalars.insert(c.offset);
    for (int64_t d = 0; d < type.getRank(); ++d) {
      if (type.isDynamicDim(d))
        scalars.insert(c.sizes[d]);
      if (ShapedType::isDynamic(strides[d]))
        scalars.insert(c.strides[d]);
    }
    buffers.push_back(c);
  }
  for (Value trip : tripValues)
    if (trip)
      scalars.insert(trip);

  // Distribute the leading dimensions, just enough of them for the pool;
  // the rest stay one loop nest per chunk item, which LLVM can vectorize.
  // A run-time dim (its estimate is 16) counts as enough when the body is
  // light: a copy or elementwise row then stays a loop over its last dims
  // instead of one chunk item per element.
  unsigned prefix = 0;
  int64_t chunks = 1;
  bool light = bodyWork < 256;
  bool runTimeDim = false;
  while (prefix < trips.size() && chunks < minChunks &&
         !(light && runTimeDim)) {
    runTimeDim |= tripValues[prefix] != nullptr;
    chunks *= trips[prefix++];
  }
  int64_t staticChunks = 1;
  for (unsigned d = 0; d < prefix; ++d)
    if (!tripValues[d])
      staticChunks *= trips[d];
  Value chunkCount =
      arith::ConstantIndexOp::create(beforeLoop, loop.getLoc(), staticChunks);
  for (unsigned d = 0; d < prefix; ++d)
    if (tripValues[d])
      chunkCount = arith::MulIOp::create(beforeLoop, loop.getLoc(), chunkCount,
                                         tripValues[d]);

  MLIRContext *ctx = entry.getContext();
  std::string id = std::to_string(counter++);
  SmallVector<Type> argTypes(entry.getArgumentTypes().drop_back());
  // Scalars of the enclosing loops travel in one-element buffers (the
  // launcher passes pointers), one per scalar, on the entry's stack.
  SmallVector<Value> scalarSlots;
  {
    OpBuilder atEntry = OpBuilder::atBlockBegin(&entry.getBody().front());
    for (Value scalar : scalars) {
      auto slotType = MemRefType::get({1}, scalar.getType());
      Value slot = memref::AllocaOp::create(atEntry, loop.getLoc(), slotType);
      Value zero = arith::ConstantIndexOp::create(beforeLoop, loop.getLoc(), 0);
      memref::StoreOp::create(beforeLoop, loop.getLoc(), scalar, slot,
                              ValueRange{zero});
      scalarSlots.push_back(slot);
      argTypes.push_back(slotType);
    }
  }
  for (const CapturedBuffer &c : buffers)
    argTypes.push_back(c.base.getType());
  Type index = IndexType::get(ctx);
  SmallVector<Type> bodyTypes{index, index};
  bodyTypes.append(argTypes);
  SmallVector<Type> launchTypes{index, runtime.getType()};
  launchTypes.append(argTypes);

  OpBuilder builder(entry);
  auto body =
      func::FuncOp::create(builder, loop.getLoc(), "__kiln_parallel_body_" + id,
                           FunctionType::get(ctx, bodyTypes, {}));
  body.setPrivate();
  buildBody(body, loop, rebuild.getArrayRef(), scalars.getArrayRef(), buffers,
            tripValues, lbs, steps, trips, prefix);
  auto launch =
      func::FuncOp::create(builder, loop.getLoc(), "__kiln_parallel_for_" + id,
                           FunctionType::get(ctx, launchTypes, {}));
  launch.setPrivate();

  builder.setInsertionPoint(loop);
  SmallVector<Value> operands{chunkCount, runtime};
  operands.append(entry.getArguments().drop_back().begin(),
                  entry.getArguments().drop_back().end());
  operands.append(scalarSlots.begin(), scalarSlots.end());
  for (const CapturedBuffer &c : buffers)
    operands.push_back(c.base);
  func::CallOp::create(builder, loop.getLoc(), launch, operands);
  loop.erase();
}

void ParallelLoopOutliner::buildBody(
    func::FuncOp body, scf::ParallelOp loop, ArrayRef<Operation *> rebuild,
    ArrayRef<Value> scalars, ArrayRef<CapturedBuffer> buffers,
    ArrayRef<Value> tripValues, ArrayRef<int64_t> lbs, ArrayRef<int64_t> steps,
    ArrayRef<int64_t> trips, unsigned prefix) {
  Block *block = body.addEntryBlock();
  OpBuilder b = OpBuilder::atBlockBegin(block);
  Location loc = loop.getLoc();
  IRMapping map;
  for (auto [from, to] : llvm::zip(entry.getArguments().drop_back(),
                                   block->getArguments().drop_front(2)))
    map.map(from, to);
  unsigned firstSlot = 2 + entry.getNumArguments() - 1;
  for (auto [i, scalar] : llvm::enumerate(scalars)) {
    Value zero = arith::ConstantIndexOp::create(b, loop.getLoc(), 0);
    map.map(scalar, memref::LoadOp::create(b, loop.getLoc(),
                                           block->getArgument(firstSlot + i),
                                           ValueRange{zero}));
  }
  // Run-time sized buffers, viewed again from their base.
  unsigned firstBuffer = firstSlot + scalars.size();
  for (auto [i, c] : llvm::enumerate(buffers)) {
    auto type = cast<MemRefType>(c.buffer.getType());
    auto [strides, offset] = type.getStridesAndOffset();
    auto mixed = [&](int64_t known, Value value) -> OpFoldResult {
      if (!ShapedType::isDynamic(known))
        return b.getIndexAttr(known);
      return map.lookup(value);
    };
    SmallVector<OpFoldResult> sizes, strideValues;
    for (int64_t d = 0; d < type.getRank(); ++d) {
      sizes.push_back(mixed(type.getDimSize(d), c.sizes[d]));
      strideValues.push_back(mixed(strides[d], c.strides[d]));
    }
    Value view = memref::ReinterpretCastOp::create(
        b, loc, type, block->getArgument(firstBuffer + i),
        mixed(offset, c.offset), sizes, strideValues);
    map.map(c.buffer, view);
  }
  for (Operation *op : rebuild)
    b.clone(*op, map);

  auto cst = [&](OpBuilder &builder, int64_t v) -> Value {
    return arith::ConstantIndexOp::create(builder, loc, v);
  };
  // The trip count of dim d in the body: a constant, or the passed scalar.
  auto trip = [&](OpBuilder &builder, unsigned d) -> Value {
    return tripValues[d] ? map.lookup(tripValues[d]) : cst(builder, trips[d]);
  };
  auto chunkLoop = scf::ForOp::create(b, loc, block->getArgument(0),
                                      block->getArgument(1), cst(b, 1));
  func::ReturnOp::create(b, loc);

  OpBuilder inner = OpBuilder::atBlockBegin(chunkLoop.getBody());
  // Delinearize the chunk item into the leading induction variables. The
  // outermost one is reduced modulo its trip count too, although the item is
  // in range: the bound tells LLVM how far each index goes, which it needs
  // to prove that the loop's stores and loads (often in the same arena)
  // never overlap and keep accumulators in registers (20% on ResNet-18).
  Value rest = chunkLoop.getInductionVar();
  SmallVector<Value> ivs(prefix);
  for (int d = int(prefix) - 1; d >= 0; --d) {
    Value position = arith::RemUIOp::create(inner, loc, rest, trip(inner, d));
    if (d > 0)
      rest = arith::DivUIOp::create(inner, loc, rest, trip(inner, d));
    Value scaled =
        arith::MulIOp::create(inner, loc, position, cst(inner, steps[d]));
    ivs[d] = arith::AddIOp::create(inner, loc, scaled, cst(inner, lbs[d]));
  }
  auto cloneBody = [&](OpBuilder &at, ValueRange allIvs) {
    for (auto [from, to] : llvm::zip_equal(loop.getInductionVars(), allIvs))
      map.map(from, to);
    for (Operation &op : loop.getBody()->without_terminator())
      at.clone(op, map);
  };
  if (prefix == trips.size()) {
    cloneBody(inner, ivs);
    return;
  }
  SmallVector<Value> innerLbs, innerUbs, innerSteps;
  for (unsigned d = prefix; d < trips.size(); ++d) {
    innerLbs.push_back(cst(inner, lbs[d]));
    innerUbs.push_back(
        tripValues[d] ? Value(arith::AddIOp::create(
                            inner, loc, cst(inner, lbs[d]),
                            arith::MulIOp::create(inner, loc, trip(inner, d),
                                                  cst(inner, steps[d]))))
                      : cst(inner, lbs[d] + trips[d] * steps[d]));
    innerSteps.push_back(cst(inner, steps[d]));
  }
  scf::ParallelOp::create(inner, loc, innerLbs, innerUbs, innerSteps,
                          [&](OpBuilder &at, Location, ValueRange innerIvs) {
                            SmallVector<Value> all(ivs);
                            all.append(innerIvs.begin(), innerIvs.end());
                            cloneBody(at, all);
                          });
}

namespace {
struct OutlineParallelLoopsPass
    : public kiln::impl::OutlineParallelLoopsBase<OutlineParallelLoopsPass> {
  using Base::Base;

  void runOnOperation() override {
    auto entry = getOperation().lookupSymbol<func::FuncOp>(entryName);
    if (!entry || entry.isExternal()) {
      getOperation().emitError()
          << "kiln-outline-parallel-loops: no entry function @" << entryName;
      return signalPassFailure();
    }
    MLIRContext *ctx = &getContext();
    unsigned argIndex = entry.getNumArguments();
    NamedAttribute marker(StringAttr::get(ctx, "kiln.runtime"),
                          UnitAttr::get(ctx));
    if (failed(entry.insertArgument(
            argIndex, MemRefType::get({0}, IntegerType::get(ctx, 8)),
            DictionaryAttr::get(ctx, marker), entry.getLoc()))) {
      entry.emitError("kiln-outline-parallel-loops: cannot add the runtime");
      return signalPassFailure();
    }
    ParallelLoopOutliner outliner(entry, entry.getArgument(argIndex), minWork,
                                  minChunks);
    // Top-level loops, and loops inside sequential loops and branches
    // (the static slices of a symbolic batch, kiln-slice-run-time-rows; the
    // steps of a run-time Loop, Scan or recurrence, an scf.while).
    SmallVector<scf::ParallelOp> loops;
    entry.walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (auto loop = dyn_cast<scf::ParallelOp>(op)) {
        loops.push_back(loop);
        return WalkResult::skip();
      }
      if (op != entry.getOperation() &&
          !isa<scf::ForOp, scf::IfOp, scf::WhileOp>(op) &&
          op->getNumRegions() > 0)
        return WalkResult::skip();
      return WalkResult::advance();
    });
    for (scf::ParallelOp loop : loops)
      outliner.tryOutline(loop);
  }
};
} // namespace
