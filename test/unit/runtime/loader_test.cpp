// kiln_model_load: every rejection names the file and the reason.
#include <catch.hpp>

#include "test_support.h"

#include "cpu_features.h"
#include "kiln/runtime.hpp"

using kiln::test::fixturePath;
using kiln::test::scratchPath;

namespace {

// Loads `path`, expecting failure; returns the message.
std::string loadError(const std::string &path,
                      kiln_status expected = KILN_ERROR_BAD_ARTIFACT) {
  kiln_model *model = nullptr;
  kiln_status status = kiln_model_load(path.c_str(), &model);
  CHECK(status == expected);
  CHECK(model == nullptr);
  if (model)
    kiln_model_free(model);
  return kiln_last_error();
}

std::string quoted(const std::string &path) { return "'" + path + "'"; }

#if defined(__x86_64__)
const char *kHost = "x86_64";
#elif defined(__aarch64__)
const char *kHost = "aarch64";
#endif

// A 64-byte little-endian ELF64 header for `machine` of type `type`.
std::vector<uint8_t> elfHeader(uint16_t machine, uint16_t type = 3,
                               uint8_t elfClass = 2) {
  std::vector<uint8_t> bytes(64, 0);
  bytes[0] = 0x7f, bytes[1] = 'E', bytes[2] = 'L', bytes[3] = 'F';
  bytes[4] = elfClass; // 1: 32-bit, 2: 64-bit
  bytes[5] = 1;        // little-endian
  bytes[6] = 1;        // version
  bytes[16] = type & 0xff, bytes[17] = type >> 8;
  bytes[18] = machine & 0xff, bytes[19] = machine >> 8;
  return bytes;
}

} // namespace

TEST_CASE("the valid fixture loads", "[loader]") {
  kiln::Model model(fixturePath("add_one"));
  const kiln_artifact_descriptor &descriptor = model.descriptor();
  CHECK(std::string(descriptor.model_name) == "add_one");
  CHECK(descriptor.num_inputs == 1);
  CHECK(std::string(descriptor.inputs[0].name) == "x");
  CHECK(descriptor.arena_size == 24);
  // Loading the same file twice is fine (dlopen reference counts).
  kiln::Model again(fixturePath("add_one"));
  CHECK(&again.descriptor() == &descriptor);
}

TEST_CASE("a missing file is an IO error", "[loader]") {
  std::string path = scratchPath("does_not_exist.so");
  CHECK(loadError(path, KILN_ERROR_IO) ==
        "cannot open " + quoted(path) + ": No such file or directory");
}

TEST_CASE("a text file is not a shared library", "[loader]") {
  std::string path = scratchPath("not_elf.so");
  kiln::test::writeText(path, "this is not an ELF file\n");
  CHECK(loadError(path) ==
        quoted(path) + " is not a shared library (not an ELF file)");
  std::string empty = scratchPath("empty.so");
  kiln::test::writeText(empty, "");
  CHECK(loadError(empty) ==
        quoted(empty) + " is not a shared library (not an ELF file)");
  std::string stub = scratchPath("elf_stub.so");
  kiln::test::writeBytes(stub, {0x7f, 'E', 'L', 'F'});
  CHECK(loadError(stub) ==
        quoted(stub) + " is not a shared library (truncated ELF header)");
}

TEST_CASE("an ELF file for another machine names both architectures",
          "[loader]") {
#if defined(__x86_64__) || defined(__aarch64__)
  std::string path = scratchPath("foreign.so");
#if defined(__x86_64__)
  kiln::test::writeBytes(path, elfHeader(183)); // EM_AARCH64
  std::string other = "aarch64";
#else
  kiln::test::writeBytes(path, elfHeader(62)); // EM_X86_64
  std::string other = "x86_64";
#endif
  CHECK(loadError(path) == quoted(path) + " was built for " + other +
                               ", but this machine is " + kHost);
  kiln::test::writeBytes(path, elfHeader(3, 3, 1)); // 32-bit i386
  CHECK(loadError(path) ==
        quoted(path) + " was built for i386, but this machine is " + kHost);
  kiln::test::writeBytes(path, elfHeader(243)); // 64-bit RISC-V
  CHECK(loadError(path) ==
        quoted(path) + " was built for riscv64, but this machine is " + kHost);
#endif
}

TEST_CASE("an executable or object file is not a shared library", "[loader]") {
#if defined(__x86_64__) || defined(__aarch64__)
  std::string path = scratchPath("object.o");
  kiln::test::writeBytes(path,
                         elfHeader(std::string(kHost) == "x86_64" ? 62 : 183,
                                   /*ET_REL=*/1));
  CHECK(loadError(path) == quoted(path) +
                               " is not a shared library (ELF file of another "
                               "type: an executable or object file)");
#endif
}

TEST_CASE("a shared library without the symbol is not a kiln artifact",
          "[loader]") {
  std::string path = fixturePath("no_symbol");
  CHECK(loadError(path) ==
        quoted(path) + " is not a kiln artifact (no kiln_artifact symbol)");
}

TEST_CASE("bad magic is not a kiln artifact", "[loader]") {
  std::string path = fixturePath("add_one_bad_magic");
  CHECK(loadError(path) ==
        quoted(path) + " is not a kiln artifact (bad magic 0x12345678)");
}

