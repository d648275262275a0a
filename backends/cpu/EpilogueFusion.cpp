//===- EpilogueFusion.cpp - Elementwise consumers in the register tiles ---===//
//
// A tiled contraction whose result has one use, an all-parallel
// linalg.generic (bias, activation, residual add, ...), applies that generic
// to its accumulators on the last K block, before the store:
//
//   %y = contraction ... -> [reshapes] -> %v
//   %z = linalg.generic ins(%v, %x, ...) { scalar arith/math }
//
// becomes, in every mr x nr register tile after the k loop,
//
//   scf.if %last_k_block {
//     %x_r = vector.transfer_read %x[.., row r, col] : vector<nr>  (or a
//            tensor.extract + vector.broadcast when %x is broadcast along N)
//     %z_r = <the generic's body on vector<nr> operands> (%c_r, %x_r, ...)
//     vector.transfer_write %z_r, %C[r, 0]
//   } else { vector.transfer_write %c_r, %C[r, 0] }
//
// and the generic's result is replaced by %v: the accumulator buffer holds
// the epilogue's values, the contraction's own result never reaches memory.
//
// The matcher takes any producer and the result dimension its kernel's
// lanes run along: the NHWC convolution kernels (TileNhwcConvolutions.cpp)
// use it with the channels, and apply the match with the same row-vector
// code (applyEpilogue, EpilogueTiles.cpp) as storeTile below.
//
// Operands are addressed in absolute coordinates of the contraction's
// result: the reshapes between the contraction and the generic (panel
// views, NCHW <-> [N, C, H*W]) group the result's dimensions into linear
// indices; an operand reads each group either entirely (collapsed into one
// dimension, read as a vector along N) or not at all (broadcast).
//
//===----------------------------------------------------------------------===//
#include "backends/cpu/ContractionCodegen.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Dominance.h"

using namespace mlir;
using namespace mlir::kiln;

namespace {
/// A dimension of a value derived from the contraction's result: piece
/// `piece` of group `group` (pieces of a group are row-major parts of its
/// linear index).
struct DimRef {
  unsigned group, piece;
};

struct GroupState {
  SmallVector<Epilogue::Group> groups;
  SmallVector<unsigned> pieces; ///< number of pieces per group
  SmallVector<DimRef> dims;     ///< of the current value
};

bool soleDim(const GroupState &s, unsigned d) {
  return s.pieces[s.dims[d].group] == 1;
}

LogicalResult applyCollapse(GroupState &s, tensor::CollapseShapeOp op) {
  SmallVector<DimRef> dims;
  for (const ReassociationIndices &set : op.getReassociationIndices()) {
    if (set.size() == 1) {
      dims.push_back(s.dims[set[0]]);
      continue;
    }
    // All pieces of one group, in order: that group again.
    unsigned g = s.dims[set[0]].group;
    bool whole = s.pieces[g] == set.size();
    for (auto [i, d] : llvm::enumerate(set))
      whole &= s.dims[d].group == g && s.dims[d].piece == i;
    if (whole) {
      s.pieces[g] = 1;
      dims.push_back({g, 0});
      continue;
    }
    // Whole, unsliced groups: one group over all their result dimensions.
    Epilogue::Group merged{{}, 1, 1};
    for (int64_t d : set) {
      if (!soleDim(s, d))
        return failure();
      Epilogue::Group &part = s.groups[s.dims[d].group];
      if (part.valid != part.size)
        return failure();
      merged.accDims.append(part.accDims);
      merged.size *= part.size;
    }
    merged.valid = merged.size;
    s.groups.push_back(merged);
    s.pieces.push_back(1);
    dims.push_back({unsigned(s.groups.size() - 1), 0});
  }
  s.dims = dims;
  return success();
}

LogicalResult applyExpand(GroupState &s, tensor::ExpandShapeOp op) {
  SmallVector<DimRef> dims;
  ArrayRef<int64_t> shape = op.getResultType().getShape();
  for (auto [src, set] : llvm::enumerate(op.getReassociationIndices())) {
    if (set.size() == 1) {
      dims.push_back(s.dims[src]);
      continue;
    }
    if (!soleDim(s, src))
      return failure();
    unsigned g = s.dims[src].group;
    int64_t product = 1;
    for (int64_t d : set)
      product *= shape[d];
    if (product != s.groups[g].valid)
      return failure();
    s.pieces[g] = set.size();
    for (unsigned i = 0; i < set.size(); ++i)
      dims.push_back({g, i});
  }
  s.dims = dims;
  return success();
}

/// Offsets 0 and strides 1; a dimension that shrinks must be a whole group.
LogicalResult applySlice(GroupState &s, tensor::ExtractSliceOp op) {
  if (op.getSourceType().getRank() != op.getResultType().getRank() ||
      !op.hasUnitStride() || !op.hasZeroOffset() ||
      !op.getResultType().hasStaticShape())
    return failure();
  for (auto [d, size] : llvm::enumerate(op.getResultType().getShape())) {
    if (size == op.getSourceType().getShape()[d])
      continue;
    if (!soleDim(s, d))
      return failure();
    s.groups[s.dims[d].group].valid = size;
  }
  return success();
}

/// The body computes on scalars with ops that apply lane by lane.
bool vectorizableBody(linalg::GenericOp consumer, std::string &why) {
  for (Operation &op : consumer.getBody()->without_terminator()) {
    bool scalar = llvm::all_of(op.getResultTypes(),
                               [](Type t) { return t.isIntOrIndexOrFloat(); });
    if (isa<arith::ConstantOp>(op) && scalar)
      continue;
    if (!scalar || op.getNumRegions() != 0 ||
        !OpTrait::hasElementwiseMappableTraits(&op)) {
      why = "its body has " + op.getName().getStringRef().str();
      return false;
    }
    for (Value v : op.getOperands())
      if (!v.getType().isIntOrIndexOrFloat()) {
        why = "its body reads a non-scalar value";
        return false;
      }
  }
  return true;
}
} // namespace

