//===- BackendTestSupport.cpp - Compile, load and run test artifacts ------===//
#include "BackendTestSupport.h"

#include "backends/cpu/CpuPipeline.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/Object/ObjectFile.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <catch.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <random>
#include <sstream>
#include <thread>

using namespace kiln_test;

TempDir::TempDir() {
  llvm::SmallString<128> dir;
  REQUIRE(!llvm::sys::fs::createUniqueDirectory("kiln-backend-test", dir));
  path = std::string(dir);
}

TempDir::~TempDir() { llvm::sys::fs::remove_directories(path); }

LoadedArtifact::~LoadedArtifact() {
  if (handle)
    dlclose(handle);
  std::free(weights);
}

namespace {
/// A parallel_for that really runs chunks concurrently, one std::thread
/// each, so races in generated code have a chance to show.
struct TestPool {
  int threads;
  std::atomic<int> calls{0};
};

void testParallelFor(void *pool, int64_t n, kiln_parallel_body body,
                     void *ctx) {
  auto *testPool = static_cast<TestPool *>(pool);
  ++testPool->calls;
  int64_t chunks = std::min<int64_t>(testPool->threads, n);
  std::vector<std::thread> workers;
  for (int64_t i = 1; i < chunks; ++i)
    workers.emplace_back(
        [=] { body(ctx, n * i / chunks, n * (i + 1) / chunks); });
  body(ctx, 0, n / chunks);
  for (std::thread &worker : workers)
    worker.join();
}
} // namespace

int32_t LoadedArtifact::run(const std::vector<const void *> &inputs,
                            const std::vector<void *> &outputs,
                            int threads) const {
  size_t size = (descriptor->arena_size + KILN_ALIGNMENT - 1) / KILN_ALIGNMENT *
                KILN_ALIGNMENT;
  void *arena =
      std::aligned_alloc(KILN_ALIGNMENT, size ? size : KILN_ALIGNMENT);
  std::memset(arena, 0xA5, size);
  TestPool pool{threads};
  kiln_runtime_callbacks callbacks{};
  callbacks.abi_version = KILN_ABI_VERSION;
  callbacks.num_threads = std::max(threads, 1);
  callbacks.pool = threads ? &pool : nullptr;
  if (threads > 1)
    callbacks.parallel_for = testParallelFor;
  callbacks.weights = weights;
  int32_t status = descriptor->entry(const_cast<void *const *>(inputs.data()),
                                     outputs.data(), arena, &callbacks);
  lastParallelCalls = pool.calls;
  std::free(arena);
  return status;
}

std::string kiln_test::compileToFile(const std::string &mlirSource,
                                     const mlir::kiln::ArtifactSpec &spec,
                                     const mlir::kiln::CpuTarget &target,
                                     const std::string &outputPath,
                                     int optLevel, int64_t winograd) {
  mlir::DialectRegistry registry;
  mlir::kiln::registerCpuBackendDialects(registry);
  mlir::MLIRContext context(registry);
  std::string diagnostics;
  llvm::raw_string_ostream diagStream(diagnostics);
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &diag) {
    diagStream << diag.getLocation() << ": " << diag << "\n";
    return mlir::success();
  });
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(mlirSource, &context);
  if (!module)
    return "parse error: " + diagnostics;
  mlir::PassManager pm(&context);
  // KILN_TEST_DUMP_IR=1 prints the IR after every pass, for debugging.
  if (std::getenv("KILN_TEST_DUMP_IR")) {
    context.disableMultithreading();
    pm.enableIRPrinting();
  }
  mlir::kiln::CpuCodegenOptions options{target, optLevel};
  options.winograd = winograd;
  mlir::kiln::buildCpuCodegenPipeline(pm, options);
  if (mlir::failed(pm.run(*module)))
    return "pipeline failed: " + diagnostics;
  std::string error;
  if (mlir::failed(mlir::kiln::writeArtifact(*module, spec,
                                             mlir::kiln::Target::cpu(target),
                                             optLevel, outputPath, error)))
    return "writeArtifact failed: " + error;
  return "";
}

void *kiln_test::readWeightsSection(const std::string &path, uint64_t size) {
  if (!size)
    return nullptr;
  auto file = llvm::object::ObjectFile::createObjectFile(path);
  REQUIRE(bool(file));
  for (const llvm::object::SectionRef &section :
       file->getBinary()->sections()) {
    llvm::Expected<llvm::StringRef> name = section.getName();
    if (!name || *name != KILN_WEIGHTS_SECTION)
      continue;
    llvm::Expected<llvm::StringRef> bytes = section.getContents();
    REQUIRE(bool(bytes));
    REQUIRE(bytes->size() == size);
    void *weights =
        std::aligned_alloc(KILN_ALIGNMENT, llvm::alignTo(size, KILN_ALIGNMENT));
    std::memcpy(weights, bytes->data(), size);
    return weights;
  }
  FAIL("no " KILN_WEIGHTS_SECTION " section in " << path);
  return nullptr;
}

