//===- WeightsSection.cpp - Weights appended to a linked artifact ---------===//
//
// The linker lays out code and descriptor; the weights are added afterwards
// by rewriting only what ELF needs to name a new section: the old section
// name table and section header table stay where they are as unused bytes,
// and new ones follow the weights at the end of the file.
//
//===----------------------------------------------------------------------===//
#include "backends/common/WeightsSection.h"

#include "kiln/abi.h"

#include "mlir/IR/DialectResourceBlobManager.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/BinaryFormat/ELF.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/SwapByteOrder.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

using namespace mlir;
using namespace mlir::kiln;
using namespace llvm::ELF;

namespace {
/// A page: the runtime maps the section from its offset as it is (it rounds
/// down where pages are larger, as on some aarch64 kernels).
constexpr uint64_t kSectionFileAlignment = 4096;

/// A file opened for update; closes itself.
class File {
public:
  File(StringRef path) : path(path.str()) {
    fd = ::open(this->path.c_str(), O_RDWR | O_CLOEXEC);
  }
  ~File() {
    if (fd >= 0)
      ::close(fd);
  }
  bool isOpen() const { return fd >= 0; }

  bool readAt(uint64_t offset, void *data, uint64_t size) {
    char *out = static_cast<char *>(data);
    while (size) {
      ssize_t n = ::pread(fd, out, size, offset);
      if (n <= 0)
        return false;
      out += n, offset += n, size -= n;
    }
    return true;
  }

  bool writeAt(uint64_t offset, const void *data, uint64_t size) {
    const char *in = static_cast<const char *>(data);
    while (size) {
      // Linux writes at most about 2 GiB per call.
      ssize_t n = ::pwrite(fd, in, std::min<uint64_t>(size, 1u << 30), offset);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return false;
      in += n, offset += n, size -= n;
    }
    return true;
  }

  uint64_t size() {
    struct stat st;
    return ::fstat(fd, &st) == 0 ? uint64_t(st.st_size) : 0;
  }

private:
  std::string path;
  int fd = -1;
};
} // namespace

std::optional<uint64_t> mlir::kiln::weightMemoryBytes(ElementsAttr value) {
  Type element = value.getShapedType().getElementType();
  unsigned bits = element.isIntOrFloat() ? element.getIntOrFloatBitWidth() : 0;
  if (bits != 1 && bits % 8 != 0)
    return std::nullopt;
  return uint64_t(value.getNumElements()) * (bits == 1 ? 1 : bits / 8);
}

/// The in-memory bytes of `value`: a view of its data, or for i1 (stored as
/// bits) the bytes written into `scratch`.
static ArrayRef<char> pieceBytes(ElementsAttr value,
                                 std::vector<char> &scratch) {
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(value))
    return resource.getRawHandle().getBlob()->getData();
  auto dense = cast<DenseElementsAttr>(value);
  if (!dense.getElementType().isInteger(1))
    return dense.getRawData();
  scratch.clear();
  for (bool bit : dense.getValues<bool>())
    scratch.push_back(bit ? 1 : 0);
  return scratch;
}

FailureOr<WeightsLayout> mlir::kiln::readWeightsLayout(Attribute attr,
                                                       std::string &error) {
  auto dict = dyn_cast_or_null<DictionaryAttr>(attr);
  auto offsets = dict ? dict.getAs<DenseI64ArrayAttr>("offsets") : nullptr;
  auto size = dict ? dict.getAs<IntegerAttr>("size") : nullptr;
  auto values = dict ? dict.getAs<ArrayAttr>("values") : nullptr;
  if (!offsets || !size || !values ||
      offsets.size() != int64_t(values.size()) || size.getInt() < 0) {
    error = "kiln.weights must be {offsets = array<i64: ...>, size = N : i64, "
            "values = [...]} with one offset per value";
    return failure();
  }
  WeightsLayout layout;
  layout.size = size.getInt();
  uint64_t end = 0;
  for (auto [offset, attr] : llvm::zip(offsets.asArrayRef(), values)) {
    auto value = dyn_cast<ElementsAttr>(attr);
    auto dense = dyn_cast_or_null<DenseElementsAttr>(value);
    auto resource = dyn_cast_or_null<DenseResourceElementsAttr>(value);
    std::optional<uint64_t> bytes =
        value ? weightMemoryBytes(value) : std::optional<uint64_t>();
    if (!bytes || (!dense && !resource) || (dense && dense.isSplat())) {
      error = "kiln.weights value " + std::to_string(layout.pieces.size()) +
              " is not a non-splat dense or dense_resource constant";
      return failure();
    }
    if (resource &&
        (!resource.getRawHandle().getBlob() ||
         resource.getRawHandle().getBlob()->getData().size() != *bytes)) {
      error = "the data of weight '" + resource.getRawHandle().getKey().str() +
              "' is missing or not the size its type needs";
      return failure();
    }
    if (offset < 0 || uint64_t(offset) < end || offset % KILN_ALIGNMENT ||
        *bytes > layout.size - std::min<uint64_t>(offset, layout.size)) {
      error = "kiln.weights offset " + std::to_string(offset) +
              " is out of order, unaligned or past the area's size";
      return failure();
    }
    end = offset + *bytes;
    layout.pieces.emplace_back(offset, value);
  }
  return layout;
}

