//===- ArtifactWriterTest.cpp - Descriptor, exports, sections, atomicity --===//
#include "BackendTestSupport.h"

#include "llvm/Support/FileSystem.h"

#include <catch.hpp>

#include <sstream>

#include <cstring>
#include <fstream>

using namespace kiln_test;
using mlir::kiln::ArtifactSpec;
using mlir::kiln::CpuTarget;

namespace {
// A model with an intermediate buffer and 4 KiB of weights.
std::string scaleModel() {
  std::vector<float> w(1024);
  for (int i = 0; i < 1024; ++i)
    w[i] = float(i % 7);
  return R"(
#id = affine_map<(i, j) -> (i, j)>
func.func @main(%x: tensor<4x256xf32>, %y: tensor<4x256xf32>) -> tensor<4x256xf32> {
  %w = arith.constant dense_resource<w> : tensor<4x256xf32>
  %e = tensor.empty() : tensor<4x256xf32>
  %t = linalg.transpose ins(%x : tensor<4x256xf32>) outs(%e : tensor<4x256xf32>) permutation = [0, 1]
  %p = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%t, %w : tensor<4x256xf32>, tensor<4x256xf32>) outs(%e : tensor<4x256xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<4x256xf32>
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p, %y : tensor<4x256xf32>, tensor<4x256xf32>) outs(%e : tensor<4x256xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<4x256xf32>
  return %r : tensor<4x256xf32>
}
)" + resourceSection({{"w", bytesOf(w)}});
}

ArtifactSpec scaleSpec() {
  return {"scale-model",
          {{"input_x", KILN_DTYPE_F32, {4, 256}},
           {"input_y", KILN_DTYPE_F32, {4, 256}}},
          {{"output", KILN_DTYPE_F32, {4, 256}}}};
}

std::vector<std::string> filesIn(const std::string &dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
       it.increment(ec))
    names.push_back(it->path());
  return names;
}
} // namespace

TEST_CASE("the descriptor matches the spec and the target",
          "[artifact_writer]") {
  auto artifact = compileAndLoad(scaleModel(), scaleSpec());
  const kiln_artifact_descriptor *d = artifact->descriptor;
  CpuTarget host = CpuTarget::host();
  CHECK(d->abi_version == KILN_ABI_VERSION);
  CHECK(std::string(d->target_triple) == host.triple);
  CHECK(std::string(d->target_cpu) == host.cpu);
  CHECK(std::string(d->target_features) == host.features);
  CHECK(std::string(d->model_name) == "scale-model");
  CHECK(std::string(d->producer).rfind("kiln ", 0) == 0);
  REQUIRE(d->num_inputs == 2);
  REQUIRE(d->num_outputs == 1);
  CHECK(std::string(d->inputs[0].name) == "input_x");
  CHECK(std::string(d->inputs[1].name) == "input_y");
  CHECK(std::string(d->outputs[0].name) == "output");
  CHECK(d->inputs[1].dtype == KILN_DTYPE_F32);
  REQUIRE(d->outputs[0].rank == 2);
  CHECK(d->outputs[0].shape[0] == 4);
  CHECK(d->outputs[0].shape[1] == 256);
  CHECK(d->weights_size == 4096);
  CHECK(d->entry != nullptr);

  std::vector<float> x(1024), y(1024), out(1024);
  for (int i = 0; i < 1024; ++i) {
    x[i] = float(i);
    y[i] = 0.5f;
  }
  REQUIRE(artifact->run({x.data(), y.data()}, {out.data()}) == 0);
  for (int i = 0; i < 1024; ++i)
    CHECK(out[i] == float(i) * float(i % 7) + 0.5f);
}

TEST_CASE("only kiln_artifact is exported and nothing allocates",
          "[artifact_writer]") {
  auto artifact = compileAndLoad(scaleModel(), scaleSpec());
  CHECK(dynamicSymbols(artifact->path, "--defined-only") ==
        std::vector<std::string>{"kiln_artifact"});
  for (const std::string &symbol :
       dynamicSymbols(artifact->path, "--undefined-only")) {
    INFO(symbol);
    CHECK(symbol.find("malloc") == std::string::npos);
    CHECK(symbol.find("free") == std::string::npos);
    CHECK(symbol.find("memrefCopy") == std::string::npos);
  }
}

