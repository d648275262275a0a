//===- Autotune.cpp - Timing tile sizes of hot contractions ---------------===//
//
// For each hot contraction: look its signature up in the cache; if absent,
// clone the op alone into a module (constant operands and a filled init stay
// constants, the rest become arguments), compile it once per candidate with
// the same backend pipeline as the model, time it through the runtime, keep
// the fastest, and write the cache back (temporary file, then rename). The
// candidates vary the cache tiles around the cost model's 128/128/256; the
// register tile stays the target's.
//
//===----------------------------------------------------------------------===//
#include "compiler/driver/Autotune.h"

#include "backends/common/Artifact.h"
#include "backends/cpu/ContractionCodegen.h"
#include "compiler/logging/Logging.h"
#include "dialects/kiln/NodeLocation.h"
#include "kiln/runtime.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>

using namespace mlir;
using namespace mlir::kiln;

namespace {

/// Contractions below this many flops, or below this share of the model's
/// contraction flops, are not worth a compile per candidate.
constexpr double kMinAutotuneFlops = 1e6;
constexpr double kMinAutotuneShare = 0.01;

struct Tile {
  int64_t mc, nc, kc;
};
/// The cost model's choice first: ties keep it.
constexpr Tile kCandidates[] = {
    {128, 128, 256}, {64, 128, 256}, {128, 64, 256},  {256, 128, 256},
    {128, 256, 256}, {64, 256, 512}, {128, 128, 128}, {128, 128, 512}};

/// Whether kiln-tile-contractions takes `op`, and its flops.
std::optional<double> tunableFlops(linalg::LinalgOp op) {
  if (!hasStaticF32Operands(op) || op->getNumResults() != 1)
    return std::nullopt;
  if (!isa<linalg::Conv2DNchwFchwOp>(op) && !matchContraction(op))
    return std::nullopt;
  double flops = 2;
  for (int64_t n : op.getStaticLoopRanges())
    flops *= double(n);
  return flops;
}

bool isConstant(Value v) {
  return v.getDefiningOp() &&
         v.getDefiningOp()->hasTrait<OpTrait::ConstantLike>();
}

/// A filled init: linalg.fill of a constant into tensor.empty.
linalg::FillOp filledInit(Value v) {
  auto fill = v.getDefiningOp<linalg::FillOp>();
  if (fill && isConstant(fill.value()) &&
      fill.output().getDefiningOp<tensor::EmptyOp>())
    return fill;
  return {};
}

std::string signature(linalg::LinalgOp op) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << op->getName();
  for (Value v : op->getOperands()) {
    os << (isConstant(v) ? " const " : filledInit(v) ? " filled " : " ");
    os << v.getType();
  }
  for (NamedAttribute a : op->getAttrs())
    if (a.getName() != kTileSizesAttr &&
        !a.getName().strref().starts_with("__"))
      os << " " << a.getName() << "=" << a.getValue();
  return s;
}

