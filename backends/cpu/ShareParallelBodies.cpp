//===- ShareParallelBodies.cpp - One body for loops that differ in offsets ===//
//
// kiln-outline-parallel-loops gives every parallel loop its own body, which
// rebuilds its buffers as constant byte offsets from the entry's arena and
// weights pointers. The layers of a transformer or a ResNet stage are the
// same loops on different buffers: after lowering, their bodies differ only
// in the constants of `llvm.getelementptr %arg[C]`, and LLVM optimizes and
// emits each copy again (ViT-B/16: 249 bodies, 36 distinct up to offsets;
// LLVM took 19 of the 28 s its compile took).
//
// Bodies equal up to those offsets become one shared function that takes
// the offsets that differ as trailing i64 arguments; each body becomes a
// call of it with its own constants. Offsets equal in every member stay
// constants, so LLVM still sees those buffers as disjoint.
//
//===----------------------------------------------------------------------===//
#include "backends/cpu/Passes.h"

#include "compiler/logging/Logging.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/IRMapping.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/Hashing.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_SHAREPARALLELBODIES
#include "backends/cpu/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;

namespace {
/// A GEP whose offset may differ between bodies: one constant index from an
/// argument of the function.
std::optional<int32_t> argumentOffset(Operation *op) {
  auto gep = dyn_cast<LLVM::GEPOp>(op);
  if (!gep || !gep.getDynamicIndices().empty() ||
      gep.getRawConstantIndices().size() != 1 ||
      !isa<BlockArgument>(gep.getBase()) ||
      !isa<LLVM::LLVMFuncOp>(
          cast<BlockArgument>(gep.getBase()).getOwner()->getParentOp()))
    return std::nullopt;
  return gep.getRawConstantIndices()[0];
}

/// Everything an op carries besides operands, types and regions: its
/// properties (flags such as `inbounds` or `nsw` are properties that
/// getAttrDictionary leaves out) and discardable attributes; without the
/// offset of an argument GEP, and without a function's name.
DictionaryAttr attributesOf(Operation *op) {
  NamedAttrList all(op->getDiscardableAttrDictionary());
  if (Attribute props = op->getPropertiesAsAttribute()) {
    if (auto dict = dyn_cast<DictionaryAttr>(props))
      all.append(dict.getValue());
    else
      all.append("kiln.properties", props);
  }
  if (argumentOffset(op))
    all.erase(LLVM::GEPOp::getRawConstantIndicesAttrName(op->getName()));
  if (isa<LLVM::LLVMFuncOp>(op))
    all.erase(SymbolTable::getSymbolAttrName());
  return all.getDictionary(op->getContext());
}

/// An outlined body this pass may share: defined, void, fixed arguments.
bool isShareableBody(LLVM::LLVMFuncOp func) {
  return !func.isExternal() &&
         func.getName().starts_with("__kiln_parallel_body_") &&
         isa<LLVM::LLVMVoidType>(func.getFunctionType().getReturnType()) &&
         !func.getFunctionType().isVarArg();
}

/// Op names, types and attributes in walk order (offsets left out).
llvm::hash_code structuralHash(LLVM::LLVMFuncOp func) {
  llvm::hash_code hash = llvm::hash_value(0);
  func.walk<WalkOrder::PreOrder>([&](Operation *op) {
    hash = llvm::hash_combine(hash, op->getName().getAsOpaquePointer(),
                              attributesOf(op).getAsOpaquePointer(),
                              op->getNumOperands(), op->getNumRegions());
  });
  return hash;
}

/// Whether `b` is `a` up to the offsets of argument GEPs; `offsets` gets
/// b's offsets in a's walk order.
bool sameUpToOffsets(LLVM::LLVMFuncOp a, LLVM::LLVMFuncOp b,
                     SmallVectorImpl<int32_t> &offsets) {
  // The function type, argument attributes, memory effects, ...
  if (attributesOf(a) != attributesOf(b))
    return false;
  // First the structure, mapping blocks, block arguments and results; then
  // the operands and successors (a block may use values of a block listed
  // after it).
  IRMapping map;
  SmallVector<std::pair<Operation *, Operation *>> pairs;
  std::function<bool(Region &, Region &)> matchRegion = [&](Region &x,
                                                            Region &y) {
    if (x.getBlocks().size() != y.getBlocks().size())
      return false;
    for (auto [bx, by] : llvm::zip(x, y)) {
      if (bx.getNumArguments() != by.getNumArguments() ||
          bx.getOperations().size() != by.getOperations().size())
        return false;
      map.map(&bx, &by);
      for (auto [ax, ay] : llvm::zip(bx.getArguments(), by.getArguments())) {
        if (ax.getType() != ay.getType())
          return false;
        map.map(ax, ay);
      }
      for (auto [ox, oy] : llvm::zip(bx, by)) {
        if (ox.getName() != oy.getName() ||
            ox.getNumOperands() != oy.getNumOperands() ||
            ox.getNumSuccessors() != oy.getNumSuccessors() ||
            ox.getNumRegions() != oy.getNumRegions() ||
            ox.getResultTypes() != oy.getResultTypes() ||
            attributesOf(&ox) != attributesOf(&oy))
          return false;
        std::optional<int32_t> ex = argumentOffset(&ox),
                               ey = argumentOffset(&oy);
        if (ex.has_value() != ey.has_value())
          return false;
        if (ey)
          offsets.push_back(*ey);
        map.map(ox.getResults(), oy.getResults());
        pairs.push_back({&ox, &oy});
        for (auto [rx, ry] : llvm::zip(ox.getRegions(), oy.getRegions()))
          if (!matchRegion(rx, ry))
            return false;
      }
    }
    return true;
  };
  if (!matchRegion(a.getBody(), b.getBody()))
    return false;
  for (auto [ox, oy] : pairs) {
    for (auto [vx, vy] : llvm::zip(ox->getOperands(), oy->getOperands()))
      if (map.lookupOrNull(vx) != vy)
        return false;
    for (auto [sx, sy] : llvm::zip(ox->getSuccessors(), oy->getSuccessors()))
      if (map.lookupOrNull(sx) != sy)
        return false;
  }
  return true;
}

/// The argument GEPs of `func` in walk order.
SmallVector<LLVM::GEPOp> argumentGeps(LLVM::LLVMFuncOp func) {
  SmallVector<LLVM::GEPOp> geps;
  func.walk<WalkOrder::PreOrder>([&](LLVM::GEPOp gep) {
    if (argumentOffset(gep))
      geps.push_back(gep);
  });
  return geps;
}

struct Group {
  SmallVector<LLVM::LLVMFuncOp> members;
  SmallVector<SmallVector<int32_t>> offsets; // per member, in walk order
};

struct ShareParallelBodiesPass
    : public kiln::impl::ShareParallelBodiesBase<ShareParallelBodiesPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    llvm::DenseMap<llvm::hash_code, SmallVector<Group>> buckets;
    SmallVector<std::pair<llvm::hash_code, unsigned>> order;
    for (auto func : module.getOps<LLVM::LLVMFuncOp>()) {
      if (!isShareableBody(func))
        continue;
      llvm::hash_code hash = structuralHash(func);
      SmallVector<Group> &groups = buckets[hash];
      bool placed = false;
      for (Group &group : groups) {
        SmallVector<int32_t> offsets;
        if (!sameUpToOffsets(group.members.front(), func, offsets))
          continue;
        group.members.push_back(func);
        group.offsets.push_back(std::move(offsets));
        placed = true;
        break;
      }
      if (placed)
        continue;
      SmallVector<int32_t> own;
      for (LLVM::GEPOp gep : argumentGeps(func))
        own.push_back(*argumentOffset(gep));
      order.push_back({hash, static_cast<unsigned>(groups.size())});
      groups.push_back({{func}, {std::move(own)}});
    }
    unsigned shared = 0, members = 0;
    for (auto [hash, index] : order) {
      Group &group = buckets[hash][index];
      if (group.members.size() < 2)
        continue;
      share(group, shared++, symbols);
      members += group.members.size();
    }
    KILN_LOG("codegen", Info)
        << "shared " << members << " parallel loop bodies as " << shared
        << " functions (" << order.size() - shared << " kept their own)\n";
  }

  void share(Group &group, unsigned id, SymbolTable &symbols) {
    LLVM::LLVMFuncOp first = group.members.front();
    MLIRContext *ctx = first.getContext();
    // Offsets that differ between members become arguments.
    SmallVector<unsigned> varying;
    for (unsigned i = 0, e = group.offsets.front().size(); i < e; ++i)
      if (llvm::any_of(group.offsets, [&](ArrayRef<int32_t> o) {
            return o[i] != group.offsets.front()[i];
          }))
        varying.push_back(i);

    auto body = cast<LLVM::LLVMFuncOp>(first->clone());
    body.setName(("__kiln_parallel_shared_" + Twine(id)).str());
    symbols.insert(body, first->getIterator()); // renamed if taken
    auto i64 = IntegerType::get(ctx, 64);
    unsigned numArgs = body.getNumArguments();
    LLVM::LLVMFunctionType type = body.getFunctionType();
    SmallVector<Type> params(type.getParams());
    params.append(varying.size(), i64);
    body.setFunctionType(LLVM::LLVMFunctionType::get(type.getReturnType(),
                                                     params, type.isVarArg()));
    for (size_t n = 0; n < varying.size(); ++n)
      body.getBody().front().addArgument(i64, body.getLoc());
    if (ArrayAttr argAttrs = body.getArgAttrsAttr()) {
      SmallVector<Attribute> extended(argAttrs.begin(), argAttrs.end());
      extended.append(varying.size(), DictionaryAttr::get(ctx, {}));
      body.setArgAttrsAttr(ArrayAttr::get(ctx, extended));
    }
    SmallVector<LLVM::GEPOp> geps = argumentGeps(body);
    for (auto [n, i] : llvm::enumerate(varying)) {
      LLVM::GEPOp gep = geps[i];
      OpBuilder at(gep);
      auto dynamic = LLVM::GEPOp::create(
          at, gep.getLoc(), gep.getType(), gep.getElemType(), gep.getBase(),
          ValueRange{body.getArgument(numArgs + n)}, gep.getNoWrapFlags());
      dynamic->setDiscardableAttrs(gep->getDiscardableAttrDictionary());
      gep.replaceAllUsesWith(dynamic.getResult());
      gep.erase();
    }

    for (auto [member, offsets] : llvm::zip(group.members, group.offsets)) {
      Region &region = member.getBody();
      region.dropAllReferences();
      region.getBlocks().clear();
      Block *entry = new Block();
      region.push_back(entry);
      for (Type type : member.getArgumentTypes())
        entry->addArgument(type, member.getLoc());
      OpBuilder at = OpBuilder::atBlockBegin(entry);
      SmallVector<Value> args(entry->getArguments());
      for (unsigned i : varying)
        args.push_back(LLVM::ConstantOp::create(
            at, member.getLoc(), i64, at.getI64IntegerAttr(offsets[i])));
      LLVM::CallOp::create(at, member.getLoc(), body, args);
      LLVM::ReturnOp::create(at, member.getLoc(), ValueRange{});
    }
  }
};
} // namespace
