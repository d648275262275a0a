//===- ArtifactMathTest.cpp - Transcendentals and small float types -------===//
#include "BackendTestSupport.h"

#include <catch.hpp>

#include <cmath>
#include <cstring>
#include <dlfcn.h>
#include <limits>

using namespace kiln_test;
using mlir::kiln::ArtifactSpec;

static std::string unaryGeneric(const std::string &type, const std::string &op,
                                const std::string &in, const std::string &out) {
  return "  %" + out +
         " = linalg.generic {indexing_maps = [#id, #id], "
         "iterator_types = [\"parallel\"]} ins(%" +
         in + " : tensor<" + type + ">) outs(%e : tensor<" + type +
         ">) {\n  ^bb0(%a: " + type.substr(type.find('x') + 1) +
         ", %o: " + type.substr(type.find('x') + 1) + "):\n    %r = " + op +
         " %a : " + type.substr(type.find('x') + 1) +
         "\n    linalg.yield %r : " + type.substr(type.find('x') + 1) +
         "\n  } -> tensor<" + type + ">\n";
}

// erf/tanh/exp in f32 use inline polynomials; in f64 they call libm.
TEST_CASE("math.erf, math.tanh, math.exp in f32 and f64", "[math]") {
  const int N = 257;
  std::vector<float> x(N);
  for (int i = 0; i < N; ++i)
    x[i] = -8.f + 16.f * i / (N - 1);
  std::vector<double> xd(x.begin(), x.end());

  std::string source = "#id = affine_map<(i) -> (i)>\n"
                       "func.func @main(%x: tensor<257xf32>, %xd: "
                       "tensor<257xf64>) -> (tensor<257xf32>, tensor<257xf32>, "
                       "tensor<257xf32>, tensor<257xf64>, tensor<257xf64>) {\n"
                       "  %e = tensor.empty() : tensor<257xf32>\n" +
                       unaryGeneric("257xf32", "math.erf", "x", "erf") +
                       unaryGeneric("257xf32", "math.tanh", "x", "tanh") +
                       unaryGeneric("257xf32", "math.exp", "x", "exp") +
                       "  %ed = tensor.empty() : tensor<257xf64>\n";
  std::string f64 = unaryGeneric("257xf64", "math.erf", "xd", "erfd") +
                    unaryGeneric("257xf64", "math.exp", "xd", "expd");
  // The f64 generics write into %ed.
  for (size_t at = f64.find("outs(%e :"); at != std::string::npos;
       at = f64.find("outs(%e :", at))
    f64.replace(at, 9, "outs(%ed :");
  source += f64 + "  return %erf, %tanh, %exp, %erfd, %expd : tensor<257xf32>, "
                  "tensor<257xf32>, tensor<257xf32>, tensor<257xf64>, "
                  "tensor<257xf64>\n}\n";

  ArtifactSpec spec{"math",
                    {{"x", KILN_DTYPE_F32, {N}}, {"xd", KILN_DTYPE_F64, {N}}},
                    {{"erf", KILN_DTYPE_F32, {N}},
                     {"tanh", KILN_DTYPE_F32, {N}},
                     {"exp", KILN_DTYPE_F32, {N}},
                     {"erfd", KILN_DTYPE_F64, {N}},
                     {"expd", KILN_DTYPE_F64, {N}}}};
  auto artifact = compileAndLoad(source, spec);
  std::vector<float> erf(N), tanh(N), exp(N);
  std::vector<double> erfd(N), expd(N);
  REQUIRE(
      artifact->run({x.data(), xd.data()}, {erf.data(), tanh.data(), exp.data(),
                                            erfd.data(), expd.data()}) == 0);
  for (int i = 0; i < N; ++i) {
    INFO("x = " << x[i]);
    CHECK(std::fabs(erf[i] - std::erf(x[i])) <= 2e-6f);
    CHECK(std::fabs(tanh[i] - std::tanh(x[i])) <= 2e-6f);
    CHECK(std::fabs(exp[i] - std::exp(x[i])) <= 2e-6f * std::exp(x[i]));
    CHECK(std::fabs(erfd[i] - std::erf(xd[i])) <= 1e-15);
    CHECK(std::fabs(expd[i] - std::exp(xd[i])) <= 1e-15 * std::exp(xd[i]));
  }
}

