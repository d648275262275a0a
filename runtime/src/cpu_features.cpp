#include "cpu_features.h"

#include <cstring>

#if defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#ifndef AT_HWCAP2
#define AT_HWCAP2 26
#endif
#endif

namespace kiln::rt {
namespace {

#if defined(__x86_64__) || defined(__i386__)
// __builtin_cpu_supports takes only string literals, hence one macro per row.
// It also checks that the OS saves the AVX/AVX-512 register state.
#define KILN_CPU(llvmName, gccName)                                            \
  if (std::strcmp(name, llvmName) == 0) {                                      \
    *present = __builtin_cpu_supports(gccName) != 0;                           \
    return true;                                                               \
  }

bool queryX86(const char *name, bool *present) {
  __builtin_cpu_init();
  // Names both GCC and Clang accept.
  KILN_CPU("cmov", "cmov")
  KILN_CPU("mmx", "mmx")
  KILN_CPU("popcnt", "popcnt")
  KILN_CPU("sse", "sse")
  KILN_CPU("sse2", "sse2")
  KILN_CPU("sse3", "sse3")
  KILN_CPU("ssse3", "ssse3")
  KILN_CPU("sse4.1", "sse4.1")
  KILN_CPU("sse4.2", "sse4.2")
  KILN_CPU("sse4a", "sse4a")
  KILN_CPU("avx", "avx")
  KILN_CPU("avx2", "avx2")
  KILN_CPU("fma", "fma")
  KILN_CPU("fma4", "fma4")
  KILN_CPU("xop", "xop")
  KILN_CPU("bmi", "bmi")
  KILN_CPU("bmi2", "bmi2")
  KILN_CPU("aes", "aes")
  KILN_CPU("pclmul", "pclmul")
  KILN_CPU("avx512f", "avx512f")
  KILN_CPU("avx512vl", "avx512vl")
  KILN_CPU("avx512bw", "avx512bw")
  KILN_CPU("avx512dq", "avx512dq")
  KILN_CPU("avx512cd", "avx512cd")
  KILN_CPU("avx512er", "avx512er")
  KILN_CPU("avx512pf", "avx512pf")
  KILN_CPU("avx512vbmi", "avx512vbmi")
  KILN_CPU("avx512vbmi2", "avx512vbmi2")
  KILN_CPU("avx512ifma", "avx512ifma")
  KILN_CPU("avx512vnni", "avx512vnni")
  KILN_CPU("avx512bitalg", "avx512bitalg")
  KILN_CPU("avx512vpopcntdq", "avx512vpopcntdq")
  KILN_CPU("avx512bf16", "avx512bf16")
  KILN_CPU("avx512vp2intersect", "avx512vp2intersect")
  KILN_CPU("avx5124vnniw", "avx5124vnniw")
  KILN_CPU("avx5124fmaps", "avx5124fmaps")
  KILN_CPU("gfni", "gfni")
  KILN_CPU("vpclmulqdq", "vpclmulqdq")
#if !defined(__clang__) && defined(__GNUC__) && __GNUC__ >= 11
  // Newer names only GCC 11+ accepts in __builtin_cpu_supports.
  KILN_CPU("f16c", "f16c")
  KILN_CPU("avx512fp16", "avx512fp16")
  KILN_CPU("avxvnni", "avxvnni")
  KILN_CPU("amx-tile", "amx-tile")
  KILN_CPU("amx-int8", "amx-int8")
  KILN_CPU("amx-bf16", "amx-bf16")
  KILN_CPU("sha", "sha")
  KILN_CPU("vaes", "vaes")
  KILN_CPU("movbe", "movbe")
  KILN_CPU("lzcnt", "lzcnt")
  KILN_CPU("adx", "adx")
  KILN_CPU("cx16", "cmpxchg16b")
#endif
  return false;
}
#undef KILN_CPU
#endif

#if defined(__aarch64__) && defined(__linux__)
// An approximation: the few features that change code generation and that
// Linux reports in the auxiliary vector. Bits are the kernel's HWCAP values,
// spelled out because older libc headers lack some of them.
bool queryAArch64(const char *name, bool *present) {
  struct Row {
    const char *name;
    int auxType; // AT_HWCAP or AT_HWCAP2
    unsigned long bit;
  };
  static const Row rows[] = {
      {"fullfp16", AT_HWCAP, 1ul << 10}, {"dotprod", AT_HWCAP, 1ul << 20},
      {"sve", AT_HWCAP, 1ul << 22},      {"sve2", AT_HWCAP2, 1ul << 1},
      {"i8mm", AT_HWCAP2, 1ul << 13},    {"bf16", AT_HWCAP2, 1ul << 14},
  };
  for (const Row &row : rows) {
    if (std::strcmp(name, row.name) != 0)
      continue;
    *present = (getauxval(row.auxType) & row.bit) != 0;
    return true;
  }
  return false;
}
#endif

} // namespace

bool queryCpuFeature(const std::string &feature, bool *present) {
#if defined(__x86_64__) || defined(__i386__)
  return queryX86(feature.c_str(), present);
#elif defined(__aarch64__) && defined(__linux__)
  return queryAArch64(feature.c_str(), present);
#else
  (void)feature;
  (void)present;
  return false;
#endif
}

std::string firstMissingCpuFeature(const std::string &features) {
  size_t start = 0;
  while (start <= features.size()) {
    size_t end = features.find(',', start);
    if (end == std::string::npos)
      end = features.size();
    std::string item = features.substr(start, end - start);
    start = end + 1;
    if (item.size() < 2 || item[0] != '+')
      continue; // '-' features and empty items never need hardware
    std::string name = item.substr(1);
    bool present = true;
    if (queryCpuFeature(name, &present) && !present)
      return name;
  }
  return "";
}

} // namespace kiln::rt