FailureOr<Epilogue> mlir::kiln::matchEpilogue(RewriterBase &rewriter,
                                              Operation *op, unsigned laneDim,
                                              std::string &why) {
  if (op->getNumResults() != 1) {
    why = "it has several results";
    return failure();
  }
  auto accType = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!accType) {
    why = "its result is not a ranked tensor";
    return failure();
  }
  GroupState s;
  for (auto [d, size] : llvm::enumerate(accType.getShape())) {
    s.groups.push_back({{unsigned(d)}, size, size});
    s.pieces.push_back(1);
    s.dims.push_back({unsigned(d), 0});
  }
  // Reshapes and the slice of a panel view, each with one use.
  Value v = op->getResult(0);
  linalg::GenericOp consumer;
  while (true) {
    if (!v.hasOneUse()) {
      why = "the result has " + std::to_string(llvm::range_size(v.getUses())) +
            " uses";
      return failure();
    }
    Operation *user = *v.getUsers().begin();
    // Run-time extents (an NHWC image of any size) are read as they are:
    // the groups' linear indices need static sizes.
    if (!accType.hasStaticShape() && !isa<linalg::GenericOp>(user)) {
      why = "its result has run-time extents and is reshaped by " +
            user->getName().getStringRef().str();
      return failure();
    }
    LogicalResult step = success();
    if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(user))
      step = applyCollapse(s, collapse);
    else if (auto expand = dyn_cast<tensor::ExpandShapeOp>(user))
      step = applyExpand(s, expand);
    else if (auto slice = dyn_cast<tensor::ExtractSliceOp>(user))
      step = applySlice(s, slice);
    else if ((consumer = dyn_cast<linalg::GenericOp>(user)))
      break;
    else {
      why = "its user " + user->getName().getStringRef().str() +
            " is not an elementwise linalg.generic";
      return failure();
    }
    if (failed(step)) {
      why = "the result is reshaped by " +
            user->getName().getStringRef().str() +
            " in a way tiles cannot "
            "address";
      return failure();
    }
    v = user->getResult(0);
  }

  // The consumer: all parallel, one f32 result of the shape of %v, read
  // through identity maps, its init not read.
  auto vType = cast<RankedTensorType>(v.getType());
  OpOperand *read = &*v.getUses().begin();
  if (consumer.getNumLoops() != consumer.getNumParallelLoops() ||
      consumer.getNumDpsInits() != 1 || !consumer.isDpsInput(read)) {
    why = "the consumer is not an elementwise generic with one result";
    return failure();
  }
  if (!consumer.getMatchingIndexingMap(read).isIdentity() ||
      !consumer.getIndexingMapsArray().back().isIdentity()) {
    why = "the consumer does not read the result through an identity map";
    return failure();
  }
  if (consumer.getResult(0).getType() != vType) {
    why = "the consumer's result is not f32 of the contraction's shape";
    return failure();
  }
  if (consumer.payloadUsesValueFromOperand(consumer.getDpsInitOperand(0))) {
    why = "the consumer reads its init";
    return failure();
  }
  if (!vectorizableBody(consumer, why))
    return failure();

  Epilogue epi;
  epi.consumer = consumer;
  epi.resultInput = read->getOperandNumber();
  epi.groups = s.groups;
  epi.fullShape.assign(accType.getShape().begin(), accType.getShape().end());
  // The lane dimension must be the last of its group, so a register tile's
  // lanes are consecutive in the group's linear index.
  for (auto [g, group] : llvm::enumerate(epi.groups))
    if (llvm::is_contained(group.accDims, laneDim)) {
      if (group.accDims.back() != laneDim) {
        why = "the result's lane dimension is not innermost in its reshapes";
        return failure();
      }
      epi.nGroup = g;
    }

  DominanceInfo dominance(op->getParentOp());
  struct Plan {
    SmallVector<ReassociationIndices> collapse;
    SmallVector<unsigned> groups;
  };
  SmallVector<std::optional<Plan>> plans;
  for (OpOperand *input : consumer.getDpsInputOperands()) {
    if (input == read) {
      plans.push_back(std::nullopt);
      continue;
    }
    Value x = input->get();
    auto xType = dyn_cast<RankedTensorType>(x.getType());
    AffineMap map = consumer.getMatchingIndexingMap(input);
    if (!xType || !map.isProjectedPermutation()) {
      why = "operand " + std::to_string(input->getOperandNumber()) +
            " is not a tensor read through a broadcast map";
      return failure();
    }
    if (!dominance.properlyDominates(x, op)) {
      why = "operand " + std::to_string(input->getOperandNumber()) +
            " is computed after the contraction";
      return failure();
    }
    // Dimensions in order, each group read whole or not at all.
    Plan plan;
    int64_t last = -1;
    for (auto [i, expr] : llvm::enumerate(map.getResults())) {
      unsigned d = cast<AffineDimExpr>(expr).getPosition();
      if (int64_t(d) <= last) {
        why = "operand " + std::to_string(input->getOperandNumber()) +
              " is read through a transposing map";
        return failure();
      }
      last = d;
      DimRef ref = s.dims[d];
      if (!plan.groups.empty() && plan.groups.back() == ref.group &&
          ref.piece == plan.collapse.back().size()) {
        plan.collapse.back().push_back(i);
        continue;
      }
      if (ref.piece != 0 || llvm::is_contained(plan.groups, ref.group)) {
        why = "operand " + std::to_string(input->getOperandNumber()) +
              " reads part of a reshaped dimension";
        return failure();
      }
      plan.groups.push_back(ref.group);
      plan.collapse.push_back({int64_t(i)});
    }
    for (auto [set, g] : llvm::zip_equal(plan.collapse, plan.groups))
      if (set.size() != s.pieces[g]) {
        why = "operand " + std::to_string(input->getOperandNumber()) +
              " reads part of a reshaped dimension";
        return failure();
      }
    plans.push_back(plan);
  }

  // Matched: operands with each group's dimensions collapsed into one.
  rewriter.setInsertionPoint(op);
  for (auto [input, plan] :
       llvm::zip_equal(consumer.getDpsInputOperands(), plans)) {
    if (!plan) {
      epi.operands.push_back({});
      continue;
    }
    Value x = input->get();
    if (plan->collapse.size() !=
        size_t(cast<ShapedType>(x.getType()).getRank()))
      x = tensor::CollapseShapeOp::create(rewriter, op->getLoc(), x,
                                          plan->collapse);
    epi.operands.push_back({x, plan->groups});
  }
  return epi;
}