static uint16_t toBf16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  bits += 0x7FFF + ((bits >> 16) & 1); // round to nearest even
  return uint16_t(bits >> 16);
}

static float fromBf16(uint16_t value) {
  uint32_t bits = uint32_t(value) << 16;
  float result;
  std::memcpy(&result, &bits, 4);
  return result;
}

// bf16 arithmetic and math go through f32 without compiler-rt helpers.
TEST_CASE("bf16 tanh and multiply", "[math]") {
  const int N = 64;
  std::vector<uint16_t> a(N), b(N);
  std::vector<float> ra = randomFloats(N, 11, -3, 3), rb = randomFloats(N, 12);
  for (int i = 0; i < N; ++i) {
    a[i] = toBf16(ra[i]);
    b[i] = toBf16(rb[i]);
  }
  std::string source = R"(
#id = affine_map<(i) -> (i)>
func.func @main(%a: tensor<64xbf16>, %b: tensor<64xbf16>) -> tensor<64xbf16> {
  %e = tensor.empty() : tensor<64xbf16>
  %y = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%a, %b : tensor<64xbf16>, tensor<64xbf16>) outs(%e : tensor<64xbf16>) {
  ^bb0(%x: bf16, %z: bf16, %o: bf16):
    %t = math.tanh %x : bf16
    %m = arith.mulf %t, %z : bf16
    linalg.yield %m : bf16
  } -> tensor<64xbf16>
  return %y : tensor<64xbf16>
}
)";
  ArtifactSpec spec{"bf16",
                    {{"a", KILN_DTYPE_BF16, {N}}, {"b", KILN_DTYPE_BF16, {N}}},
                    {{"y", KILN_DTYPE_BF16, {N}}}};
  auto artifact = compileAndLoad(source, spec);
  std::vector<uint16_t> y(N);
  REQUIRE(artifact->run({a.data(), b.data()}, {y.data()}) == 0);
  for (int i = 0; i < N; ++i) {
    float want = fromBf16(toBf16(std::tanh(fromBf16(a[i])))) * fromBf16(b[i]);
    INFO("i = " << i);
    CHECK(std::fabs(fromBf16(y[i]) - want) <= 0.01f * std::fabs(want) + 1e-6f);
  }
}

// The approximations must keep the edges of the range: infinities, NaN,
// overflow and underflow of exp, tiny arguments of tanh/erf.
TEST_CASE("math edge values", "[math]") {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> x = {-inf,  -100.f, -88.f, -1e-30f, 0.f,  1e-30f,
                          88.f,  89.f,   100.f, inf,     -0.f, 1e-6f,
                          -20.f, 20.f,   3.75f, -3.75f};
  const int N = int(x.size());
  std::string n = std::to_string(N);
  std::string type = n + "xf32";
  std::string source =
      "#id = affine_map<(i) -> (i)>\nfunc.func @main(%x: tensor<" + type +
      ">) -> (tensor<" + type + ">, tensor<" + type + ">, tensor<" + type +
      ">) {\n  %e = tensor.empty() : tensor<" + type + ">\n" +
      unaryGeneric(type, "math.exp", "x", "exp") +
      unaryGeneric(type, "math.tanh", "x", "tanh") +
      unaryGeneric(type, "math.erf", "x", "erf") +
      "  return %exp, %tanh, %erf : tensor<" + type + ">, tensor<" + type +
      ">, tensor<" + type + ">\n}\n";
  ArtifactSpec spec{"edges",
                    {{"x", KILN_DTYPE_F32, {N}}},
                    {{"exp", KILN_DTYPE_F32, {N}},
                     {"tanh", KILN_DTYPE_F32, {N}},
                     {"erf", KILN_DTYPE_F32, {N}}}};
  auto artifact = compileAndLoad(source, spec);
  std::vector<float> exp(N), tanh(N), erf(N);
  REQUIRE(artifact->run({x.data()}, {exp.data(), tanh.data(), erf.data()}) ==
          0);
  auto close = [](float got, float want) {
    if (std::isnan(want))
      return std::isnan(got);
    if (std::isinf(want))
      return got == want;
    return std::fabs(got - want) <=
           2e-6f * std::max(1e-30f, std::fabs(want)) + 1e-37f;
  };
  for (int i = 0; i < N; ++i) {
    INFO("x = " << x[i] << ": exp " << exp[i] << " tanh " << tanh[i] << " erf "
                << erf[i]);
    CHECK(close(exp[i], std::exp(x[i])));
    CHECK(close(tanh[i], std::tanh(x[i])));
    CHECK(close(erf[i], std::erf(x[i])));
  }
  // NaN in, NaN out.
  std::vector<float> nan(N, std::numeric_limits<float>::quiet_NaN());
  REQUIRE(artifact->run({nan.data()}, {exp.data(), tanh.data(), erf.data()}) ==
          0);
  CHECK(std::isnan(exp[0]));
  CHECK(std::isnan(tanh[0]));
  CHECK(std::isnan(erf[0]));
}

