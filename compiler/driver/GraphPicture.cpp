//===- GraphPicture.cpp - `kiln inspect --graph`: the kernel graph --------===//
#include "compiler/driver/GraphPicture.h"

#include "compiler/driver/Compile.h"
#include "compiler/driver/Diagnostics.h"
#include "compiler/driver/InitAll.h"
#include "compiler/driver/ModelInput.h"
#include "compiler/driver/Pipeline.h"
#include "compiler/logging/Report.h"
#include "dialects/kiln/KilnOps.h"
#include "dialects/kiln/NodeLocation.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <set>

using namespace mlir;
using namespace mlir::kiln;

namespace {
constexpr size_t kClusterAbove = 40; // kernels; fewer draw flat
constexpr size_t kNodesShown = 6;    // ONNX nodes listed per kernel box

/// The ONNX op type a location carries (FusedLoc<"OpType">), or "".
std::string onnxOpType(Location loc) {
  if (auto fused = dyn_cast<FusedLoc>(loc))
    if (auto type = dyn_cast_or_null<StringAttr>(fused.getMetadata()))
      return type.str();
  return "";
}

std::string typeText(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (auto shaped = dyn_cast<ShapedType>(type)) {
    os << "[";
    llvm::interleave(
        shaped.getShape(), os,
        [&](int64_t d) {
          if (ShapedType::isDynamic(d))
            os << "?";
          else
            os << d;
        },
        ",");
    os << "] ";
    shaped.getElementType().print(os);
  } else {
    type.print(os);
  }
  return text;
}

std::string quoted(StringRef text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  return out + "\"";
}

/// A producer→consumer value of the imported graph, between two ONNX
/// nodes (or a graph input / output).
struct Use {
  std::string from, to; // node names; "input:NAME" / "output:NAME"
  std::string type;
};

struct Graph {
  std::map<std::string, std::string> opType; // node -> ONNX op type
  std::vector<Use> uses;
  std::vector<std::string> inputs, outputs;
  std::set<std::string> attention, merged; // nodes, from the fused graph
};

/// The node-level dataflow of the imported model (weights left out).
Graph readGraph(func::FuncOp entry) {
  Graph graph;
  auto nameOf = [&](DictionaryAttr attrs, unsigned i, StringRef kind) {
    auto name = attrs ? attrs.getAs<StringAttr>("kiln.name") : nullptr;
    return (kind + ":" + (name ? name.str() : "#" + std::to_string(i))).str();
  };
  auto key = [](Value v) { return v.getAsOpaquePointer(); };
  std::map<const void *, std::string> producerOf;
  for (auto [i, arg] : llvm::enumerate(entry.getArguments())) {
    graph.inputs.push_back(nameOf(entry.getArgAttrDict(i), i, "input"));
    producerOf[key(arg)] = graph.inputs.back();
  }
  for (Operation &op : entry.getBody().front()) {
    if (isa<ConstantOp>(op))
      continue;
    if (isa<func::ReturnOp>(op)) {
      for (auto [i, v] : llvm::enumerate(op.getOperands())) {
        graph.outputs.push_back(
            nameOf(entry.getResultAttrDict(i), i, "output"));
        if (producerOf.count(key(v)))
          graph.uses.push_back({producerOf[key(v)], graph.outputs.back(),
                                typeText(v.getType())});
      }
      continue;
    }
    std::string node = onnxNodeName(op.getLoc());
    graph.opType.emplace(node, onnxOpType(op.getLoc()));
    for (Value v : op.getOperands())
      if (producerOf.count(key(v)) && producerOf[key(v)] != node)
        graph.uses.push_back({producerOf[key(v)], node, typeText(v.getType())});
    for (Value r : op.getResults())
      producerOf[key(r)] = node;
  }
  return graph;
}

/// Nodes the graph passes fused into attention or merged with another
/// contraction.
void readFusions(ModuleOp fused, Graph &graph) {
  fused.walk([&](Operation *op) {
    std::vector<std::string> names;
    appendOnnxNodeNames(op->getLoc(), names);
    if (isa<AttentionOp>(op)) {
      graph.attention.insert(names.begin(), names.end());
      return;
    }
    int contractions = 0;
    for (const std::string &name : names) {
      StringRef type = graph.opType.count(name) ? graph.opType[name] : "";
      contractions += type == "MatMul" || type == "Gemm" || type == "Conv";
    }
    if (contractions >= 2)
      graph.merged.insert(names.begin(), names.end());
  });
}

struct Kernel {
  std::string name;
  std::vector<std::string> nodes;
  std::string mark, color;
};

void markKernel(Kernel &kernel, const Graph &graph) {
  StringRef anchor = StringRef(kernel.name).split(':').second;
  auto any = [&](const std::set<std::string> &set) {
    return llvm::any_of(kernel.nodes,
                        [&](const std::string &n) { return set.count(n); });
  };
  auto typeOf = [&](const std::string &n) {
    auto it = graph.opType.find(n);
    return it == graph.opType.end() ? std::string() : it->second;
  };
  bool contraction = anchor.contains("matmul") || anchor.contains("conv") ||
                     anchor.contains("gemm");
  if (any(graph.attention)) {
    kernel.mark = "fused attention";
    kernel.color = "#f4a261";
  } else if (any(graph.merged) && contraction) {
    kernel.mark = "merged contractions";
    kernel.color = "#90be6d";
  } else if (anchor == "transpose" &&
             llvm::none_of(kernel.nodes, [&](const std::string &n) {
               return typeOf(n) == "Transpose";
             })) {
    kernel.mark = "layout conversion";
    kernel.color = "#a0c4ff";
  } else if (contraction) {
    bool epilogue = llvm::any_of(kernel.nodes, [&](const std::string &n) {
      std::string t = typeOf(n);
      return !t.empty() && t != "MatMul" && t != "Gemm" && t != "Conv";
    });
    kernel.mark = epilogue ? "epilogue fused" : "";
    kernel.color = "#ffd166";
  }
}

/// The layer a kernel belongs to, from its first node's name as torch
/// exports name nodes: the path up to the first component numbered like a
/// layer (`/encoder/layer.3/attention/MatMul` -> `/encoder/layer.3`,
/// `/layers.0/q/MatMul` -> `/layers.0`), else its first component.
std::string layerOf(const Kernel &kernel) {
  if (kernel.nodes.empty())
    return "";
  SmallVector<StringRef> parts;
  StringRef(kernel.nodes.front()).split(parts, '/', -1, false);
  if (parts.size() < 2)
    return "";
  std::string prefix;
  for (StringRef part : ArrayRef(parts).drop_back()) {
    prefix += "/" + part.str();
    size_t cut = part.find_last_of("._");
    if (cut != StringRef::npos && cut + 1 < part.size() &&
        llvm::all_of(part.drop_front(cut + 1), llvm::isDigit))
      return prefix;
  }
  return "/" + parts.front().str();
}

std::string writeDot(const Graph &graph, std::vector<Kernel> &kernels) {
  // Where each node's values come from and go to: the last kernel computing
  // it produces it, the first one reads its inputs.
  // (A contraction's zero fill comes before it but reads nothing.)
  std::map<std::string, size_t> first, last;
  for (auto [i, kernel] : llvm::enumerate(kernels))
    for (const std::string &node : kernel.nodes) {
      if (!StringRef(kernel.name).ends_with(":fill"))
        first.emplace(node, i);
      last[node] = i;
    }
  std::string dot;
  llvm::raw_string_ostream os(dot);
  os << "digraph kiln {\n  rankdir=TB;\n  node [shape=box, style=filled, "
        "fillcolor=white, fontname=\"Helvetica\", fontsize=10];\n"
        "  edge [fontname=\"Helvetica\", fontsize=8];\n";
  std::map<std::string, std::string> ids; // graph node -> dot id
  for (auto [i, name] : llvm::enumerate(graph.inputs)) {
    ids[name] = "in" + std::to_string(i);
    os << "  " << ids[name]
       << " [shape=ellipse, label=" << quoted(StringRef(name).drop_front(6))
       << "];\n";
  }
  for (auto [i, name] : llvm::enumerate(graph.outputs)) {
    ids[name] = "out" + std::to_string(i);
    os << "  " << ids[name]
       << " [shape=ellipse, label=" << quoted(StringRef(name).drop_front(7))
       << "];\n";
  }
  std::map<std::string, std::vector<size_t>> layers;
  for (auto [i, kernel] : llvm::enumerate(kernels))
    layers[kernels.size() > kClusterAbove ? layerOf(kernel) : ""].push_back(i);
  int cluster = 0;
  for (auto &[layer, members] : layers) {
    if (!layer.empty())
      os << "  subgraph cluster_" << cluster++
         << " {\n    label=" << quoted(layer) << ";\n    style=rounded;\n";
    for (size_t i : members) {
      const Kernel &kernel = kernels[i];
      std::string label = kernel.name;
      if (!kernel.mark.empty())
        label += "  [" + kernel.mark + "]";
      for (size_t n = 0; n < kernel.nodes.size() && n < kNodesShown; ++n)
        label += "\n" + kernel.nodes[n];
      if (kernel.nodes.size() > kNodesShown)
        label +=
            "\n+" + std::to_string(kernel.nodes.size() - kNodesShown) + " more";
      os << "    k" << i << " [label=" << quoted(label);
      if (!kernel.color.empty())
        os << ", fillcolor=" << quoted(kernel.color);
      os << "];\n";
    }
    if (!layer.empty())
      os << "  }\n";
  }
  // Nodes that are no kernel of their own: a concatenation written in
  // place is drawn; other views (reshapes, slices) pass their edges on.
  auto isConcat = [&](const std::string &node) {
    auto it = graph.opType.find(node);
    return it != graph.opType.end() && it->second == "Concat";
  };
  std::map<std::string, std::vector<const Use *>> into;
  for (const Use &use : graph.uses)
    into[use.to].push_back(&use);
  int views = 0;
  std::function<std::string(const std::string &, bool)> idOf =
      [&](const std::string &node, bool producing) -> std::string {
    if (ids.count(node))
      return ids[node];
    if (last.count(node))
      return "k" + std::to_string(producing || !first.count(node)
                                      ? last[node]
                                      : first[node]);
    if (isConcat(node)) {
      ids[node] = "v" + std::to_string(views++);
      os << "  " << ids[node]
         << " [style=dashed, label=" << quoted("concat in place\n" + node)
         << "];\n";
      return ids[node];
    }
    return "";
  };
  std::set<std::string> drawn;
  // The sources feeding `node` through views that are not drawn.
  std::function<void(const std::string &, const std::string &,
                     const std::string &, std::set<std::string> &)>
      connect = [&](const std::string &from, const std::string &to,
                    const std::string &type, std::set<std::string> &seen) {
        std::string source = idOf(from, /*producing=*/true);
        if (source.empty()) {
          if (!seen.insert(from).second)
            return;
          for (const Use *use : into[from])
            connect(use->from, to, type, seen);
          return;
        }
        if (source == to)
          return;
        std::string edge =
            "  " + source + " -> " + to + " [label=" + quoted(type) + "];\n";
        if (drawn.insert(edge).second)
          os << edge;
      };
  // A node computed by several kernels (a pooling and its division, say):
  // each hands its part to the next.
  std::map<std::string, size_t> previous;
  for (auto [i, kernel] : llvm::enumerate(kernels))
    for (const std::string &node : kernel.nodes) {
      auto it = previous.find(node);
      if (it != previous.end() && it->second != i) {
        std::string edge = "  k" + std::to_string(it->second) + " -> k" +
                           std::to_string(i) + " [style=dashed];\n";
        if (drawn.insert(edge).second)
          os << edge;
      }
      previous[node] = i;
    }
  for (const Use &use : graph.uses) {
    std::string target = idOf(use.to, /*producing=*/false);
    if (target.empty())
      continue; // a view: its consumers connect through it
    std::set<std::string> seen;
    connect(use.from, target, use.type, seen);
  }
  os << "}\n";
  return dot;
}
} // namespace

