//===- HipToolkit.cpp - Toolkit folder, code object report, bundle --------===//
#include "backends/hip/HipToolkit.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/BinaryFormat/ELF.h"
#include "llvm/BinaryFormat/MsgPackDocument.h"
#include "llvm/Object/ELFObjectFile.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <cstdlib>

using namespace mlir;
using namespace mlir::kiln;

#ifndef KILN_ROCM_TOOLKIT
#define KILN_ROCM_TOOLKIT ""
#endif

namespace {
/// What a folder lacks to be a toolkit ("" if nothing).
std::string missingIn(llvm::StringRef root) {
  llvm::SmallString<256> lld(root), ocml(root);
  llvm::sys::path::append(lld, "llvm", "bin", "ld.lld");
  llvm::sys::path::append(ocml, "amdgcn", "bitcode", "ocml.bc");
  if (!llvm::sys::fs::can_execute(lld))
    return lld.str().str();
  if (!llvm::sys::fs::exists(ocml))
    return ocml.str().str();
  return "";
}
} // namespace

FailureOr<HipToolkit> HipToolkit::find(llvm::StringRef hint,
                                       std::string &error) {
  std::vector<std::string> candidates;
  if (!hint.empty()) {
    candidates.push_back(hint.str());
  } else {
    if (const char *env = std::getenv("ROCM_PATH"); env && *env)
      candidates.push_back(env);
    if (*KILN_ROCM_TOOLKIT)
      candidates.push_back(KILN_ROCM_TOOLKIT);
    candidates.push_back("/opt/rocm");
  }
  std::string looked;
  for (const std::string &root : candidates) {
    std::string missing = missingIn(root);
    if (missing.empty())
      return HipToolkit{root};
    looked += (looked.empty() ? "" : ", ") + root + " (no " + missing + ")";
  }
  error = "--target=hip needs ld.lld and ROCm's device libraries (Debian: "
          "lld-22 rocm-device-libs; scripts/install-deps.sh installs them); "
          "looked in " +
          looked +
          " (set ROCM_PATH to a folder with llvm/bin/ld.lld and "
          "amdgcn/bitcode)";
  return failure();
}

namespace {
int64_t uintField(llvm::msgpack::MapDocNode &map, llvm::StringRef key) {
  auto it = map.find(key);
  if (it == map.end())
    return 0;
  llvm::msgpack::DocNode &node = it->second;
  if (node.getKind() == llvm::msgpack::Type::UInt)
    return int64_t(node.getUInt());
  if (node.getKind() == llvm::msgpack::Type::Int)
    return node.getInt();
  return 0;
}
} // namespace

FailureOr<std::map<std::string, KernelResources>>
mlir::kiln::readCodeObjectResources(llvm::StringRef object,
                                    llvm::StringRef arch, std::string &error) {
  auto file = llvm::object::ELF64LEFile::create(object);
  if (!file) {
    error = "the code object for " + arch.str() +
            " is not an ELF file: " + llvm::toString(file.takeError());
    return failure();
  }
  auto sections = file->sections();
  if (!sections) {
    error = llvm::toString(sections.takeError());
    return failure();
  }
  std::map<std::string, KernelResources> resources;
  bool found = false;
  for (const auto &section : *sections) {
    if (section.sh_type != llvm::ELF::SHT_NOTE)
      continue;
    llvm::Error noteError = llvm::Error::success();
    for (const auto &note : file->notes(section, noteError)) {
      if (note.getName() != "AMDGPU" ||
          note.getType() != llvm::ELF::NT_AMDGPU_METADATA)
        continue;
      llvm::msgpack::Document doc;
      llvm::ArrayRef<uint8_t> desc = note.getDesc(section.sh_addralign);
      if (!doc.readFromBlob(
              llvm::StringRef(reinterpret_cast<const char *>(desc.data()),
                              desc.size()),
              /*Multi=*/false))
        continue;
      if (!doc.getRoot().isMap())
        continue;
      llvm::msgpack::DocNode &kernels =
          doc.getRoot().getMap()["amdhsa.kernels"];
      if (!kernels.isArray())
        continue;
      found = true;
      for (llvm::msgpack::DocNode &kernel : kernels.getArray()) {
        if (!kernel.isMap())
          continue;
        llvm::msgpack::MapDocNode &map = kernel.getMap();
        auto name = map.find(".name");
        if (name == map.end() || !name->second.isString())
          continue;
        KernelResources r;
        r.arch = arch.str();
        // On gfx90a and newer the count covers the unified file: arch
        // VGPRs and the AGPRs after them.
        r.registers = uintField(map, ".vgpr_count");
        r.scalarRegisters = uintField(map, ".sgpr_count");
        r.sharedBytes = uintField(map, ".group_segment_fixed_size");
        r.localBytes = uintField(map, ".private_segment_fixed_size");
        // A spilled VGPR is a 4-byte store and load per lane.
        r.spillStoreBytes = 4 * uintField(map, ".vgpr_spill_count");
        r.spillLoadBytes = r.spillStoreBytes;
        r.occupancy =
            cdnaOccupancy(r.registers, r.scalarRegisters, r.sharedBytes,
                          uintField(map, ".max_flat_workgroup_size"));
        resources[name->second.getString().str()] = r;
      }
    }
    if (noteError) {
      error = llvm::toString(std::move(noteError));
      return failure();
    }
  }
  if (!found) {
    error =
        "the code object for " + arch.str() + " has no amdhsa.kernels metadata";
    return failure();
  }
  return resources;
}