TEST_CASE("another ABI version is rejected", "[loader]") {
  std::string path = fixturePath("add_one_bad_abi");
  CHECK(loadError(path) ==
        quoted(path) +
            " uses kiln ABI version 7, this runtime supports version " +
            std::to_string(KILN_ABI_VERSION));
}

TEST_CASE("a triple for another architecture is rejected", "[loader]") {
  std::string path = fixturePath("add_one_foreign_triple");
#if defined(__x86_64__)
  CHECK(loadError(path) ==
        quoted(path) + " was built for aarch64-unknown-linux-gnu, but this "
                       "machine is x86_64");
#elif defined(__aarch64__)
  CHECK(loadError(path) ==
        quoted(path) + " was built for x86_64-unknown-linux-gnu, but this "
                       "machine is aarch64");
#endif
}

TEST_CASE("a CPU feature this machine lacks is rejected", "[loader]") {
#if defined(__x86_64__)
  // The fixture's feature list, in order; the loader reports the first one
  // this CPU lacks.
  __builtin_cpu_init();
  std::string missing;
  if (!__builtin_cpu_supports("avx512vp2intersect"))
    missing = "avx512vp2intersect";
  else if (!__builtin_cpu_supports("avx512er"))
    missing = "avx512er";
  else if (!__builtin_cpu_supports("avx512pf"))
    missing = "avx512pf";
  else if (!__builtin_cpu_supports("xop"))
    missing = "xop";
  else if (!__builtin_cpu_supports("fma4"))
    missing = "fma4";
  else if (!__builtin_cpu_supports("sse4a"))
    missing = "sse4a";
  if (missing.empty()) {
    WARN("this CPU has every feature the fixture asks for; skipped");
    return;
  }
  std::string path = fixturePath("add_one_missing_feature");
  CHECK(loadError(path) == quoted(path) + " needs CPU feature " + missing +
                               ", which this machine lacks (built for "
                               "testcpu)");
#else
  WARN("CPU feature rejection is only tested on x86_64");
#endif
}

TEST_CASE("CPU feature strings are parsed leniently", "[loader]") {
  using kiln::rt::firstMissingCpuFeature;
  CHECK(firstMissingCpuFeature("") == "");
  CHECK(firstMissingCpuFeature(",,+,-") == "");
  // Unknown and '-' features never block loading.
  CHECK(firstMissingCpuFeature("+no-such-feature,-avx512vp2intersect") == "");
#if defined(__x86_64__)
  CHECK(firstMissingCpuFeature("+sse2,+64bit,+cx8") == "");
  bool present = false;
  CHECK(kiln::rt::queryCpuFeature("sse2", &present));
  CHECK(present);
  __builtin_cpu_init();
  CHECK(kiln::rt::queryCpuFeature("avx2", &present));
  CHECK(present == (__builtin_cpu_supports("avx2") != 0));
  CHECK_FALSE(kiln::rt::queryCpuFeature("64bit", &present));
#endif
}

TEST_CASE("NULL arguments are rejected", "[loader]") {
  kiln_model *model = nullptr;
  CHECK(kiln_model_load(nullptr, &model) == KILN_ERROR_INVALID_ARGUMENT);
  CHECK(kiln_model_load("x.so", nullptr) == KILN_ERROR_INVALID_ARGUMENT);
  kiln_model_free(nullptr); // a no-op
  CHECK(kiln_model_descriptor(nullptr) == nullptr);
}

TEST_CASE("the C++ wrapper throws the loader's message", "[loader]") {
  std::string path = fixturePath("add_one_bad_abi");
  try {
    kiln::Model model(path);
    FAIL("expected kiln::Error");
  } catch (const kiln::Error &error) {
    CHECK(error.status() == KILN_ERROR_BAD_ARTIFACT);
    CHECK(std::string(error.what()).find("ABI version 7") != std::string::npos);
  }
}

TEST_CASE("the weights section is mapped and handed to every session",
          "[loader]") {
  kiln::Model model(fixturePath("add_one_weights"));
  CHECK(model.descriptor().weights_size == 64);
  // The fixture's entry fails unless runtime->weights is the runtime's own
  // read-only mapping of the section (not the copy dlopen loaded) and adds
  // its first float, 1.0.
  for (int s = 0; s < 2; ++s) {
    kiln::Session session(model, 1);
    std::vector<float> values = {1, 2, 3, 4, 5, 6};
    kiln::Tensor x = kiln::Tensor::create(KILN_DTYPE_F32, {2, 3});
    std::copy(values.begin(), values.end(), x.data<float>());
    std::vector<kiln::Tensor> outputs = session.run({{"x", &x}});
    REQUIRE(outputs.size() == 1);
    for (int i = 0; i < 6; ++i)
      CHECK(outputs[0].data<float>()[i] == values[i] + 1.0f);
  }
}

TEST_CASE("an artifact without its weights section is refused", "[loader]") {
  std::string path = fixturePath("add_one_weights_missing");
  CHECK(loadError(path) ==
        quoted(path) +
            " has no .kiln.weights section, but its descriptor declares 64 "
            "bytes of weights (was the file stripped of it?)");
}

TEST_CASE("a weights section of the wrong size is refused", "[loader]") {
  std::string path = fixturePath("add_one_weights_mismatch");
  CHECK(loadError(path) == quoted(path) +
                               " holds 64 bytes in its .kiln.weights section, "
                               "but its descriptor declares 128");
}