std::unique_ptr<LoadedArtifact>
kiln_test::compileAndLoad(const std::string &mlirSource,
                          const mlir::kiln::ArtifactSpec &spec, int optLevel,
                          int64_t winograd) {
  auto artifact = std::make_unique<LoadedArtifact>();
  artifact->path = artifact->dir.file("model.so");
  std::string error =
      compileToFile(mlirSource, spec, mlir::kiln::CpuTarget::host(),
                    artifact->path, optLevel, winograd);
  INFO(error);
  REQUIRE(error.empty());
  artifact->handle = dlopen(artifact->path.c_str(), RTLD_NOW | RTLD_LOCAL);
  INFO((artifact->handle ? "" : dlerror()));
  REQUIRE(artifact->handle);
  auto fn = reinterpret_cast<kiln_artifact_fn>(
      dlsym(artifact->handle, KILN_ARTIFACT_SYMBOL));
  REQUIRE(fn);
  artifact->descriptor = fn();
  REQUIRE(artifact->descriptor);
  artifact->weights =
      readWeightsSection(artifact->path, artifact->descriptor->weights_size);
  REQUIRE(artifact->descriptor->magic == KILN_ARTIFACT_MAGIC);
  return artifact;
}

std::string kiln_test::resourceSection(
    const std::vector<std::pair<std::string, std::vector<char>>> &blobs) {
  std::ostringstream out;
  out << "{-#\n  dialect_resources: {\n    builtin: {\n";
  for (size_t i = 0; i < blobs.size(); ++i) {
    // The textual form starts with the blob's alignment as a 32-bit LE word.
    out << "      " << blobs[i].first << ": \"0x10000000";
    static const char digits[] = "0123456789ABCDEF";
    for (char c : blobs[i].second) {
      unsigned char byte = static_cast<unsigned char>(c);
      out << digits[byte >> 4] << digits[byte & 15];
    }
    out << "\"" << (i + 1 < blobs.size() ? "," : "") << "\n";
  }
  out << "    }\n  }\n#-}\n";
  return out.str();
}

std::string kiln_test::runLLVMTool(const std::string &tool,
                                   const std::string &args) {
  std::string command =
      std::string(KILN_LLVM_TOOLS_DIR) + "/" + tool + " " + args;
  FILE *pipe = popen(command.c_str(), "r");
  REQUIRE(pipe);
  std::string output;
  char buffer[4096];
  while (size_t n = fread(buffer, 1, sizeof buffer, pipe))
    output.append(buffer, n);
  REQUIRE(pclose(pipe) == 0);
  return output;
}

std::vector<std::string> kiln_test::dynamicSymbols(const std::string &path,
                                                   const std::string &flag) {
  std::istringstream lines(runLLVMTool("llvm-nm", "-D " + flag + " " + path));
  std::vector<std::string> names;
  std::string line;
  while (std::getline(lines, line)) {
    size_t space = line.find_last_of(' ');
    if (!line.empty())
      names.push_back(space == std::string::npos ? line
                                                 : line.substr(space + 1));
  }
  return names;
}

std::vector<double>
kiln_test::nhwcConvReference(const NhwcConvShape &s,
                             const std::vector<float> &x,
                             const std::vector<float> &filter) {
  int64_t oh = s.outH(), ow = s.outW(), outC = s.outC();
  std::vector<double> y(s.batch * oh * ow * outC, 0.0);
  for (int64_t b = 0; b < s.batch; ++b)
    for (int64_t oy = 0; oy < oh; ++oy)
      for (int64_t ox = 0; ox < ow; ++ox)
        for (int64_t o = 0; o < outC; ++o) {
          double acc = 0;
          for (int64_t ky = 0; ky < s.k; ++ky)
            for (int64_t kx = 0; kx < s.k; ++kx) {
              int64_t iy = oy * s.stride + ky * s.dilation - s.pad;
              int64_t ix = ox * s.stride + kx * s.dilation - s.pad;
              if (iy < 0 || iy >= s.h || ix < 0 || ix >= s.w)
                continue;
              const float *pixel = &x[((b * s.h + iy) * s.w + ix) * s.c];
              const float *taps =
                  &filter[(ky * s.k + kx) * s.c * (s.depthwise ? 1 : s.f)];
              if (s.depthwise) {
                acc += double(pixel[o]) * taps[o];
                continue;
              }
              for (int64_t c = 0; c < s.c; ++c)
                acc += double(pixel[c]) * taps[c * s.f + o];
            }
          y[((b * oh + oy) * ow + ox) * outC + o] = acc;
        }
  return y;
}

std::vector<float> kiln_test::randomFloats(size_t count, unsigned seed,
                                           float lo, float hi) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> values(count);
  for (float &v : values)
    v = dist(rng);
  return values;
}

std::string kiln_test::tensorType(const std::vector<int64_t> &shape) {
  std::string s = "tensor<";
  for (int64_t d : shape)
    s += std::to_string(d) + "x";
  return s + "f32>";
}

void kiln_test::checkClose(const std::vector<float> &got,
                           const std::vector<double> &want, double tolerance) {
  REQUIRE(got.size() == want.size());
  size_t bad = 0;
  for (size_t i = 0; i < got.size(); ++i)
    if (!(std::fabs(got[i] - want[i]) <= tolerance * (1 + std::fabs(want[i]))))
      if (bad++ < 5)
        FAIL_CHECK("element " << i << ": got " << got[i] << ", want "
                              << want[i]);
  CHECK(bad == 0);
}
