// Run-time shaped outputs and failed run-time checks (ABI v2), and the
// per-session scratch memory behind them.
#include <catch.hpp>

#include "scratch.h"
#include "test_support.h"

#include "kiln/runtime.hpp"

#include <cstring>

using kiln::test::fixturePath;

namespace {

struct DynamicInputs {
  kiln::Tensor x = kiln::Tensor::create(KILN_DTYPE_F32, {6});
  kiln::Tensor n = kiln::Tensor::create(KILN_DTYPE_I64, {1});

  explicit DynamicInputs(int64_t count) {
    for (int i = 0; i < 6; ++i)
      x.data<float>()[i] = 0.5f * static_cast<float>(i);
    n.data<int64_t>()[0] = count;
  }
  std::vector<kiln_named_tensor> named() {
    return {{"x", x.get()}, {"n", n.get()}};
  }
};

} // namespace

TEST_CASE("a run-time shaped output gets the shape of each run", "[session]") {
  kiln::Model model(fixturePath("dynamic_out"));
  const kiln_artifact_descriptor &descriptor = model.descriptor();
  REQUIRE(descriptor.num_outputs == 1);
  CHECK(descriptor.outputs[0].shape[0] == -1);
  kiln::Session session(model, 2);
  for (int64_t count : {4, 0, 6, 1}) {
    DynamicInputs inputs(count);
    std::vector<kiln::Tensor> outputs =
        session.run({{"x", &inputs.x}, {"n", &inputs.n}});
    REQUIRE(outputs.size() == 1);
    CHECK(outputs[0].shape() == std::vector<int64_t>{count});
    for (int64_t i = 0; i < count; ++i)
      CHECK(outputs[0].data<float>()[i] == 0.5f * static_cast<float>(i) + 1.0f);
  }
}

TEST_CASE("a failed run-time check fails the run with its message",
          "[session]") {
  kiln::Model model(fixturePath("dynamic_out"));
  kiln::Session session(model, 1);
  DynamicInputs bad(7);
  std::vector<kiln_named_tensor> named = bad.named();
  kiln_tensor *output = reinterpret_cast<kiln_tensor *>(1);
  CHECK(kiln_session_run(session.get(), named.data(), named.size(), &output,
                         1) == KILN_ERROR_RUN_FAILED);
  CHECK(output == nullptr);
  CHECK(std::string(kiln_last_error()) ==
        "the model's run failed: node 'slice': n is out of range");
  // The session is still good: the error belongs to that run only.
  DynamicInputs good(2);
  std::vector<kiln::Tensor> outputs =
      session.run({{"x", &good.x}, {"n", &good.n}});
  CHECK(outputs[0].shape() == std::vector<int64_t>{2});
}

TEST_CASE("a run-time sized buffer larger than the memory fails the run",
          "[session]") {
  kiln::Model model(fixturePath("dynamic_out"));
  kiln::Session session(model, 1);
  DynamicInputs huge(-2);
  std::vector<kiln_named_tensor> named = huge.named();
  kiln_tensor *output = reinterpret_cast<kiln_tensor *>(1);
  CHECK(kiln_session_run(session.get(), named.data(), named.size(), &output,
                         1) == KILN_ERROR_OUT_OF_MEMORY);
  CHECK(output == nullptr);
  std::string error = kiln_last_error();
  CHECK(error.rfind("the model's run failed: out of memory: the run needs a "
                    "buffer of 1152921504.6 GB, but only ",
                    0) == 0);
  // The next run is unaffected.
  DynamicInputs good(3);
  std::vector<kiln::Tensor> outputs =
      session.run({{"x", &good.x}, {"n", &good.n}});
  CHECK(outputs[0].shape() == std::vector<int64_t>{3});
}

TEST_CASE("scratch memory is aligned, grows, and settles in one chunk",
          "[session]") {
  kiln::rt::Scratch scratch;
  void *a = scratch.allocate(10);
  void *b = scratch.allocate(1);
  REQUIRE(a);
  REQUIRE(b);
  CHECK(reinterpret_cast<uintptr_t>(a) % KILN_ALIGNMENT == 0);
  CHECK(reinterpret_cast<uintptr_t>(b) % KILN_ALIGNMENT == 0);
  CHECK(static_cast<char *>(b) - static_cast<char *>(a) == KILN_ALIGNMENT);
  // Bigger than the first chunk: a second one.
  void *big = scratch.allocate(1 << 20);
  REQUIRE(big);
  std::memset(big, 1, 1 << 20);
  size_t grown = scratch.capacity();
  CHECK(grown >= (1u << 20) + 64 * 1024);
  // Reset: one chunk of the same capacity, served from its start.
  scratch.reset();
  CHECK(scratch.capacity() == grown);
  void *again = scratch.allocate(1 << 20);
  void *next = scratch.allocate(64);
  CHECK(static_cast<char *>(next) - static_cast<char *>(again) == (1 << 20));
  CHECK(scratch.capacity() == grown);
  // A corrupt size is refused, not attempted.
  CHECK(scratch.allocate(uint64_t(1) << 60) == nullptr);
}
