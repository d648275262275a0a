//===- DedupeKernels.cpp - One kernel for launches that differ in offsets -===//
//
// A transformer's layers repeat the same kernels; after outlining, each
// layer's copy differs from the others only in the byte offsets of the
// views it takes of the arena and the weights. Those offsets become kernel
// arguments, and kernels that are then the same become one, so the device
// code generator and the assembler see each kernel once.
//
//===----------------------------------------------------------------------===//
#include "backends/gpu/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/raw_ostream.h"

#include <limits>

namespace mlir::kiln {
#define GEN_PASS_DEF_DEDUPEKERNELS
#include "backends/gpu/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;

namespace {
/// Makes the constant byte shift of every view the kernel takes of one of
/// its buffers an index argument of the kernel (appended, in walk order)
/// and returns the shifts. Constants left unused go; the rest move to the
/// top of the body in a fixed order, so that two kernels that differ only
/// in their offsets print the same.
SmallVector<int64_t> parameterizeViewShifts(gpu::GPUFuncOp func) {
  SmallVector<int64_t> shifts;
  Block &entry = func.getBody().front();
  SmallVector<memref::ViewOp> views;
  func.walk([&](memref::ViewOp view) {
    APInt shift;
    auto source = dyn_cast<BlockArgument>(view.getSource());
    if (source && source.getOwner() == &entry &&
        matchPattern(view.getByteShift(), m_ConstantInt(&shift)))
      views.push_back(view);
  });
  Type index = IndexType::get(func.getContext());
  for (memref::ViewOp view : views) {
    APInt shift;
    (void)matchPattern(view.getByteShift(), m_ConstantInt(&shift));
    shifts.push_back(shift.getSExtValue());
    unsigned position = func.getNumArguments();
    (void)func.insertArgument(position, index, DictionaryAttr(), view.getLoc());
    Operation *old = view.getByteShift().getDefiningOp();
    view.getByteShiftMutable().assign(func.getArgument(position));
    if (old && old->use_empty())
      old->erase();
  }
  SmallVector<std::pair<std::string, Operation *>> constants;
  for (Operation &op : entry)
    if (isa<arith::ConstantOp>(op)) {
      std::string text;
      llvm::raw_string_ostream os(text);
      op.getAttr("value").print(os);
      constants.push_back({text, &op});
    }
  llvm::stable_sort(constants, [](const auto &a, const auto &b) {
    return a.first < b.first;
  });
  for (auto &constant : llvm::reverse(constants))
    constant.second->moveBefore(&entry, entry.begin());
  return shifts;
}

/// The kernel as text, its name, ONNX nodes and locations left out: two
/// kernels with the same key compute the same thing. `copy` is a detached
/// copy, renamed here.
std::string kernelKey(gpu::GPUFuncOp copy) {
  copy.setName("kernel");
  copy->removeAttr("kiln.onnx_nodes");
  std::string text;
  llvm::raw_string_ostream os(text);
  // Every printing option set here: the command line's (--mlir-print-*)
  // must not elide what tells two kernels apart, nor add locations.
  OpPrintingFlags flags;
  flags.printGenericOpForm()
      .skipRegions(false)
      .enableDebugInfo(false)
      .elideLargeElementsAttrs(std::numeric_limits<int64_t>::max())
      .elideLargeResourceString(std::numeric_limits<int64_t>::max())
      .printNameLocAsPrefix(false)
      .printValueUsers(false);
  copy->print(os, flags);
  return text;
}

struct DedupeKernelsPass
    : public kiln::impl::DedupeKernelsBase<DedupeKernelsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto kernels = module.lookupSymbol<gpu::GPUModuleOp>("kiln_kernels");
    if (!kernels)
      return;

    // Each kernel with its offsets made arguments (a detached copy), grouped
    // by what it computes, in the order of first appearance.
    struct Variant {
      gpu::GPUFuncOp original, copy;
      SmallVector<int64_t> shifts;
    };
    llvm::MapVector<std::string, SmallVector<Variant>,
                    llvm::StringMap<unsigned>>
        groups;
    for (auto func : kernels.getOps<gpu::GPUFuncOp>()) {
      auto copy = cast<gpu::GPUFuncOp>(func->clone());
      SmallVector<int64_t> shifts = parameterizeViewShifts(copy);
      groups[kernelKey(copy)].push_back({func, copy, std::move(shifts)});
    }

    llvm::StringMap<Variant *> byName;
    llvm::DenseMap<StringRef, gpu::GPUFuncOp> target;
    for (auto &[key, variants] : groups) {
      if (variants.size() == 1) {
        variants.front().copy->erase();
        continue;
      }
      // The first kernel of the group takes the copy's arguments and runs
      // every node of the group.
      gpu::GPUFuncOp keep = variants.front().original;
      SmallVector<Attribute> nodes;
      for (Variant &variant : variants) {
        if (auto list =
                variant.original->getAttrOfType<ArrayAttr>("kiln.onnx_nodes"))
          llvm::append_range(nodes, list.getValue());
        byName[variant.original.getName()] = &variant;
      }
      gpu::GPUFuncOp copy = variants.front().copy;
      copy->setAttr("kiln.onnx_nodes", ArrayAttr::get(&getContext(), nodes));
      copy.setName(keep.getName());
      kernels.getBody()->getOperations().insert(keep->getIterator(), copy);
      for (Variant &variant : variants) {
        target[variant.original.getName()] = copy;
        if (variant.copy != copy)
          variant.copy->erase();
      }
    }
    if (byName.empty())
      return;

    // Launches of a merged kernel pass their own offsets.
    OpBuilder b(&getContext());
    SmallVector<gpu::LaunchFuncOp> launches;
    module.walk([&](gpu::LaunchFuncOp launch) { launches.push_back(launch); });
    for (gpu::LaunchFuncOp launch : launches) {
      auto it = byName.find(launch.getKernelName().getValue());
      if (launch.getKernelModuleName().getValue() != kernels.getName() ||
          it == byName.end())
        continue;
      // (Changed in place: async tokens, clusters and attributes stay.)
      b.setInsertionPoint(launch);
      for (int64_t shift : it->second->shifts)
        launch.getKernelOperandsMutable().append(ValueRange{
            arith::ConstantIndexOp::create(b, launch.getLoc(), shift)});
      gpu::GPUFuncOp kernel = target.lookup(it->first());
      launch.setKernelAttr(
          SymbolRefAttr::get(kernels.getNameAttr(),
                             {FlatSymbolRefAttr::get(kernel.getNameAttr())}));
    }
    for (auto &[key, variants] : groups)
      if (variants.size() > 1)
        for (Variant &variant : variants)
          variant.original->erase();

    // Names follow the kernel table again: kiln_kernel_N is entry N.
    llvm::StringMap<StringAttr> renamed;
    for (auto [index, func] :
         llvm::enumerate(kernels.getOps<gpu::GPUFuncOp>())) {
      auto name = StringAttr::get(&getContext(),
                                  "kiln_kernel_" + std::to_string(index));
      renamed[func.getName()] = name;
      func.setName(name);
    }
    module.walk([&](gpu::LaunchFuncOp launch) {
      if (launch.getKernelModuleName() != kernels.getNameAttr())
        return;
      if (StringAttr name = renamed.lookup(launch.getKernelName().getValue()))
        launch.setKernelAttr(SymbolRefAttr::get(
            kernels.getNameAttr(), {FlatSymbolRefAttr::get(name)}));
    });
  }
};
} // namespace
