//===- CpuTargetTest.cpp - --target / --cpu parsing -----------------------===//
#include "backends/common/CpuTarget.h"

#include "llvm/TargetParser/Triple.h"

#include <catch.hpp>

using mlir::kiln::CpuTarget;

TEST_CASE("accepted target spellings normalize to full triples",
          "[cpu_target]") {
  std::string error;
  for (const char *spelling :
       {"x86_64", "x86_64-linux-gnu", "x86_64-unknown-linux-gnu"}) {
    auto target = CpuTarget::fromFlags(spelling, "generic", error);
    INFO(spelling << ": " << error);
    REQUIRE(mlir::succeeded(target));
    CHECK(target->triple == "x86_64-unknown-linux-gnu");
    CHECK(target->cpu == "generic");
  }
  for (const char *spelling : {"aarch64", "aarch64-linux-gnu"}) {
    auto target = CpuTarget::fromFlags(spelling, "neoverse-n1", error);
    INFO(spelling << ": " << error);
    REQUIRE(mlir::succeeded(target));
    CHECK(target->triple == "aarch64-unknown-linux-gnu");
    CHECK(target->cpu == "neoverse-n1");
  }
  auto zen = CpuTarget::fromFlags("x86_64", "znver5", error);
  REQUIRE(mlir::succeeded(zen));
  CHECK(zen->cpu == "znver5");
}

TEST_CASE("host and native describe this machine", "[cpu_target]") {
  CpuTarget host = CpuTarget::host();
  CHECK(host.triple.find("-unknown-linux-gnu") != std::string::npos);
  CHECK(!host.cpu.empty());
  std::string error;
  auto native = CpuTarget::fromFlags("", "", error);
  REQUIRE(mlir::succeeded(native));
  CHECK(native->triple == host.triple);
  CHECK(native->cpu == host.cpu);
  CHECK(native->features == host.features);
  auto explicitNative = CpuTarget::fromFlags(host.triple, "native", error);
  REQUIRE(mlir::succeeded(explicitNative));
  CHECK(explicitNative->cpu == host.cpu);
}

TEST_CASE("unknown flags are rejected with the accepted values",
          "[cpu_target]") {
  std::string error;
  CHECK(mlir::failed(CpuTarget::fromFlags("riscv64", "", error)));
  CHECK(error.find("'riscv64'") != std::string::npos);
  CHECK(error.find("aarch64-linux-gnu") != std::string::npos);

  CHECK(mlir::failed(CpuTarget::fromFlags("x86_64-apple-darwin", "", error)));
  CHECK(error.find("x86_64-apple-darwin") != std::string::npos);

  CHECK(mlir::failed(CpuTarget::fromFlags("x86_64", "pentium-9000", error)));
  CHECK(error.find("'pentium-9000'") != std::string::npos);
  CHECK(error.find("generic") != std::string::npos);

  // A CPU of the other architecture is not a CPU of this one.
  CHECK(mlir::failed(CpuTarget::fromFlags("aarch64", "znver5", error)));
  CHECK(error.find("znver5") != std::string::npos);

  // native only makes sense for the host's architecture.
  llvm::Triple host(CpuTarget::host().triple);
  const char *foreign = host.isAArch64() ? "x86_64" : "aarch64";
  CHECK(mlir::failed(CpuTarget::fromFlags(foreign, "native", error)));
  CHECK(error.find("native") != std::string::npos);
}
