// The HIP leaf's pieces that need no toolkit: the offload bundle's layout
// (read back as clang-offload-bundler and the HIP runtime read it), the
// occupancy estimate, and a code object without metadata.
#include <catch.hpp>

#include "backends/hip/HipToolkit.h"

#include "llvm/Support/Endian.h"

#include <cstring>

using namespace mlir::kiln;

namespace {
struct Entry {
  std::string id;
  std::string bytes;
  uint64_t offset;
};

std::vector<Entry> readBundle(const std::string &bundle) {
  std::vector<Entry> entries;
  REQUIRE(bundle.compare(0, 24, "__CLANG_OFFLOAD_BUNDLE__") == 0);
  const char *at = bundle.data() + 24;
  auto next = [&] {
    uint64_t value = llvm::support::endian::read64le(at);
    at += 8;
    return value;
  };
  uint64_t count = next();
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t offset = next(), size = next(), idSize = next();
    std::string id(at, idSize);
    at += idSize;
    REQUIRE(offset + size <= bundle.size());
    entries.push_back({id, bundle.substr(offset, size), offset});
  }
  return entries;
}
} // namespace

TEST_CASE("the offload bundle holds a host entry and a code object per arch",
          "[hip_toolkit]") {
  std::string bundle = writeOffloadBundle({{"gfx90a", "\x7f"
                                                      "ELF-a"},
                                           {"gfx942", "\x7f"
                                                      "ELF-bb"}});
  std::vector<Entry> entries = readBundle(bundle);
  REQUIRE(entries.size() == 3);
  CHECK(entries[0].id == "host-x86_64-unknown-linux-gnu-");
  CHECK(entries[0].bytes.empty());
  CHECK(entries[1].id == "hipv4-amdgcn-amd-amdhsa--gfx90a");
  CHECK(entries[1].bytes == "\x7f"
                            "ELF-a");
  CHECK(entries[2].id == "hipv4-amdgcn-amd-amdhsa--gfx942");
  CHECK(entries[2].bytes == "\x7f"
                            "ELF-bb");
  // Code objects start on 4 KiB boundaries, as clang places them.
  CHECK(entries[1].offset % 4096 == 0);
  CHECK(entries[2].offset % 4096 == 0);
}

TEST_CASE("occupancy follows VGPRs, SGPRs and LDS", "[hip_toolkit]") {
  CHECK(cdnaOccupancy(32, 16, 0, 256) == 8);  // capped at 8 waves
  CHECK(cdnaOccupancy(128, 16, 0, 256) == 4); // 512 / 128
  CHECK(cdnaOccupancy(119, 16, 0, 64) == 4);  // 119 rounds up to 120
  CHECK(cdnaOccupancy(512, 16, 0, 64) == 1);  // the whole file
  CHECK(cdnaOccupancy(16, 102, 0, 256) == 7); // 800 / 112 SGPRs
  // 2 workgroups of 4 waves fit in 64 KiB of LDS: 8 waves on 4 SIMDs.
  CHECK(cdnaOccupancy(16, 16, 32 * 1024, 256) == 2);
  CHECK(cdnaOccupancy(16, 16, 60 * 1024, 64) == 1); // never below one
}

TEST_CASE("a code object must carry its metadata", "[hip_toolkit]") {
  std::string error;
  CHECK(mlir::failed(readCodeObjectResources("not an ELF", "gfx942", error)));
  CHECK(error.rfind("the code object for gfx942 is not an ELF file", 0) == 0);
}
