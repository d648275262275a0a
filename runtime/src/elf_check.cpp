#include "elf_check.h"

#include "status.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace kiln::rt {
namespace {

// e_machine values from the System V ABI (elf.h), spelled out here so the
// check reads the same on every host libc.
constexpr unsigned kMachineI386 = 3;
constexpr unsigned kMachineArm = 40;
constexpr unsigned kMachinePpc64 = 21;
constexpr unsigned kMachineS390 = 22;
constexpr unsigned kMachineX86_64 = 62;
constexpr unsigned kMachineAArch64 = 183;
constexpr unsigned kMachineRiscV = 243;
constexpr unsigned kMachineLoongArch = 258;

constexpr unsigned char kClass32 = 1, kClass64 = 2;
constexpr unsigned char kDataLittle = 1, kDataBig = 2;
constexpr unsigned kTypeShared = 3;

#if defined(__x86_64__)
constexpr unsigned kHostMachine = kMachineX86_64;
#elif defined(__aarch64__)
constexpr unsigned kHostMachine = kMachineAArch64;
#elif defined(__i386__)
constexpr unsigned kHostMachine = kMachineI386;
#elif defined(__arm__)
constexpr unsigned kHostMachine = kMachineArm;
#elif defined(__riscv)
constexpr unsigned kHostMachine = kMachineRiscV;
#elif defined(__powerpc64__)
constexpr unsigned kHostMachine = kMachinePpc64;
#else
constexpr unsigned kHostMachine = 0; // unknown: skip the machine check
#endif

constexpr unsigned char kHostClass = sizeof(void *) == 8 ? kClass64 : kClass32;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
constexpr unsigned char kHostData = kDataBig;
#else
constexpr unsigned char kHostData = kDataLittle;
#endif

std::string machineName(unsigned machine, unsigned char elfClass) {
  bool is64 = elfClass == kClass64;
  switch (machine) {
  case kMachineX86_64:
    return is64 ? "x86_64" : "x32";
  case kMachineAArch64:
    return is64 ? "aarch64" : "aarch64_ilp32";
  case kMachineI386:
    return "i386";
  case kMachineArm:
    return "arm";
  case kMachinePpc64:
    return "ppc64";
  case kMachineS390:
    return is64 ? "s390x" : "s390";
  case kMachineRiscV:
    return is64 ? "riscv64" : "riscv32";
  case kMachineLoongArch:
    return is64 ? "loongarch64" : "loongarch32";
  }
  return "ELF machine " + std::to_string(machine);
}

} // namespace

const char *hostArchName() {
#if defined(__x86_64__)
  return "x86_64";
#elif defined(__aarch64__)
  return "aarch64";
#elif defined(__i386__)
  return "i386";
#elif defined(__arm__)
  return "arm";
#elif defined(__riscv)
  return "riscv64";
#elif defined(__powerpc64__)
  return "ppc64";
#else
  return "unknown";
#endif
}

kiln_status checkElfHeader(const std::string &path) {
  std::FILE *file = std::fopen(path.c_str(), "rb");
  if (!file)
    return fail(KILN_ERROR_IO,
                "cannot open " + quoted(path) + ": " + std::strerror(errno));
  // e_ident (16 bytes), e_type (2), e_machine (2): identical offsets in the
  // 32- and 64-bit layouts.
  unsigned char header[20];
  size_t got = std::fread(header, 1, sizeof header, file);
  int readErrno = std::ferror(file) ? errno : 0;
  std::fclose(file);
  if (readErrno)
    return fail(KILN_ERROR_IO, "cannot read " + quoted(path) + ": " +
                                   std::strerror(readErrno));
  return checkElfBytes(header, got, path);
}

kiln_status checkElfBytes(const unsigned char *bytes, size_t size,
                          const std::string &path) {
  unsigned char header[20] = {};
  size_t got = size < sizeof header ? size : sizeof header;
  if (got)
    std::memcpy(header, bytes, got);
  static const unsigned char kElfMagic[4] = {0x7f, 'E', 'L', 'F'};
  if (got < 4 || std::memcmp(header, kElfMagic, 4) != 0)
    return fail(KILN_ERROR_BAD_ARTIFACT,
                quoted(path) + " is not a shared library (not an ELF file)");
  if (got < sizeof header)
    return fail(KILN_ERROR_BAD_ARTIFACT,
                quoted(path) +
                    " is not a shared library (truncated ELF header)");
  unsigned char elfClass = header[4], data = header[5];
  if ((elfClass != kClass32 && elfClass != kClass64) ||
      (data != kDataLittle && data != kDataBig))
    return fail(KILN_ERROR_BAD_ARTIFACT,
                quoted(path) + " is not a shared library (bad ELF header)");
  auto half = [&](int offset) -> unsigned {
    return data == kDataLittle ? header[offset] | header[offset + 1] << 8
                               : header[offset] << 8 | header[offset + 1];
  };
  unsigned type = half(16), machine = half(18);
  if (kHostMachine != 0 && (machine != kHostMachine || elfClass != kHostClass ||
                            data != kHostData)) {
    std::string name = machineName(machine, elfClass);
    if (data != kHostData && machine == kHostMachine && elfClass == kHostClass)
      name += data == kDataBig ? " (big-endian)" : " (little-endian)";
    return fail(KILN_ERROR_BAD_ARTIFACT, quoted(path) + " was built for " +
                                             name + ", but this machine is " +
                                             hostArchName());
  }
  if (type != kTypeShared)
    return fail(KILN_ERROR_BAD_ARTIFACT,
                quoted(path) +
                    " is not a shared library (ELF file of another type: "
                    "an executable or object file)");
  return KILN_OK;
}

} // namespace kiln::rt