int64_t mlir::kiln::cdnaOccupancy(int64_t vgprs, int64_t sgprs,
                                  int64_t ldsBytes, int64_t workgroupSize) {
  constexpr int64_t kMaxWaves = 8, kSimds = 4, kWave = 64;
  int64_t waves = kMaxWaves;
  if (vgprs > 0)
    waves = std::min(waves, 512 / int64_t(llvm::alignTo(vgprs, 8)));
  if (sgprs > 0)
    waves = std::min(waves, 800 / int64_t(llvm::alignTo(sgprs, 16)));
  if (ldsBytes > 0) {
    int64_t groups = (64 * 1024) / ldsBytes;
    int64_t wavesPerGroup =
        std::max<int64_t>(1, llvm::divideCeil(workgroupSize, kWave));
    waves =
        std::min(waves, std::max<int64_t>(1, groups * wavesPerGroup / kSimds));
  }
  return std::max<int64_t>(1, waves);
}

std::string mlir::kiln::writeOffloadBundle(
    llvm::ArrayRef<std::pair<std::string, std::string>> objects) {
  // Layout: magic, entry count, then per entry (offset, size, id length,
  // id); the code objects follow, each 4 KiB-aligned as clang aligns them.
  constexpr llvm::StringLiteral kMagic = "__CLANG_OFFLOAD_BUNDLE__";
  std::vector<std::pair<std::string, llvm::StringRef>> entries;
  entries.push_back({"host-x86_64-unknown-linux-gnu-", ""});
  for (const auto &[arch, object] : objects)
    entries.push_back({"hipv4-amdgcn-amd-amdhsa--" + arch, object});
  uint64_t header = kMagic.size() + 8;
  for (const auto &entry : entries)
    header += 24 + entry.first.size();
  std::vector<uint64_t> offsets;
  uint64_t at = header;
  for (const auto &entry : entries) {
    if (!entry.second.empty())
      at = llvm::alignTo(at, 4096);
    offsets.push_back(at);
    at += entry.second.size();
  }
  std::string bundle(at, '\0');
  char *out = bundle.data();
  std::copy(kMagic.begin(), kMagic.end(), out);
  out += kMagic.size();
  auto put = [&](uint64_t value) {
    llvm::support::endian::write64le(out, value);
    out += 8;
  };
  put(entries.size());
  for (size_t i = 0; i < entries.size(); ++i) {
    put(offsets[i]);
    put(entries[i].second.size());
    put(entries[i].first.size());
    out = std::copy(entries[i].first.begin(), entries[i].first.end(), out);
  }
  for (size_t i = 0; i < entries.size(); ++i)
    std::copy(entries[i].second.begin(), entries[i].second.end(),
              bundle.data() + offsets[i]);
  return bundle;
}
