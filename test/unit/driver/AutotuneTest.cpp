//===- AutotuneTest.cpp - --autotune on hand-written linalg ---------------===//
//
// autotuneContractions on a module with one hot matmul: it times the
// candidates through the runtime, records the choice on the op and in the
// cache; a second run takes the cached choice without timing (a tile no
// candidate has proves it); a cache that is not ours is an error that
// leaves the file alone; tiny contractions are not tuned.
//
//===----------------------------------------------------------------------===//
#include "compiler/driver/Autotune.h"
#include "compiler/driver/InitAll.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <catch.hpp>

#include <fstream>
#include <sstream>

using namespace mlir;
using namespace mlir::kiln;

namespace {

const char *kHotMatmul = R"mlir(
func.func @main(%a: tensor<64x256xf32>) -> tensor<64x256xf32> {
  %b = arith.constant dense<0.5> : tensor<256x256xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x256xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<64x256xf32>) -> tensor<64x256xf32>
  %r = linalg.matmul ins(%a, %b : tensor<64x256xf32>, tensor<256x256xf32>)
                     outs(%c : tensor<64x256xf32>) -> tensor<64x256xf32>
  return %r : tensor<64x256xf32>
}
)mlir";

const char *kTinyMatmul = R"mlir(
func.func @main(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x4xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %r = linalg.matmul ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>)
                     outs(%c : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %r : tensor<4x4xf32>
}
)mlir";

struct Fixture {
  Fixture() : context(registry()) {
    llvm::SmallString<128> dir;
    REQUIRE(!llvm::sys::fs::createUniqueDirectory("kiln-autotune-test", dir));
    tempDir = std::string(dir);
    options.cachePath = tempDir + "/cache/autotune.json";
    options.threads = 1;
    pipeline.optLevel = 3;
    pipeline.target = Target::cpu(CpuTarget::host());
  }
  ~Fixture() { llvm::sys::fs::remove_directories(tempDir); }

  static DialectRegistry registry() {
    DialectRegistry r;
    registerAllDialects(r);
    return r;
  }

  /// Tunes `source`; returns the matmul's tile sizes (empty if none).
  std::vector<int64_t> tune(const char *source, std::string &error,
                            LogicalResult &result) {
    OwningOpRef<ModuleOp> module =
        parseSourceString<ModuleOp>(source, &context);
    REQUIRE(module);
    result = autotuneContractions(*module, pipeline, options, error);
    std::vector<int64_t> tiles;
    module->walk([&](linalg::MatmulOp op) {
      if (auto a = op->getAttrOfType<DenseI64ArrayAttr>("kiln.tile_sizes"))
        tiles.assign(a.asArrayRef().begin(), a.asArrayRef().end());
    });
    return tiles;
  }

  std::string readCache() {
    std::ifstream in(options.cachePath);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  MLIRContext context;
  std::string tempDir;
  AutotuneOptions options;
  PipelineOptions pipeline;
};

} // namespace

TEST_CASE("autotune times the candidates and caches the choice", "[autotune]") {
  Fixture f;
  std::string error;
  LogicalResult result = failure();
  std::vector<int64_t> tiles = f.tune(kHotMatmul, error, result);
  INFO(error);
  REQUIRE(succeeded(result));
  REQUIRE(tiles.size() == 3);
  CHECK(tiles[0] > 0);
  CHECK(tiles[1] > 0);
  CHECK(tiles[2] > 0);

  auto parsed = llvm::json::parse(f.readCache());
  REQUIRE(bool(parsed));
  llvm::json::Object *root = parsed->getAsObject();
  REQUIRE(root);
  CHECK(root->getInteger("kiln_autotune") == 1);
  llvm::json::Object *entries = root->getObject("entries");
  REQUIRE(entries);
  REQUIRE(entries->size() == 1);
  std::string key = entries->begin()->first.str();
  CHECK(key.find("linalg.matmul tensor<64x256xf32> const "
                 "tensor<256x256xf32> filled tensor<64x256xf32>") !=
        std::string::npos);
  CHECK(key.find(" threads=1: ") != std::string::npos);
  llvm::json::Array *tile = entries->getObject(key)->getArray("tile");
  REQUIRE(tile);
  CHECK((*tile)[0].getAsInteger() == tiles[0]);

  SECTION("a cached choice is used without timing") {
    // No candidate is 32x64x64: seeing it on the op means the cache was read.
    llvm::json::Object edited{
        {"kiln_autotune", 1},
        {"entries",
         llvm::json::Object{
             {key, llvm::json::Object{{"tile", llvm::json::Array{32, 64, 64}},
                                      {"ms", 1.0}}}}}};
    {
      std::ofstream out(f.options.cachePath);
      out << llvm::formatv("{0}", llvm::json::Value(std::move(edited))).str();
    }
    std::vector<int64_t> cached = f.tune(kHotMatmul, error, result);
    REQUIRE(succeeded(result));
    CHECK(cached == std::vector<int64_t>{32, 64, 64});
  }
}

TEST_CASE("autotune rejects a cache file that is not its own", "[autotune]") {
  Fixture f;
  REQUIRE(!llvm::sys::fs::create_directories(f.tempDir + "/cache"));
  {
    std::ofstream out(f.options.cachePath);
    out << "{\"something\": \"else\"}";
  }
  std::string error;
  LogicalResult result = success();
  std::vector<int64_t> tiles = f.tune(kHotMatmul, error, result);
  CHECK(failed(result));
  CHECK(tiles.empty());
  CHECK(error == "the autotune cache '" + f.options.cachePath +
                     "' is not a Kiln autotune cache (move it away or pass "
                     "--autotune-cache=FILE)");
  CHECK(f.readCache() == "{\"something\": \"else\"}");
}

TEST_CASE("autotune leaves tiny contractions alone", "[autotune]") {
  Fixture f;
  std::string error;
  LogicalResult result = failure();
  std::vector<int64_t> tiles = f.tune(kTinyMatmul, error, result);
  REQUIRE(succeeded(result));
  CHECK(tiles.empty());
  CHECK(!llvm::sys::fs::exists(f.options.cachePath));
}