/// `op` alone in a module: constants and filled inits cloned, other operands
/// as arguments of @main, the result returned.
OwningOpRef<ModuleOp> kernelModule(linalg::LinalgOp op, const Tile &tile,
                                   ArtifactSpec &spec) {
  MLIRContext *ctx = op->getContext();
  Location loc = op->getLoc();
  OwningOpRef<ModuleOp> module(ModuleOp::create(loc));
  OpBuilder b(ctx);
  b.setInsertionPointToEnd(module->getBody());
  SmallVector<Value> arguments;
  for (Value v : op->getOperands())
    if (!isConstant(v) && !filledInit(v))
      arguments.push_back(v);
  SmallVector<Type> argTypes;
  for (Value v : arguments)
    argTypes.push_back(v.getType());
  Type resultType = op->getResult(0).getType();
  auto func = func::FuncOp::create(b, loc, "main",
                                   b.getFunctionType(argTypes, {resultType}));
  Block *body = func.addEntryBlock();
  b.setInsertionPointToEnd(body);
  IRMapping map;
  for (auto [v, arg] : llvm::zip(arguments, body->getArguments()))
    map.map(v, arg);
  for (Value v : op->getOperands()) {
    if (map.contains(v))
      continue;
    if (linalg::FillOp fill = filledInit(v)) {
      b.clone(*fill.value().getDefiningOp(), map);
      b.clone(*fill.output().getDefiningOp(), map);
      b.clone(*fill, map);
    } else {
      b.clone(*v.getDefiningOp(), map);
    }
  }
  Operation *clone = b.clone(*op, map);
  clone->setAttr(kTileSizesAttr,
                 b.getDenseI64ArrayAttr({tile.mc, tile.nc, tile.kc}));
  func::ReturnOp::create(b, loc, clone->getResult(0));

  auto tensorSpec = [](Type type, std::string name) {
    auto t = cast<RankedTensorType>(type);
    return TensorSpec{
        std::move(name), KILN_DTYPE_F32,
        std::vector<int64_t>(t.getShape().begin(), t.getShape().end())};
  };
  spec.modelName = "autotune";
  spec.inputs.clear();
  for (auto [i, type] : llvm::enumerate(argTypes))
    spec.inputs.push_back(tensorSpec(type, "in" + std::to_string(i)));
  spec.outputs = {tensorSpec(resultType, "out")};
  return module;
}

/// One candidate loaded through the runtime, with zeroed inputs.
class TimedKernel {
public:
  ~TimedKernel() {
    for (kiln_tensor *t : inputs)
      kiln_tensor_destroy(t);
    kiln_session_destroy(session);
    kiln_model_free(model);
  }

  LogicalResult load(StringRef path, unsigned threads, std::string &error) {
    kiln_session_options options{threads};
    if (kiln_model_load(path.str().c_str(), &model) != KILN_OK ||
        kiln_session_create(model, &options, &session) != KILN_OK) {
      error = kiln_last_error();
      return failure();
    }
    const kiln_artifact_descriptor *d = kiln_model_descriptor(model);
    for (uint32_t i = 0; i < d->num_inputs; ++i) {
      const kiln_tensor_desc &in = d->inputs[i];
      kiln_tensor *t = nullptr;
      if (kiln_tensor_create(kiln_dtype(in.dtype), in.rank, in.shape, &t) !=
          KILN_OK) {
        error = kiln_last_error();
        return failure();
      }
      inputs.push_back(t);
      named.push_back({in.name, t});
    }
    outputs.assign(d->num_outputs, nullptr);
    return success();
  }

  /// One run, in milliseconds.
  FailureOr<double> run(std::string &error) {
    auto start = std::chrono::steady_clock::now();
    kiln_status status = kiln_session_run(session, named.data(), named.size(),
                                          outputs.data(), outputs.size());
    double ms = std::chrono::duration<double, std::milli>(
                    std::chrono::steady_clock::now() - start)
                    .count();
    for (kiln_tensor *&t : outputs) {
      kiln_tensor_destroy(t);
      t = nullptr;
    }
    if (status != KILN_OK) {
      error = kiln_last_error();
      return failure();
    }
    return ms;
  }

private:
  kiln_model *model = nullptr;
  kiln_session *session = nullptr;
  std::vector<kiln_tensor *> inputs;
  std::vector<kiln_named_tensor> named;
  std::vector<kiln_tensor *> outputs;
};

/// The best time of each candidate over interleaved rounds (so a load
/// change on the machine hits every candidate alike), after one warm-up run
/// each.
FailureOr<std::vector<double>>
timeCandidates(std::vector<std::unique_ptr<TimedKernel>> &kernels,
               std::string &error) {
  std::vector<double> best(kernels.size(), 1e30);
  for (auto &k : kernels)
    if (failed(k->run(error)))
      return failure();
  for (int round = 0; round < 5; ++round) {
    for (size_t i = 0; i < kernels.size(); ++i) {
      double spent = 0;
      for (int r = 0; r < 20 && (r < 2 || spent < 20.0); ++r) {
        FailureOr<double> ms = kernels[i]->run(error);
        if (failed(ms))
          return failure();
        spent += *ms;
        best[i] = std::min(best[i], *ms);
      }
    }
  }
  return best;
}