// f16 math runs in f32. The conversions must not need compiler-rt
// (__extendhfsf2/__truncsfhf2) on any target: the artifact links with
// --no-undefined against libc/libm only.
TEST_CASE("f16 compiles for baseline CPUs of both architectures", "[math]") {
  std::string source = R"(
#id = affine_map<(i) -> (i)>
func.func @main(%a: tensor<64xf16>, %b: tensor<64xf16>) -> tensor<64xf16> {
  %e = tensor.empty() : tensor<64xf16>
  %y = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%a, %b : tensor<64xf16>, tensor<64xf16>) outs(%e : tensor<64xf16>) {
  ^bb0(%x: f16, %z: f16, %o: f16):
    %t = math.tanh %x : f16
    %m = arith.mulf %t, %z : f16
    linalg.yield %m : f16
  } -> tensor<64xf16>
  return %y : tensor<64xf16>
}
)";
  ArtifactSpec spec{"f16",
                    {{"a", KILN_DTYPE_F16, {64}}, {"b", KILN_DTYPE_F16, {64}}},
                    {{"y", KILN_DTYPE_F16, {64}}}};
  TempDir dir;
  for (const char *triple : {"x86_64", "aarch64"}) {
    std::string error;
    auto target = mlir::kiln::CpuTarget::fromFlags(triple, "generic", error);
    REQUIRE(mlir::succeeded(target));
    error = compileToFile(source, spec, *target,
                          dir.file(std::string(triple) + ".so"));
    INFO(triple << ": " << error);
    CHECK(error.empty());
  }
}