LogicalResult mlir::kiln::appendWeightsSection(StringRef path,
                                               const WeightsLayout &weights,
                                               std::string &error) {
  auto fail = [&](const std::string &what) {
    error = "cannot add the weights to '" + path.str() + "': " + what;
    return failure();
  };
  if (!llvm::sys::IsLittleEndianHost)
    return fail("the compiler writes ELF headers only on little-endian hosts");
  File file(path);
  if (!file.isOpen())
    return fail(std::strerror(errno));
  uint64_t fileSize = file.size();

  Elf64_Ehdr header;
  if (!file.readAt(0, &header, sizeof(header)) ||
      std::memcmp(header.e_ident, ElfMagic, 4) != 0 ||
      header.e_ident[EI_CLASS] != ELFCLASS64 ||
      header.e_ident[EI_DATA] != ELFDATA2LSB)
    return fail("not a 64-bit little-endian ELF file");
  if (header.e_shentsize != sizeof(Elf64_Shdr) || header.e_shnum == 0 ||
      header.e_shnum >= SHN_LORESERVE - 1 ||
      header.e_shstrndx >= header.e_shnum || header.e_shoff > fileSize ||
      header.e_shnum * sizeof(Elf64_Shdr) > fileSize - header.e_shoff)
    return fail("its section header table is missing or malformed");

  std::vector<Elf64_Shdr> sections(header.e_shnum);
  if (!file.readAt(header.e_shoff, sections.data(),
                   sections.size() * sizeof(Elf64_Shdr)))
    return fail("cannot read its section headers");
  // Room for the added section first: `names` must stay valid past the
  // push_back below (ASan found it read after the vector moved).
  sections.reserve(sections.size() + 1);
  Elf64_Shdr &names = sections[header.e_shstrndx];
  if (names.sh_type != SHT_STRTAB || names.sh_offset > fileSize ||
      names.sh_size > fileSize - names.sh_offset)
    return fail("its section name table is malformed");
  std::vector<char> nameTable(names.sh_size);
  if (!file.readAt(names.sh_offset, nameTable.data(), nameTable.size()))
    return fail("cannot read its section name table");
  for (const Elf64_Shdr &section : sections)
    if (section.sh_name < nameTable.size() &&
        StringRef(nameTable.data() + section.sh_name,
                  strnlen(nameTable.data() + section.sh_name,
                          nameTable.size() - section.sh_name)) ==
            KILN_WEIGHTS_SECTION)
      return fail("it already has a " KILN_WEIGHTS_SECTION " section");

  Elf64_Shdr added{};
  added.sh_name = nameTable.size();
  added.sh_type = SHT_PROGBITS;
  added.sh_offset = llvm::alignTo(fileSize, kSectionFileAlignment);
  added.sh_size = weights.size;
  added.sh_addralign = KILN_ALIGNMENT;
  nameTable.insert(nameTable.end(), KILN_WEIGHTS_SECTION,
                   KILN_WEIGHTS_SECTION + sizeof(KILN_WEIGHTS_SECTION));

  names.sh_offset = added.sh_offset + added.sh_size;
  names.sh_size = nameTable.size();
  sections.push_back(added);
  header.e_shoff = llvm::alignTo(names.sh_offset + names.sh_size, 8);
  header.e_shnum = sections.size();

  // The gap before the weights reads as zeros.
  errno = 0;
  std::vector<char> scratch;
  for (const auto &[offset, value] : weights.pieces) {
    ArrayRef<char> bytes = pieceBytes(value, scratch);
    if (!file.writeAt(added.sh_offset + offset, bytes.data(), bytes.size()))
      return fail(std::strerror(errno ? errno : ENOSPC));
  }
  // Gaps between and after the pieces read as zeros: the name table written
  // next extends the file past them.
  if (!file.writeAt(names.sh_offset, nameTable.data(), nameTable.size()) ||
      !file.writeAt(header.e_shoff, sections.data(),
                    sections.size() * sizeof(Elf64_Shdr)) ||
      !file.writeAt(0, &header, sizeof(header)))
    return fail(std::strerror(errno ? errno : ENOSPC));
  return success();
}
