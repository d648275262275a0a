//===- ConcatInPlace.cpp - concat inputs computed in their result slice ---===//
//
// kiln.concat lowers to `tensor.empty` + one `tensor.insert_slice` per input.
// Left alone, each input is computed into its own buffer and copied into the
// result. This pass makes each producer write straight into its slice:
//
//   1. follow the insert's source back through destination-passing-style
//      ops (the value each op writes into: linalg outs, fill, broadcast,
//      insert_slice dest) and reshapes to the `tensor.empty` that buffer
//      comes from;
//   2. sink the ops on that path (and what feeds them from it) to just
//      before the insert, so the concat's partial result dominates them;
//   3. replace that `tensor.empty` with an `extract_slice` of the insert's
//      destination at the insert's offsets (reshaped back through the
//      reshapes met on the way: a 3-D matmul writes a collapsed view).
//
// One-shot bufferization then sees matching extract_slice/insert_slice
// pairs and writes in place: no allocation and no copy for that input. A
// concat of concats works the same way, the inner concat's whole chain
// being the producer. Inputs that are function arguments, constants, used
// elsewhere, or not made by destination-passing ops keep their copy.
//
// Only inserts located at an ONNX Concat node (`FusedLoc<"Concat">`, as the
// importer makes them) are rewritten, so the count means what it says.
// Every input written in place counts once as `concat_in_place` in the
// report and is logged under KILN_LOGS=fusion with the ONNX node names.
//
//===----------------------------------------------------------------------===//
#include "passes/lowering/Passes.h"

#include "compiler/logging/Logging.h"
#include "compiler/logging/Report.h"
#include "dialects/kiln/NodeLocation.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_CONCATINPLACE
#include "passes/lowering/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;

namespace {

/// Whether `loc` is an ONNX Concat node's (FusedLoc<"Concat">[...]).
bool isConcatLoc(Location loc) {
  auto fused = dyn_cast<FusedLoc>(loc);
  auto type =
      fused ? dyn_cast_or_null<StringAttr>(fused.getMetadata()) : StringAttr();
  return type && type.getValue() == "Concat";
}

/// The `tensor.empty` that `v` is ultimately written into, following tied
/// DPS inits (linalg outs, fill, broadcast, insert_slice dest) and reshapes
/// (a 3-D matmul is a 2-D one between reshapes), collected outermost first
/// in `reshapes`; null if the chain leaves `block` or meets anything else.
tensor::EmptyOp findEmptyRoot(Value v, Block *block,
                              SmallVectorImpl<Operation *> &reshapes) {
  while (true) {
    auto result = dyn_cast<OpResult>(v);
    if (!result || result.getOwner()->getBlock() != block)
      return nullptr;
    Operation *owner = result.getOwner();
    if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(owner)) {
      reshapes.push_back(owner);
      v = owner->getOperand(0);
      continue;
    }
    auto dps = dyn_cast<DestinationStyleOpInterface>(owner);
    if (!dps || !dps.hasPureTensorSemantics())
      return nullptr;
    OpOperand *init = dps.getTiedOpOperand(result);
    if (!init)
      return nullptr;
    if (auto empty = init->get().getDefiningOp<tensor::EmptyOp>())
      return empty;
    v = init->get();
  }
}

/// `slice` (shaped like the insert's source) reshaped back through
/// `reshapes` to the shape of the empty tensor it replaces.
Value undoReshapes(OpBuilder &b, Location loc, Value slice,
                   ArrayRef<Operation *> reshapes) {
  for (Operation *op : reshapes) {
    if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op))
      slice = tensor::CollapseShapeOp::create(
          b, loc, expand.getSrcType(), slice, expand.getReassociationIndices());
    else if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(op))
      slice =
          tensor::ExpandShapeOp::create(b, loc, collapse.getSrcType(), slice,
                                        collapse.getReassociationIndices());
  }
  return slice;
}