/// The JSON cache: {"kiln_autotune": 1, "entries": {signature: {"tile":
/// [MC, NC, KC], "ms": best time}}}.
struct Cache {
  std::string path;
  llvm::json::Object entries;
  bool dirty = false;

  LogicalResult load(std::string &error) {
    auto buffer = llvm::MemoryBuffer::getFile(path);
    if (!buffer)
      return success(); // a missing cache is an empty one
    auto parsed = llvm::json::parse((*buffer)->getBuffer());
    llvm::json::Object *root = parsed ? parsed->getAsObject() : nullptr;
    llvm::json::Object *list = root ? root->getObject("entries") : nullptr;
    if (!list || root->getInteger("kiln_autotune") != 1) {
      if (!parsed)
        llvm::consumeError(parsed.takeError());
      error = "the autotune cache '" + path +
              "' is not a Kiln autotune cache (move it away or pass "
              "--autotune-cache=FILE)";
      return failure();
    }
    entries = std::move(*list);
    return success();
  }

  std::optional<Tile> lookup(StringRef key) {
    llvm::json::Object *entry = entries.getObject(key);
    llvm::json::Array *tile = entry ? entry->getArray("tile") : nullptr;
    if (!tile || tile->size() != 3)
      return std::nullopt;
    Tile t;
    int64_t *fields[] = {&t.mc, &t.nc, &t.kc};
    for (int i = 0; i < 3; ++i) {
      std::optional<int64_t> v = (*tile)[i].getAsInteger();
      if (!v || *v <= 0)
        return std::nullopt;
      *fields[i] = *v;
    }
    return t;
  }

  void store(StringRef key, const Tile &t, double ms) {
    // ObjectKey borrows a StringRef: give it its own copy.
    entries[key.str()] = llvm::json::Object{
        {"tile", llvm::json::Array{t.mc, t.nc, t.kc}}, {"ms", ms}};
    dirty = true;
  }

  LogicalResult save(std::string &error) {
    if (!dirty)
      return success();
    SmallString<256> dir(path);
    llvm::sys::path::remove_filename(dir);
    if (!dir.empty())
      if (auto ec = llvm::sys::fs::create_directories(dir)) {
        error = "cannot create '" + dir.str().str() + "': " + ec.message();
        return failure();
      }
    std::string temp = path + ".tmp";
    {
      std::error_code ec;
      llvm::raw_fd_ostream os(temp, ec);
      if (ec) {
        error =
            "cannot write the autotune cache '" + temp + "': " + ec.message();
        return failure();
      }
      llvm::json::Object root{{"kiln_autotune", 1},
                              {"entries", std::move(entries)}};
      os << llvm::formatv("{0:2}", llvm::json::Value(std::move(root)));
    }
    if (auto ec = llvm::sys::fs::rename(temp, path)) {
      error = "cannot write the autotune cache '" + path + "': " + ec.message();
      return failure();
    }
    return success();
  }
};

std::string tileText(const Tile &t) {
  return llvm::formatv("{0}x{1}x{2}", t.mc, t.nc, t.kc).str();
}

} // namespace

std::string mlir::kiln::defaultAutotuneCachePath() {
  SmallString<256> path;
  if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    path = xdg;
  else if (const char *home = std::getenv("HOME"); home && *home)
    llvm::sys::path::append(path, home, ".cache");
  else
    path = ".";
  llvm::sys::path::append(path, "kiln", "autotune.json");
  return path.str().str();
}