FailureOr<Epilogue> mlir::kiln::matchEpilogue(RewriterBase &rewriter,
                                              linalg::LinalgOp op,
                                              const ContractionLoops &loops,
                                              std::string &why) {
  AffineMap accMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  unsigned nDim =
      *accMap.getResultPosition(getAffineDimExpr(loops.n, op.getContext()));
  FailureOr<Epilogue> epi =
      matchEpilogue(rewriter, op.getOperation(), nDim, why);
  if (succeeded(epi))
    epi->kSize = op.getStaticLoopRanges()[loops.k];
  return epi;
}

namespace {
/// Absolute offsets of a tile of the accumulator: the offsets of the slices
/// it was cut from, through the iteration arguments of the tile loops.
SmallVector<Value> absoluteOffsets(OpBuilder &b, Location loc, Value tile,
                                   bool throughLoops) {
  auto type = cast<ShapedType>(tile.getType());
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  SmallVector<Value> offsets(type.getRank(), zero);
  while (true) {
    if (auto slice = tile.getDefiningOp<tensor::ExtractSliceOp>()) {
      for (auto [i, ofr] : llvm::enumerate(slice.getMixedOffsets()))
        offsets[i] = b.createOrFold<arith::AddIOp>(
            loc, offsets[i], getValueOrCreateConstantIndexOp(b, loc, ofr));
      tile = slice.getSource();
      continue;
    }
    auto arg = dyn_cast<BlockArgument>(tile);
    if (!throughLoops || !arg)
      break;
    auto loop = dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp());
    if (!loop || !loop.getTiedLoopInit(arg))
      break;
    tile = loop.getTiedLoopInit(arg)->get();
  }
  return offsets;
}

} // namespace