/// Rewrites one insert so its source is computed in place; false if it
/// cannot.
bool writeInPlace(tensor::InsertSliceOp insert) {
  Block *block = insert->getBlock();
  Value source = insert.getSource();
  if (!source.hasOneUse() ||
      insert.getSourceType().getRank() != insert.getType().getRank())
    return false;
  SmallVector<Operation *> reshapes;
  tensor::EmptyOp empty = findEmptyRoot(source, block, reshapes);
  if (!empty)
    return false;

  // Ops reachable from the empty tensor before the insert...
  auto inBlockBeforeInsert = [&](Operation *op) -> Operation * {
    Operation *inBlock = block->findAncestorOpInBlock(*op);
    if (!inBlock || inBlock == insert || !inBlock->isBeforeInBlock(insert))
      return nullptr;
    return inBlock;
  };
  llvm::SmallPtrSet<Operation *, 16> forward;
  SmallVector<Operation *> work;
  for (Operation *user : empty->getUsers())
    if (Operation *op = inBlockBeforeInsert(user))
      if (forward.insert(op).second)
        work.push_back(op);
  while (!work.empty()) {
    Operation *op = work.pop_back_val();
    for (Operation *user : op->getUsers())
      if (Operation *next = inBlockBeforeInsert(user))
        if (forward.insert(next).second)
          work.push_back(next);
  }
  // ...that the source depends on: the ops that compute it into the empty.
  llvm::SmallPtrSet<Operation *, 16> path;
  work = {source.getDefiningOp()};
  path.insert(source.getDefiningOp());
  while (!work.empty()) {
    Operation *op = work.pop_back_val();
    op->walk([&](Operation *nested) {
      for (Value operand : nested->getOperands()) {
        Operation *def = operand.getDefiningOp();
        if (!def)
          continue;
        Operation *inBlock = block->findAncestorOpInBlock(*def);
        if (inBlock && forward.contains(inBlock) && path.insert(inBlock).second)
          work.push_back(inBlock);
      }
    });
  }
  // The destination must exist before the moved ops.
  if (Operation *dest = insert.getDest().getDefiningOp())
    if (path.contains(block->findAncestorOpInBlock(*dest)))
      return false;
  // Sinking `path` to the insert is legal if nothing before the insert
  // outside it uses its results.
  for (Operation *op : path)
    for (Operation *user : op->getUsers()) {
      Operation *inBlock = block->findAncestorOpInBlock(*user);
      if (inBlock && !path.contains(inBlock) && inBlock != insert &&
          inBlock->isBeforeInBlock(insert))
        return false;
    }

  SmallVector<Operation *> ordered(path.begin(), path.end());
  llvm::sort(ordered,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  for (Operation *op : ordered)
    op->moveBefore(insert);
  OpBuilder b(ordered.front());
  Value slice = tensor::ExtractSliceOp::create(
      b, insert.getLoc(), insert.getSourceType(), insert.getDest(),
      insert.getMixedOffsets(), insert.getMixedSizes(),
      insert.getMixedStrides());
  slice = undoReshapes(b, insert.getLoc(), slice, reshapes);
  // Each reshape undone gives back its source type; the last one's source
  // is the DPS result written into the empty tensor, hence its type.
  assert(slice.getType() == empty.getType() && "reshape chain mismatch");
  empty.getResult().replaceUsesWithIf(slice, [&](OpOperand &use) {
    Operation *owner = block->findAncestorOpInBlock(*use.getOwner());
    return owner && path.contains(owner);
  });
  if (empty->use_empty())
    empty->erase();
  return true;
}

struct ConcatInPlacePass
    : public kiln::impl::ConcatInPlaceBase<ConcatInPlacePass> {
  using Base::Base;

  void runOnOperation() override {
    // Program order: an inner concat is rewritten before the outer one
    // moves it.
    SmallVector<tensor::InsertSliceOp> inserts;
    getOperation().walk([&](tensor::InsertSliceOp op) {
      if (op.hasPureTensorSemantics() && isConcatLoc(op.getLoc()))
        inserts.push_back(op);
    });
    for (tensor::InsertSliceOp insert : inserts) {
      std::string producer =
          insert.getSource().getDefiningOp()
              ? onnxNodeName(insert.getSource().getDefiningOp()->getLoc())
              : "a function argument";
      if (!writeInPlace(insert)) {
        KILN_LOG("fusion", Debug)
            << "concat '" << onnxNodeName(insert.getLoc()) << "': input from '"
            << producer << "' is copied\n";
        continue;
      }
      KILN_LOG("fusion", Info)
          << "concat '" << onnxNodeName(insert.getLoc()) << "': '" << producer
          << "' writes its slice in place\n";
      report::count("concat_in_place");
    }
  }
};
} // namespace