int mlir::kiln::writeGraphPicture(const std::string &modelPath,
                                  const std::string &outPath) {
  StringRef extension = llvm::sys::path::extension(outPath);
  bool render =
      extension == ".svg" || extension == ".png" || extension == ".pdf";
  if (!render && extension != ".dot") {
    llvm::errs() << "error: --graph writes .dot, .svg, .png or .pdf files "
                    "(got '"
                 << outPath << "')\n";
    return 2;
  }
  if (llvm::sys::fs::equivalent(modelPath, outPath)) {
    llvm::errs() << "error: --graph '" << outPath
                 << "' is the model; refusing to overwrite it\n";
    return 2;
  }
  DialectRegistry registry;
  registerAllDialects(registry);
  MLIRContext context(registry);
  NodeDiagnosticHandler diagnostics(&context);
  auto module = loadModel(context, modelPath, {});
  if (!module) {
    llvm::errs() << "error: " << llvm::toString(module.takeError()) << "\n";
    return 1;
  }
  Graph graph = readGraph((**module).lookupSymbol<func::FuncOp>("main"));

  // What the graph passes fuse and merge, on a copy.
  std::string error;
  PipelineOptions pipeline;
  auto target = Target::fromFlags("", "", "", "", false, error);
  if (failed(target)) {
    llvm::errs() << "error: " << error << "\n";
    return 1;
  }
  pipeline.target = *target;
  OwningOpRef<ModuleOp> fused = (*module)->clone();
  PassManager pm(&context);
  buildGraphPipeline(pm, pipeline);
  if (failed(pm.run(*fused)))
    return 1;
  readFusions(*fused, graph);

  // The kernels, as `kiln compile -O2 --report` lists them.
  CompileOptions options;
  options.inputPath = modelPath;
  options.analyzeOnly = true;
  if (int status = compileModel(options))
    return status;
  std::vector<Kernel> kernels;
  for (const auto &[name, nodes] : report::kernels()) {
    kernels.push_back({name, nodes, "", ""});
    markKernel(kernels.back(), graph);
  }
  std::string dot = writeDot(graph, kernels);

  if (!render) {
    std::error_code ec;
    llvm::raw_fd_ostream os(outPath, ec);
    if (ec) {
      llvm::errs() << "error: cannot write '" << outPath
                   << "': " << ec.message() << "\n";
      return 1;
    }
    os << dot;
    llvm::outs() << "wrote " << outPath << " (" << kernels.size()
                 << " kernels)\n";
    return 0;
  }
  auto dotProgram = llvm::sys::findProgramByName("dot");
  if (!dotProgram) {
    llvm::errs() << "error: --graph=" << outPath
                 << " needs Graphviz's 'dot' (apt install graphviz); "
                    "--graph=FILE.dot writes the dot file without it\n";
    return 1;
  }
  SmallString<128> dotFile;
  if (std::error_code ec =
          llvm::sys::fs::createTemporaryFile("kiln-graph", "dot", dotFile)) {
    llvm::errs() << "error: cannot create a temporary file: " << ec.message()
                 << "\n";
    return 1;
  }
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(dotFile, ec);
    os << dot;
  }
  std::string format = ("-T" + extension.drop_front()).str();
  std::string message;
  int status = llvm::sys::ExecuteAndWait(
      *dotProgram, {"dot", format, dotFile.str(), "-o", outPath},
      /*Env=*/std::nullopt, /*Redirects=*/{}, /*SecondsToWait=*/120,
      /*MemoryLimit=*/0, &message);
  llvm::sys::fs::remove(dotFile);
  if (status != 0) {
    llvm::errs() << "error: Graphviz's dot could not render '" << outPath << "'"
                 << (message.empty() ? "" : ": " + message) << "\n";
    return 1;
  }
  llvm::outs() << "wrote " << outPath << " (" << kernels.size()
               << " kernels)\n";
  return 0;
}
