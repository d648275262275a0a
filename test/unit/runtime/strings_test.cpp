// String tensors (ABI 3): the runtime's string kernels, called by a fixture
// artifact as generated code calls them, and output string ownership.
#include <catch.hpp>

#include "test_support.h"

#include "kiln/runtime.hpp"
#include "utf8.h"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

using kiln::test::fixturePath;

namespace {

std::vector<std::string> strings(const kiln::Tensor &t) {
  std::vector<std::string> out;
  for (size_t i = 0; i < t.numElements(); ++i)
    out.push_back(t.string(i));
  return out;
}

std::vector<kiln::Tensor> run(kiln::Session &session,
                              const std::vector<std::string> &input) {
  kiln::Tensor s = kiln::Tensor::strings({3}, input);
  return session.run({{"s", &s}});
}

} // namespace

TEST_CASE("string kernels parse, format and normalize", "[strings]") {
  kiln::Model model(fixturePath("string_kernels"));
  CHECK(model.descriptor().inputs[0].dtype == KILN_DTYPE_STRING);
  kiln::Session session(model, 1);
  std::vector<kiln::Tensor> out = run(session, {"1.5", " -2e-3 ", "+inf"});
  REQUIRE(out.size() == 3);
  CHECK(out[0].data<float>()[0] == 3.0f);
  CHECK(out[0].data<float>()[1] == -0.004f);
  // Shortest decimals that read back as the same float32.
  CHECK(strings(out[1]) == std::vector<std::string>{"3", "-0.004", "inf"});
  // "1.5" is a stopword; the rest are upper-cased, spaces kept.
  CHECK(out[2].shape() == std::vector<int64_t>{2});
  CHECK(strings(out[2]) == std::vector<std::string>{" -2E-3 ", "+INF"});

  // Outputs own their text: a later run (which resets the run's scratch
  // memory the kernels wrote to) leaves them intact.
  std::vector<kiln::Tensor> again = run(session, {"0.1", "NaN", "1e-50"});
  CHECK(strings(again[1]) == std::vector<std::string>{"0.2", "nan", "0"});
  CHECK(strings(out[1]) == std::vector<std::string>{"3", "-0.004", "inf"});
  CHECK(strings(out[2]) == std::vector<std::string>{" -2E-3 ", "+INF"});
}

TEST_CASE("case changes cover UTF-8 letters; stopwords ignore case",
          "[strings]") {
  kiln::Model model(fixturePath("string_kernels"));
  kiln::Session session(model, 1);
  kiln::Tensor s = kiln::Tensor::strings({3}, {"1.5", "2", "3"});
  std::vector<kiln::Tensor> out = session.run({{"s", &s}});
  CHECK(strings(out[2]) == std::vector<std::string>{"2", "3"});
  // Every string a stopword: one empty string.
  kiln::Tensor all = kiln::Tensor::strings({3}, {"1.5", "1.5", "1.5"});
  out = session.run({{"s", &all}});
  CHECK(out[2].shape() == std::vector<int64_t>{1});
  CHECK(strings(out[2]) == std::vector<std::string>{""});
}

TEST_CASE("a string that is not a number fails the run, naming it",
          "[strings]") {
  kiln::Model model(fixturePath("string_kernels"));
  kiln::Session session(model, 1);
  kiln::Tensor s = kiln::Tensor::strings({3}, {"1", "one", "3"});
  kiln_named_tensor named{"s", s.get()};
  kiln_tensor *outputs[3] = {};
  CHECK(kiln_session_run(session.get(), &named, 1, outputs, 3) ==
        KILN_ERROR_RUN_FAILED);
  CHECK(std::string(kiln_last_error()) ==
        "the model's run failed: node 'c': Cast: element 1 \"one\" is not a "
        "float32 number");
}

TEST_CASE("kiln_tensor_set_strings copies and checks", "[strings]") {
  kiln::Tensor t = kiln::Tensor::create(KILN_DTYPE_STRING, {2});
  std::string a = "straße", b = "x";
  const char *texts[] = {a.c_str(), nullptr};
  REQUIRE(kiln_tensor_set_strings(t.get(), texts, 2) == KILN_OK);
  a[0] = 'S';
  CHECK(t.string(0) == "straße");
  CHECK(t.string(1) == "");
  CHECK(kiln_tensor_set_strings(t.get(), texts, 3) ==
        KILN_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(kiln_last_error()) ==
        "kiln_tensor_set_strings: 3 strings for a tensor of 2 elements");
  kiln::Tensor f = kiln::Tensor::create(KILN_DTYPE_F32, {2});
  CHECK(kiln_tensor_set_strings(f.get(), texts, 2) ==
        KILN_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(kiln_last_error()) ==
        "kiln_tensor_set_strings: the tensor is float32, not string");
}

TEST_CASE("out-of-range numbers saturate the way strtod does", "[strings]") {
  kiln::Model model(fixturePath("string_kernels"));
  kiln::Session session(model, 1);
  std::string tiny = "0." + std::string(400, '0') + "1";
  std::string huge = "1" + std::string(400, '0') + "e-10";
  std::vector<kiln::Tensor> out = run(session, {tiny, huge, "1e-45"});
  CHECK(out[0].data<float>()[0] == 0.0f);
  CHECK(std::isinf(out[0].data<float>()[1]));
  CHECK(out[0].data<float>()[1] > 0);
  // 1e-45 rounds to the smallest float32 subnormal, doubled.
  CHECK(out[0].data<float>()[2] ==
        2 * std::numeric_limits<float>::denorm_min());
}

TEST_CASE("only well-formed UTF-8 decodes to code points", "[strings]") {
  // The case mapping and the .npy writer copy bytes that do not decode
  // (length 0) unchanged, one at a time.
  auto decode = [](std::string_view s) {
    char32_t cp = 0;
    size_t len = kiln::io::decodeUtf8(s, 0, cp);
    return std::make_pair(len, len ? cp : U'\0');
  };
  CHECK(decode("a") == std::make_pair(size_t(1), U'a'));
  CHECK(decode("\xC3\xA9") == std::make_pair(size_t(2), U'\u00e9'));
  CHECK(decode("\xF0\x9F\x94\xA5") == std::make_pair(size_t(4), U'\U0001F525'));
  CHECK(decode("\xC0\x80").first == 0);         // overlong U+0000
  CHECK(decode("\xC1\x81").first == 0);         // overlong 'A'
  CHECK(decode("\xE0\x80\xAF").first == 0);     // overlong '/'
  CHECK(decode("\xED\xA0\x80").first == 0);     // surrogate U+D800
  CHECK(decode("\xF4\x90\x80\x80").first == 0); // past U+10FFFF
  CHECK(decode("\xF5\x80\x80\x80").first == 0); // lead byte F5
  CHECK(decode("\x80").first == 0);             // stray continuation
  CHECK(decode("\xC3").first == 0);             // truncated
  std::string out;
  kiln::io::appendUtf8(out, U'\U0001F525');
  CHECK(out == "\xF0\x9F\x94\xA5");
}
