// Maps an artifact's weights section. The section is found through the
// section header table the way readelf would, with every offset and size
// checked against the file, since the file is read before anything else in
// it is trusted.
#include "weights_map.h"

#include "status.h"

#include <cerrno>
#include <cstring>
#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace kiln::rt {
namespace {

// Closes the descriptor on every path out.
struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0)
      ::close(fd);
  }
};

bool readAt(int fd, uint64_t offset, void *data, size_t size) {
  char *out = static_cast<char *>(data);
  while (size) {
    ssize_t n = ::pread(fd, out, size, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    out += n, offset += n, size -= n;
  }
  return true;
}

// Whether [offset, offset + size) lies inside a file of `fileSize` bytes.
bool inside(uint64_t offset, uint64_t size, uint64_t fileSize) {
  return offset <= fileSize && size <= fileSize - offset;
}

} // namespace

MappedWeights::~MappedWeights() {
  if (mapping_)
    ::munmap(mapping_, length_);
}

kiln_status MappedWeights::map(const std::string &path, uint64_t size) {
  auto bad = [&](const std::string &what) {
    return fail(KILN_ERROR_BAD_ARTIFACT, quoted(path) + " " + what);
  };
  Fd file{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  struct stat st;
  if (file.fd < 0 || ::fstat(file.fd, &st) != 0)
    return fail(KILN_ERROR_IO,
                "cannot open " + quoted(path) + ": " + std::strerror(errno));
  uint64_t fileSize = static_cast<uint64_t>(st.st_size);

  Elf64_Ehdr header;
  if (!readAt(file.fd, 0, &header, sizeof header) ||
      header.e_ident[EI_CLASS] != ELFCLASS64)
    return bad("is not a 64-bit ELF file");
  if (header.e_shentsize != sizeof(Elf64_Shdr) ||
      header.e_shstrndx >= header.e_shnum ||
      !inside(header.e_shoff, uint64_t(header.e_shnum) * sizeof(Elf64_Shdr),
              fileSize))
    return bad("has a malformed or truncated section header table");
  std::vector<Elf64_Shdr> sections(header.e_shnum);
  if (!readAt(file.fd, header.e_shoff, sections.data(),
              sections.size() * sizeof(Elf64_Shdr)))
    return bad("has an unreadable section header table");
  const Elf64_Shdr &names = sections[header.e_shstrndx];
  if (!inside(names.sh_offset, names.sh_size, fileSize) ||
      names.sh_size > (64u << 20))
    return bad("has a malformed section name table");
  std::vector<char> table(names.sh_size + 1, '\0');
  if (!readAt(file.fd, names.sh_offset, table.data(), names.sh_size))
    return bad("has an unreadable section name table");

  const Elf64_Shdr *found = nullptr;
  for (const Elf64_Shdr &section : sections)
    if (section.sh_name < names.sh_size &&
        std::strcmp(table.data() + section.sh_name, KILN_WEIGHTS_SECTION) == 0)
      found = &section;
  if (!found)
    return bad("has no " KILN_WEIGHTS_SECTION " section, but its descriptor "
               "declares " +
               std::to_string(size) +
               " bytes of weights (was the file stripped of it?)");
  if (found->sh_size != size)
    return bad("holds " + std::to_string(found->sh_size) +
               " bytes in its " KILN_WEIGHTS_SECTION
               " section, but its descriptor declares " +
               std::to_string(size));
  if (!inside(found->sh_offset, size, fileSize))
    return bad("is truncated: its " KILN_WEIGHTS_SECTION " section ends at "
               "byte " +
               std::to_string(found->sh_offset + size) + " of " +
               std::to_string(fileSize));
  if (found->sh_offset % KILN_ALIGNMENT != 0)
    return bad("has its " KILN_WEIGHTS_SECTION " section at offset " +
               std::to_string(found->sh_offset) + ", not a multiple of " +
               std::to_string(KILN_ALIGNMENT));

  uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  uint64_t delta = found->sh_offset % page;
  size_t length = static_cast<size_t>(size + delta);
  void *mapping = ::mmap(nullptr, length, PROT_READ, MAP_PRIVATE, file.fd,
                         static_cast<off_t>(found->sh_offset - delta));
  if (mapping == MAP_FAILED)
    return fail(KILN_ERROR_OUT_OF_MEMORY,
                "cannot map the " + std::to_string(size) +
                    " bytes of weights of " + quoted(path) + ": " +
                    std::strerror(errno));
  mapping_ = mapping;
  length_ = length;
  data_ = static_cast<const char *>(mapping) + delta;
  return KILN_OK;
}

} // namespace kiln::rt