Value mlir::kiln::storeTile(RewriterBase &rewriter, Location loc,
                            linalg::LinalgOp tile,
                            const ContractionLoops &loops,
                            const Epilogue *epilogue, ArrayRef<Value> rows,
                            ArrayRef<Value> accs, int64_t nr, Value kExtent,
                            StoreRows store) {
  if (!epilogue)
    return store(rewriter, loc, accs);
  Value acc = tile.getDpsInitOperand(0)->get();
  AffineMap accMap = tile.getMatchingIndexingMap(tile.getDpsInitOperand(0));
  unsigned mDim =
      *accMap.getResultPosition(getAffineDimExpr(loops.m, tile.getContext()));

  // Last K block: the k offset of A's tile plus its k extent is K.
  Value last;
  if (std::optional<int64_t> k = getConstantIntValue(kExtent);
      !k || *k != epilogue->kSize) {
    // An input indexed by the K loop itself (A; B for bf16 k-pairs and int8
    // k-quads, whose A is indexed by 2 k + pair or 4 k + element).
    AffineExpr kExpr = getAffineDimExpr(loops.k, tile.getContext());
    OpOperand *input = nullptr;
    std::optional<unsigned> kPos;
    SmallVector<OpOperand *> inputs = tile.getDpsInputOperands();
    if (tile.getMatchingIndexingMap(inputs[0]).isFunctionOfDim(loops.n))
      std::swap(inputs[0], inputs[1]);
    for (OpOperand *candidate : inputs)
      if ((kPos = tile.getMatchingIndexingMap(candidate).getResultPosition(
               kExpr))) {
        input = candidate;
        break;
      }
    Value kOffset = absoluteOffsets(rewriter, loc, input->get(), false)[*kPos];
    Value end = arith::AddIOp::create(rewriter, loc, kOffset, kExtent);
    Value kSize =
        arith::ConstantIndexOp::create(rewriter, loc, epilogue->kSize);
    last = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq, end,
                                 kSize);
  }

  auto compute = [&](OpBuilder &b, Location loc) {
    SmallVector<Value> offsets = absoluteOffsets(b, loc, acc, true);
    SmallVector<Value> results;
    for (auto [row, c] : llvm::zip_equal(rows, accs)) {
      SmallVector<Value> coords(offsets);
      coords[mDim] = arith::AddIOp::create(b, loc, coords[mDim], row);
      results.push_back(applyEpilogue(b, loc, *epilogue, c, coords, nr));
    }
    return results;
  };

  if (!last)
    return store(rewriter, loc, compute(rewriter, loc));
  auto branch = scf::IfOp::create(
      rewriter, loc, last,
      [&](OpBuilder &b, Location loc) {
        scf::YieldOp::create(b, loc, store(b, loc, compute(b, loc)));
      },
      [&](OpBuilder &b, Location loc) {
        scf::YieldOp::create(b, loc, store(b, loc, accs));
      });
  return branch.getResult(0);
}
