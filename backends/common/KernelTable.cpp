//===- KernelTable.cpp - kiln.gpu.kernels as attributes -------------------===//
#include "backends/common/KernelTable.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/DenseSet.h"

using namespace mlir;
using namespace mlir::kiln;

KernelInfo mlir::kiln::describeKernel(Operation *op) {
  auto kernel = cast<gpu::GPUFuncOp>(op);
  KernelInfo info;
  info.name = kernel.getName().str();
  if (auto nodes = kernel->getAttrOfType<ArrayAttr>("kiln.onnx_nodes"))
    for (auto node : nodes.getAsRange<StringAttr>())
      info.onnxNodes.push_back(node.str());
  info.numParams = kernel.getNumArguments();
  info.usesBarriers =
      kernel.walk([](gpu::BarrierOp) { return WalkResult::interrupt(); })
          .wasInterrupted();
  if (std::optional<ArrayRef<int32_t>> grid = kernel.getKnownGridSize())
    std::copy(grid->begin(), grid->end(), info.grid.begin());
  if (std::optional<ArrayRef<int32_t>> block = kernel.getKnownBlockSize())
    std::copy(block->begin(), block->end(), info.block.begin());
  for (BlockArgument buffer : kernel.getWorkgroupAttributions()) {
    auto type = cast<MemRefType>(buffer.getType());
    info.sharedBytes += type.getNumElements() *
                        llvm::divideCeil(type.getElementTypeBitWidth(), 8);
  }
  // Workgroup globals the kernel reads, each counted once.
  llvm::DenseSet<StringAttr> counted;
  kernel.walk([&](memref::GetGlobalOp get) {
    auto type = get.getType();
    if (!gpu::GPUDialect::hasWorkgroupMemoryAddressSpace(type) ||
        !counted.insert(get.getNameAttr().getAttr()).second ||
        !type.hasStaticShape())
      return;
    info.sharedBytes += type.getNumElements() *
                        llvm::divideCeil(type.getElementTypeBitWidth(), 8);
  });
  return info;
}

void mlir::kiln::setKernelTable(ModuleOp module, ArrayRef<KernelInfo> kernels) {
  Builder b(module.getContext());
  SmallVector<Attribute> entries;
  for (const KernelInfo &kernel : kernels) {
    SmallVector<Attribute> nodes, resources;
    for (const std::string &node : kernel.onnxNodes)
      nodes.push_back(b.getStringAttr(node));
    for (const KernelResources &r : kernel.resources) {
      SmallVector<NamedAttribute> fields = {
          b.getNamedAttr("arch", b.getStringAttr(r.arch)),
          b.getNamedAttr("registers", b.getI64IntegerAttr(r.registers)),
          b.getNamedAttr("shared", b.getI64IntegerAttr(r.sharedBytes)),
          b.getNamedAttr("local", b.getI64IntegerAttr(r.localBytes)),
          b.getNamedAttr("spill_stores",
                         b.getI64IntegerAttr(r.spillStoreBytes)),
          b.getNamedAttr("spill_loads", b.getI64IntegerAttr(r.spillLoadBytes)),
      };
      // The AMD-only fields appear where a leaf reports them.
      if (r.scalarRegisters)
        fields.push_back(
            b.getNamedAttr("sgprs", b.getI64IntegerAttr(r.scalarRegisters)));
      if (r.occupancy)
        fields.push_back(
            b.getNamedAttr("occupancy", b.getI64IntegerAttr(r.occupancy)));
      resources.push_back(b.getDictionaryAttr(fields));
    }
    entries.push_back(b.getDictionaryAttr({
        b.getNamedAttr("name", b.getStringAttr(kernel.name)),
        b.getNamedAttr("nodes", b.getArrayAttr(nodes)),
        b.getNamedAttr("params", b.getI64IntegerAttr(kernel.numParams)),
        b.getNamedAttr("barriers", b.getBoolAttr(kernel.usesBarriers)),
        b.getNamedAttr("shared", b.getI64IntegerAttr(kernel.sharedBytes)),
        b.getNamedAttr("grid", b.getDenseI64ArrayAttr(kernel.grid)),
        b.getNamedAttr("block", b.getDenseI64ArrayAttr(kernel.block)),
        b.getNamedAttr("resources", b.getArrayAttr(resources)),
    }));
  }
  module->setAttr("kiln.gpu.kernels", b.getArrayAttr(entries));
}

namespace {
int64_t intField(DictionaryAttr dict, StringRef name, bool &ok) {
  auto attr = dict.getAs<IntegerAttr>(name);
  ok &= bool(attr);
  return attr ? attr.getInt() : 0;
}
std::string stringField(DictionaryAttr dict, StringRef name, bool &ok) {
  auto attr = dict.getAs<StringAttr>(name);
  ok &= bool(attr);
  return attr ? attr.str() : "";
}
} // namespace

FailureOr<std::vector<KernelInfo>>
mlir::kiln::getKernelTable(ModuleOp module, std::string &error) {
  std::vector<KernelInfo> kernels;
  auto table = module->getAttrOfType<ArrayAttr>("kiln.gpu.kernels");
  if (!table) {
    error = "kiln.gpu.kernels is missing";
    return failure();
  }
  for (Attribute entry : table) {
    auto dict = dyn_cast<DictionaryAttr>(entry);
    bool ok = bool(dict);
    KernelInfo info;
    if (ok) {
      info.name = stringField(dict, "name", ok);
      info.numParams = intField(dict, "params", ok);
      info.sharedBytes = intField(dict, "shared", ok);
      for (auto [name, shape] :
           {std::pair{"grid", &info.grid}, std::pair{"block", &info.block}})
        if (auto dims = dict.getAs<DenseI64ArrayAttr>(name);
            dims && dims.size() == 3)
          std::copy(dims.asArrayRef().begin(), dims.asArrayRef().end(),
                    shape->begin());
      auto barriers = dict.getAs<BoolAttr>("barriers");
      info.usesBarriers = barriers && barriers.getValue();
      if (auto nodes = dict.getAs<ArrayAttr>("nodes"))
        for (auto node : nodes.getAsRange<StringAttr>())
          info.onnxNodes.push_back(node.str());
      if (auto resources = dict.getAs<ArrayAttr>("resources"))
        for (auto r : resources.getAsRange<DictionaryAttr>()) {
          KernelResources res;
          res.arch = stringField(r, "arch", ok);
          res.registers = intField(r, "registers", ok);
          res.sharedBytes = intField(r, "shared", ok);
          res.localBytes = intField(r, "local", ok);
          res.spillStoreBytes = intField(r, "spill_stores", ok);
          res.spillLoadBytes = intField(r, "spill_loads", ok);
          bool optional = true;
          res.scalarRegisters = intField(r, "sgprs", optional);
          res.occupancy = intField(r, "occupancy", optional);
          info.resources.push_back(res);
        }
    }
    if (!ok) {
      error = "kiln.gpu.kernels has a malformed entry";
      return failure();
    }
    kernels.push_back(std::move(info));
  }
  return kernels;
}
