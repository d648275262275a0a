//===- Inspect.cpp - `kiln inspect`: summarize a model or artifact --------===//

#include "compiler/driver/Inspect.h"

#include "compiler/driver/Compile.h"
#include "compiler/driver/Diagnostics.h"
#include "compiler/driver/InitAll.h"
#include "compiler/driver/ModelInput.h"
#include "compiler/import/onnx/OnnxImporter.h"
#include "compiler/import/pt2/Pt2Importer.h"
#include "compiler/logging/Report.h"
#include "kiln/runtime.h"
#include "onnx/onnx.pb.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Object/ObjectFile.h"
#include "llvm/TargetParser/Triple.h"
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

using namespace mlir::kiln;

namespace {
std::string dimsOf(const onnx::TypeProto &type) {
  if (!type.has_tensor_type())
    return "(not a tensor)";
  const auto &tt = type.tensor_type();
  std::string s = "[";
  if (!tt.has_shape())
    return onnx::TensorProto::DataType_Name(
               (onnx::TensorProto::DataType)tt.elem_type()) +
           " (unknown shape)";
  for (int i = 0; i < tt.shape().dim_size(); ++i) {
    const auto &d = tt.shape().dim(i);
    s += i ? "," : "";
    s += d.has_dim_value() ? std::to_string(d.dim_value())
                           : (d.dim_param().empty() ? "?" : d.dim_param());
  }
  return onnx::TensorProto::DataType_Name(
             (onnx::TensorProto::DataType)tt.elem_type()) +
         " " + s + "]";
}

/// What `kiln compile -O2 --report` would count for this model, and its
/// kernels with the ONNX nodes each covers (every pass pipeline, no object
/// code).
int printOptimizations(const std::string &path) {
  CompileOptions options;
  options.inputPath = path;
  options.analyzeOnly = true;
  if (int status = compileModel(options))
    return status;
  fmt::print("optimizations (-O2):{}\n",
             report::counters().empty() ? " none" : "");
  for (const auto &[name, count] : report::counters())
    fmt::print("  {}: {}\n", name, count);
  fmt::print("kernels: {}\n", report::kernels().size());
  for (const auto &[kernel, nodes] : report::kernels())
    fmt::print("  {:<32} {}\n", kernel, fmt::join(nodes, ", "));
  return 0;
}

int inspectOnnx(const std::string &path) {
  auto model = onnx_import::loadOnnxModel(path);
  if (!model) {
    fmt::print(stderr, "error: {}\n", llvm::toString(model.takeError()));
    return 1;
  }
  const onnx::ModelProto &m = **model;
  const onnx::GraphProto &g = m.graph();
  fmt::print("model:     {}\n", path);
  fmt::print("producer:  {} {}\n", m.producer_name(), m.producer_version());
  fmt::print("ir:        version {}\n", m.ir_version());
  for (const auto &op : m.opset_import())
    fmt::print("opset:     {} {}\n",
               op.domain().empty() ? "ai.onnx" : op.domain(), op.version());
  std::set<std::string> inits;
  uint64_t params = 0, bytes = 0;
  for (const auto &t : g.initializer()) {
    inits.insert(t.name());
    uint64_t n = 1;
    for (int64_t d : t.dims())
      n *= d;
    params += n;
    bytes += t.has_raw_data() ? t.raw_data().size() : 0;
  }
  fmt::print("inputs:\n");
  for (const auto &in : g.input())
    if (!inits.count(in.name()))
      fmt::print("  {:<24} {}\n", in.name(), dimsOf(in.type()));
  fmt::print("outputs:\n");
  for (const auto &out : g.output())
    fmt::print("  {:<24} {}\n", out.name(), dimsOf(out.type()));
  fmt::print("parameters: {} ({:.1f} MB)\n", params, bytes / 1e6);
  std::map<std::string, int> histogram;
  for (const auto &n : g.node())
    histogram[n.domain().empty() ? n.op_type()
                                 : n.domain() + "." + n.op_type()]++;
  std::vector<std::pair<std::string, int>> ops(histogram.begin(),
                                               histogram.end());
  std::stable_sort(ops.begin(), ops.end(),
                   [](auto &a, auto &b) { return a.second > b.second; });
  fmt::print("nodes:     {}\n", g.node_size());
  auto supported = onnx_import::supportedOnnxOps();
  std::vector<std::string> missing;
  for (const auto &[op, count] : ops) {
    bool ok = std::binary_search(supported.begin(), supported.end(), op);
    fmt::print("  {:<24} {:>5}{}\n", op, count, ok ? "" : "   (unsupported)");
    if (!ok)
      missing.push_back(op);
  }
  if (!missing.empty()) {
    fmt::print("unsupported ops: {}\n", fmt::join(missing, ", "));
    return 0;
  }
  return printOptimizations(path);
}

/// A .pt2 archive: its program's inputs, outputs and ATen ops, and what -O2
/// does with it.
int inspectPt2(const std::string &path) {
  std::vector<std::string> unsupported;
  if (llvm::Error err = pt2::describePt2(path, llvm::outs(), unsupported)) {
    fmt::print(stderr, "error: {}\n", llvm::toString(std::move(err)));
    return 1;
  }
  llvm::outs().flush();
  if (!unsupported.empty()) {
    fmt::print("unsupported ops: {}\n", fmt::join(unsupported, ", "));
    return 0;
  }
  return printOptimizations(path);
}

/// Kiln IR: its entry's inputs and outputs, the histogram of its ops, and
/// what -O2 does with it.
int inspectMlir(const std::string &path) {
  mlir::DialectRegistry registry;
  registerAllDialects(registry);
  mlir::MLIRContext context(registry);
  NodeDiagnosticHandler diagnostics(&context);
  auto module = loadModel(context, path, {});
  if (!module) {
    fmt::print(stderr, "error: {}\n", llvm::toString(module.takeError()));
    return 1;
  }
  auto entry = (**module).lookupSymbol<mlir::func::FuncOp>("main");
  fmt::print("model:     {}\n", path);
  fmt::print("format:    kiln IR\n");
  auto typeText = [](mlir::Type type) {
    std::string text;
    llvm::raw_string_ostream os(text);
    type.print(os);
    return text;
  };
  auto nameOf = [](mlir::DictionaryAttr attrs, unsigned i) {
    auto name = attrs ? attrs.getAs<mlir::StringAttr>("kiln.name") : nullptr;
    return name ? name.str() : "#" + std::to_string(i);
  };
  fmt::print("inputs:\n");
  for (unsigned i = 0; i < entry.getNumArguments(); ++i)
    fmt::print("  {:<24} {}\n", nameOf(entry.getArgAttrDict(i), i),
               typeText(entry.getArgumentTypes()[i]));
  fmt::print("outputs:\n");
  for (unsigned i = 0; i < entry.getNumResults(); ++i)
    fmt::print("  {:<24} {}\n", nameOf(entry.getResultAttrDict(i), i),
               typeText(entry.getResultTypes()[i]));
  std::map<std::string, int> histogram;
  entry.walk([&](mlir::Operation *op) {
    if (op != entry.getOperation())
      histogram[op->getName().getStringRef().str()]++;
  });
  std::vector<std::pair<std::string, int>> ops(histogram.begin(),
                                               histogram.end());
  std::stable_sort(ops.begin(), ops.end(),
                   [](auto &a, auto &b) { return a.second > b.second; });
  fmt::print("ops:\n");
  for (const auto &[op, count] : ops)
    fmt::print("  {:<24} {:>5}\n", op, count);
  return printOptimizations(path);
}

/// The text of an artifact's `.kiln.manifest` section ("" if none).
std::string readManifest(const llvm::object::ObjectFile &file) {
  for (const auto &section : file.sections()) {
    auto name = section.getName();
    if (!name || *name != ".kiln.manifest")
      continue;
    if (auto contents = section.getContents())
      return contents->rtrim('\0').str();
  }
  return "";
}

/// One `key=value` line of the manifest of the artifact at `path`.
std::string manifestValue(const std::string &path, llvm::StringRef key) {
  auto object = llvm::object::ObjectFile::createObjectFile(path);
  if (!object) {
    llvm::consumeError(object.takeError());
    return "";
  }
  llvm::SmallVector<llvm::StringRef> lines;
  std::string manifest = readManifest(*object->getBinary());
  llvm::StringRef(manifest).split(lines, '\n', -1, false);
  for (llvm::StringRef line : lines)
    if (line.consume_front(key) && line.consume_front("="))
      return line.str();
  return "";
}

/// For an artifact this machine cannot load (another architecture, say):
/// what its ELF header and `.kiln.manifest` section say.
int inspectUnloadable(const std::string &path, const std::string &why) {
  auto object = llvm::object::ObjectFile::createObjectFile(path);
  if (!object) {
    llvm::consumeError(object.takeError());
    fmt::print(stderr, "error: {}\n", why);
    return 1;
  }
  const llvm::object::ObjectFile &file = *object->getBinary();
  std::string manifest = readManifest(file);
  if (manifest.empty()) {
    fmt::print(stderr, "error: {}\n", why);
    return 1;
  }
  fmt::print("artifact:  {}\n", path);
  fmt::print("arch:      {}\n",
             llvm::Triple::getArchTypeName(file.getArch()).str());
  llvm::SmallVector<llvm::StringRef> lines;
  llvm::StringRef(manifest).split(lines, '\n', -1, false);
  for (llvm::StringRef line : llvm::ArrayRef(lines).drop_front()) {
    auto [key, value] = line.split('=');
    fmt::print("{:<10} {}\n", (key + ":").str(), value.str());
  }
  fmt::print("loadable:  no: {}\n", why);
  return 0;
}

/// The device program of a GPU artifact: platform, architectures, and each
/// kernel with its ONNX nodes and what the assembler reported per arch.
void printGpuProgram(const kiln_gpu_program &gpu, uint64_t arenaSize) {
  static const char *platforms[] = {"none", "cuda", "hip", "emulator"};
  fmt::print("gpu:       {}, archs {}, {} kernels, image {:.1f} KB\n",
             gpu.platform < 4 ? platforms[gpu.platform] : "unknown", gpu.archs,
             gpu.num_kernels, gpu.image_size / 1e3);
  fmt::print("device arena: {:.2f} MB\n", arenaSize / 1e6);
  fmt::print("kernels:\n");
  for (uint32_t k = 0; k < gpu.num_kernels; ++k) {
    const kiln_gpu_kernel &kernel = gpu.kernels[k];
    std::vector<std::string> usage;
    for (uint32_t r = 0; r < kernel.num_resources; ++r) {
      const kiln_gpu_kernel_resources &res = kernel.resources[r];
      if (gpu.platform == KILN_GPU_HIP)
        usage.push_back(fmt::format(
            "{} {} VGPR {} SGPR {} B LDS {} B scratch {} B spill, occupancy "
            "{} waves/SIMD",
            res.arch, res.registers, res.scalar_registers, res.shared_bytes,
            res.local_bytes, res.spill_bytes, res.occupancy));
      else
        usage.push_back(fmt::format(
            "{} {} regs {} B smem {} B stack {} B spill", res.arch,
            res.registers, res.shared_bytes, res.local_bytes, res.spill_bytes));
    }
    std::string shape =
        kernel.block[0]
            ? fmt::format("grid {}x{}x{} block {}x{}x{}, ", kernel.grid[0],
                          kernel.grid[1], kernel.grid[2], kernel.block[0],
                          kernel.block[1], kernel.block[2])
            : std::string();
    fmt::print("  {:<18} {}\n", kernel.name, kernel.onnx_nodes);
    fmt::print("  {:<18}   {}{} B smem{}\n", "", shape, kernel.shared_bytes,
               kernel.flags & KILN_GPU_KERNEL_BARRIERS ? ", barriers" : "");
    for (const std::string &line : usage)
      fmt::print("  {:<18}   {}\n", "", line);
  }
}

int inspectArtifact(const std::string &path) {
  kiln_model *model = nullptr;
  if (kiln_model_inspect(path.c_str(), &model) != KILN_OK)
    return inspectUnloadable(path, kiln_last_error());
  const kiln_artifact_descriptor *d = kiln_model_descriptor(model);
  fmt::print("artifact:  {}\n", path);
  fmt::print("model:     {}\n", d->model_name ? d->model_name : "");
  fmt::print("producer:  {}\n", d->producer ? d->producer : "");
  fmt::print("abi:       {}\n", d->abi_version);
  fmt::print("target:    {} (cpu {})\n", d->target_triple, d->target_cpu);
  // Only written when not fp32 (--precision=bf16).
  if (std::string precision = manifestValue(path, "precision");
      !precision.empty())
    fmt::print("precision: {}\n", precision);
  if (!d->gpu)
    fmt::print("arena:     {:.2f} MB\n", d->arena_size / 1e6);
  fmt::print("weights:   {:.2f} MB\n", d->weights_size / 1e6);
  if (d->flops)
    fmt::print("compute:   {:.3f} GFLOP per run ({} FLOP in matmuls and "
               "convolutions)\n",
               d->flops / 1e9, d->flops);
  // A symbolic dim prints as its name, a dim computed by the run as "?".
  auto list = [d](const char *title, const kiln_tensor_desc *t, uint32_t n) {
    fmt::print("{}\n", title);
    for (uint32_t i = 0; i < n; ++i) {
      std::vector<std::string> shape;
      for (int32_t k = 0; k < t[i].rank; ++k) {
        int32_t symbol = t[i].symbols ? t[i].symbols[k] : -1;
        shape.push_back(symbol >= 0         ? d->symbols[symbol].name
                        : t[i].shape[k] < 0 ? "?"
                                            : std::to_string(t[i].shape[k]));
      }
      fmt::print("  {:<24} {} [{}]\n", t[i].name,
                 kiln_dtype_name((kiln_dtype)t[i].dtype),
                 fmt::join(shape, ","));
    }
  };
  if (d->num_symbols > 0) {
    fmt::print("symbols:   (checked when the model runs)\n");
    for (uint32_t i = 0; i < d->num_symbols; ++i)
      fmt::print("  {:<24} {}..{}\n", d->symbols[i].name, d->symbols[i].min,
                 d->symbols[i].max);
  }
  list("inputs:", d->inputs, d->num_inputs);
  list("outputs:", d->outputs, d->num_outputs);
  if (d->gpu)
    printGpuProgram(*d->gpu, d->arena_size);
  kiln_model_free(model);
  return 0;
}
} // namespace

int mlir::kiln::inspectFile(const std::string &path) {
  llvm::Expected<ModelFormat> format = detectModelFormat(path);
  if (!format) {
    fmt::print(stderr, "error: {}\n", llvm::toString(format.takeError()));
    return 1;
  }
  switch (*format) {
  case ModelFormat::Artifact:
    return inspectArtifact(path);
  case ModelFormat::Mlir:
    return inspectMlir(path);
  case ModelFormat::Pt2:
    return inspectPt2(path);
  case ModelFormat::Onnx:
    break;
  }
  return inspectOnnx(path);
}