LogicalResult mlir::kiln::autotuneContractions(ModuleOp module,
                                               const PipelineOptions &pipeline,
                                               const AutotuneOptions &options,
                                               std::string &error) {
  Cache cache{options.cachePath};
  if (failed(cache.load(error)))
    return failure();
  SmallVector<std::pair<linalg::LinalgOp, double>> tunable;
  double total = 0;
  module.walk([&](linalg::LinalgOp op) {
    if (std::optional<double> flops = tunableFlops(op)) {
      tunable.push_back({op, *flops});
      total += *flops;
    }
  });
  SmallVector<linalg::LinalgOp> hot;
  for (auto [op, flops] : tunable)
    if (flops >= std::max(kMinAutotuneFlops, kMinAutotuneShare * total))
      hot.push_back(op);
  if (hot.empty())
    return success();

  SmallString<128> dir;
  if (auto ec = llvm::sys::fs::createUniqueDirectory("kiln-autotune", dir)) {
    error = "cannot create a temporary directory: " + ec.message();
    return failure();
  }
  auto removeDir =
      llvm::make_scope_exit([&] { llvm::sys::fs::remove_directories(dir); });
  // bf16 weights make a different kernel of the same f32 op.
  std::string machine =
      llvm::formatv("{0} {1} threads={2}{3}: ", pipeline.target.host.triple,
                    pipeline.target.host.cpu, options.threads,
                    pipeline.target.bf16Weights ? " bf16" : "")
          .str();
  for (linalg::LinalgOp op : hot) {
    std::string key = machine + signature(op);
    std::string at = onnxNodeName(op->getLoc());
    std::optional<Tile> choice = cache.lookup(key);
    if (choice) {
      KILN_LOG("autotune", Info) << "cached " << tileText(*choice) << " for "
                                 << op->getName() << " at '" << at << "'\n";
    } else {
      std::vector<std::unique_ptr<TimedKernel>> kernels;
      for (const Tile &tile : kCandidates) {
        ArtifactSpec spec;
        OwningOpRef<ModuleOp> kernel = kernelModule(op, tile, spec);
        PassManager pm(module.getContext());
        // The kernel shares its weights with `module`, which lives on.
        PipelineOptions kernelPipeline = pipeline;
        kernelPipeline.releaseWeights = false;
        buildBackendPipeline(pm, kernelPipeline);
        std::string path = (dir + "/" + tileText(tile) + ".so").str();
        kernels.push_back(std::make_unique<TimedKernel>());
        if (failed(pm.run(*kernel)) ||
            failed(writeArtifact(*kernel, spec, pipeline.target,
                                 pipeline.optLevel, path, error)) ||
            failed(kernels.back()->load(path, options.threads, error))) {
          error = "autotune: building " + tileText(tile) + " for " +
                  op->getName().getStringRef().str() + " at '" + at +
                  "' failed" + (error.empty() ? "" : ": " + error);
          return failure();
        }
      }
      FailureOr<std::vector<double>> times = timeCandidates(kernels, error);
      if (failed(times)) {
        error = "autotune: running the candidates for '" + at +
                "' failed: " + error;
        return failure();
      }
      size_t pick = 0;
      for (size_t i = 0; i < times->size(); ++i) {
        KILN_LOG("autotune", Debug) << llvm::formatv(
            "  {0,-12} {1:f3} ms\n", tileText(kCandidates[i]), (*times)[i]);
        if ((*times)[i] < (*times)[pick])
          pick = i;
      }
      choice = kCandidates[pick];
      double best = (*times)[pick], baseline = (*times)[0];
      cache.store(key, *choice, best);
      KILN_LOG("autotune", Info)
          << "chose " << tileText(*choice) << " for " << op->getName()
          << " at '" << at << "': "
          << llvm::formatv("{0:f3} ms (cost model {1}: {2:f3} ms)", best,
                           tileText(kCandidates[0]), baseline)
          << "\n";
    }
    op->setAttr(kTileSizesAttr, Builder(op->getContext())
                                    .getDenseI64ArrayAttr(
                                        {choice->mc, choice->nc, choice->kc}));
  }
  return cache.save(error);
}