TEST_CASE("weights live in their own unloaded, page-aligned section",
          "[artifact_writer]") {
  auto artifact = compileAndLoad(scaleModel(), scaleSpec());
  std::string sections =
      runLLVMTool("llvm-readelf", "--sections --wide " + artifact->path);
  size_t at = sections.find(".kiln.weights");
  REQUIRE(at != std::string::npos);
  std::string line = sections.substr(at, sections.find('\n', at) - at);
  INFO(line);
  // Columns after the name: Type Address Off Size ES Flg Lk Inf Al. No
  // flags: not allocated, so dlopen does not load it; the runtime maps it.
  std::istringstream columns(line);
  std::string name, type, address, offset, size, entrySize, link, info, align;
  columns >> name >> type >> address >> offset >> size >> entrySize >> link >>
      info >> align;
  CHECK(type == "PROGBITS");
  CHECK(std::stoull(address, nullptr, 16) == 0);
  CHECK(std::stoull(offset, nullptr, 16) % 4096 == 0);
  CHECK(std::stoull(size, nullptr, 16) == 4096);
  CHECK(align == "64");
  // No program header covers it: the section-to-segment map lists it under
  // "None".
  std::string segments =
      runLLVMTool("llvm-readelf", "--segments --wide " + artifact->path);
  size_t mapped = segments.find(".kiln.weights");
  REQUIRE(mapped != std::string::npos);
  size_t lineStart = segments.rfind('\n', mapped) + 1;
  INFO(segments.substr(lineStart, mapped - lineStart));
  CHECK(segments.substr(lineStart, mapped - lineStart).find("None") !=
        std::string::npos);
  // Its bytes are the constant, as the test harness read them.
  const float *w = static_cast<const float *>(artifact->weights);
  for (int i = 0; i < 1024; ++i)
    CHECK(w[i] == float(i % 7));
}

TEST_CASE("a failed write leaves nothing behind", "[artifact_writer]") {
  TempDir dir;
  std::string output = dir.file("model.so");
  // Two inputs in the module, one in the spec.
  ArtifactSpec spec = scaleSpec();
  spec.inputs.pop_back();
  std::string error =
      compileToFile(scaleModel(), spec, CpuTarget::host(), output);
  CHECK(error.find("@main must return nothing and take 4 pointers") !=
        std::string::npos);
  CHECK(filesIn(dir.path).empty());

  // An existing file is replaced only by a complete artifact.
  {
    std::ofstream previous(output);
    previous << "previous";
  }
  CHECK(!compileToFile(scaleModel(), spec, CpuTarget::host(), output).empty());
  CHECK(filesIn(dir.path) == std::vector<std::string>{output});
  CHECK(compileToFile(scaleModel(), scaleSpec(), CpuTarget::host(), output)
            .empty());
  CHECK(filesIn(dir.path) == std::vector<std::string>{output});
  uint64_t size = 0;
  llvm::sys::fs::file_size(output, size);
  CHECK(size > 4096);

  CHECK(compileToFile(scaleModel(), scaleSpec(), CpuTarget::host(),
                      dir.file("missing/dir/model.so"))
            .find("cannot create a file in") != std::string::npos);
}

TEST_CASE("cross compiling for aarch64 and -O0", "[artifact_writer]") {
  TempDir dir;
  std::string error;
  auto target = CpuTarget::fromFlags("aarch64", "neoverse-n1", error);
  REQUIRE(mlir::succeeded(target));
  std::string output = dir.file("model-aarch64.so");
  error = compileToFile(scaleModel(), scaleSpec(), *target, output);
  INFO(error);
  REQUIRE(error.empty());
  std::string header = runLLVMTool("llvm-readelf", "--file-header " + output);
  CHECK(header.find("AArch64") != std::string::npos);
  CHECK(header.find("DYN") != std::string::npos);
  CHECK(dynamicSymbols(output, "--defined-only") ==
        std::vector<std::string>{"kiln_artifact"});

  auto artifact = compileAndLoad(scaleModel(), scaleSpec(), /*optLevel=*/0);
  std::vector<float> x(1024, 2.f), y(1024, 1.f), out(1024);
  REQUIRE(artifact->run({x.data(), y.data()}, {out.data()}) == 0);
  for (int i = 0; i < 1024; ++i)
    CHECK(out[i] == 2.f * float(i % 7) + 1.f);
}