#if defined(__x86_64__) && defined(__FLT16_MAX__)
// On an x86 CPU without F16C the conversions are integer code of our own;
// check them against the compiler's (libgcc's) on every f16 value and a
// sweep of f32 values around the f16 range, including rounding ties.
TEST_CASE("f16 conversions without F16C are exact", "[math]") {
  const int N = 65536;
  std::string source = R"(
#id = affine_map<(i) -> (i)>
func.func @main(%h: tensor<65536xf16>, %x: tensor<65536xf32>) -> (tensor<65536xf32>, tensor<65536xf16>) {
  %ef = tensor.empty() : tensor<65536xf32>
  %eh = tensor.empty() : tensor<65536xf16>
  %wide, %narrow = linalg.generic {indexing_maps = [#id, #id, #id, #id], iterator_types = ["parallel"]}
      ins(%h, %x : tensor<65536xf16>, tensor<65536xf32>) outs(%ef, %eh : tensor<65536xf32>, tensor<65536xf16>) {
  ^bb0(%a: f16, %b: f32, %o: f32, %p: f16):
    %w = arith.extf %a : f16 to f32
    %n = arith.truncf %b : f32 to f16
    linalg.yield %w, %n : f32, f16
  } -> (tensor<65536xf32>, tensor<65536xf16>)
  return %wide, %narrow : tensor<65536xf32>, tensor<65536xf16>
}
)";
  ArtifactSpec spec{
      "f16conv",
      {{"h", KILN_DTYPE_F16, {N}}, {"x", KILN_DTYPE_F32, {N}}},
      {{"wide", KILN_DTYPE_F32, {N}}, {"narrow", KILN_DTYPE_F16, {N}}}};
  std::string error;
  auto target = mlir::kiln::CpuTarget::fromFlags("x86_64", "x86-64", error);
  REQUIRE(mlir::succeeded(target));
  REQUIRE(!target->hasFeature("f16c"));
  TempDir dir;
  std::string path = dir.file("f16.so");
  error = compileToFile(source, spec, *target, path);
  INFO(error);
  REQUIRE(error.empty());
  void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  REQUIRE(handle);
  auto fn =
      reinterpret_cast<kiln_artifact_fn>(dlsym(handle, KILN_ARTIFACT_SYMBOL));
  REQUIRE(fn);

  std::vector<uint16_t> halves(N);
  std::vector<float> singles(N);
  for (int i = 0; i < N; ++i) {
    halves[i] = uint16_t(i);
    // Every f16 value, and the midpoints between neighbours (ties), plus
    // one f32 ulp either side of them, over the f16 range and beyond.
    _Float16 h;
    std::memcpy(&h, &halves[i], 2);
    float value = float(h);
    uint16_t nextBits = uint16_t(i + 1);
    _Float16 next;
    std::memcpy(&next, &nextBits, 2);
    float mid = (value + float(next)) / 2;
    singles[i] = i % 3 == 0   ? mid
                 : i % 3 == 1 ? std::nextafter(mid, 1e30f)
                              : std::nextafter(mid, -1e30f);
    if (!std::isfinite(singles[i]))
      singles[i] = float(i) * 7.0f;
  }
  singles[0] = 65520.f; // rounds to infinity
  singles[1] = 65519.f; // rounds to 65504
  singles[2] = 1e-9f;   // underflows to zero
  singles[3] = -1e-9f;  // to negative zero
  singles[4] = std::numeric_limits<float>::infinity();
  singles[5] = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> wide(N);
  std::vector<uint16_t> narrow(N);
  const void *inputs[] = {halves.data(), singles.data()};
  void *outputs[] = {wide.data(), narrow.data()};
  kiln_runtime_callbacks callbacks{};
  std::vector<char> arena(fn()->arena_size + KILN_ALIGNMENT);
  void *aligned = arena.data() +
                  (KILN_ALIGNMENT - uintptr_t(arena.data()) % KILN_ALIGNMENT);
  REQUIRE(fn()->entry(const_cast<void *const *>(inputs), outputs, aligned,
                      &callbacks) == 0);
  int wrongWide = 0, wrongNarrow = 0;
  for (int i = 0; i < N; ++i) {
    _Float16 h;
    std::memcpy(&h, &halves[i], 2);
    float want = float(h);
    if (std::isnan(want) ? !std::isnan(wide[i])
                         : std::memcmp(&want, &wide[i], 4) != 0)
      ++wrongWide;
    _Float16 n = _Float16(singles[i]);
    uint16_t wantBits;
    std::memcpy(&wantBits, &n, 2);
    bool nan = (wantBits & 0x7c00) == 0x7c00 && (wantBits & 0x3ff);
    if (nan ? !((narrow[i] & 0x7c00) == 0x7c00 && (narrow[i] & 0x3ff))
            : narrow[i] != wantBits) {
      if (wrongNarrow++ < 5)
        WARN("truncf(" << singles[i] << ") = 0x" << std::hex << narrow[i]
                       << ", expected 0x" << wantBits);
    }
  }
  CHECK(wrongWide == 0);
  CHECK(wrongNarrow == 0);
  dlclose(handle);
}
#endif
