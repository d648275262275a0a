//===- ArtifactMathTest.cpp - Transcendentals and small float types -------===//
#include "BackendTestSupport.h"

#include <catch.hpp>

#include <cmath>
#include <cstring>
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
