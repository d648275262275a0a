// kiln_session_run: binding named inputs, output allocation, failures.
#include <catch.hpp>

#include "test_support.h"

#include "kiln/runtime.hpp"

#include <thread>

using kiln::test::fixturePath;

namespace {

kiln::Tensor addOneInput(float start) {
  kiln::Tensor x = kiln::Tensor::create(KILN_DTYPE_F32, {2, 3});
  for (int i = 0; i < 6; ++i)
    x.data<float>()[i] = start + static_cast<float>(i);
  return x;
}

// Runs `session` with `inputs`, expecting failure; returns the message.
std::string runError(kiln::Session &session,
                     const std::vector<kiln_named_tensor> &inputs,
                     size_t numOutputs = 1,
                     kiln_status expected = KILN_ERROR_INVALID_ARGUMENT) {
  std::vector<kiln_tensor *> outputs(numOutputs, nullptr);
  kiln_status status =
      kiln_session_run(session.get(), inputs.data(), inputs.size(),
                       outputs.data(), outputs.size());
  CHECK(status == expected);
  for (kiln_tensor *output : outputs) {
    CHECK(output == nullptr);
    kiln_tensor_destroy(output);
  }
  return kiln_last_error();
}

} // namespace

TEST_CASE("add_one runs with any number of threads", "[session]") {
  kiln::Model model(fixturePath("add_one"));
  for (uint32_t threads : {1u, 2u, 3u, 8u, 0u}) {
    kiln::Session session(model, threads);
    CHECK(session.numThreads() >= 1);
    if (threads)
      CHECK(session.numThreads() == threads);
    for (int run = 0; run < 3; ++run) {
      kiln::Tensor x = addOneInput(static_cast<float>(run) - 2.5f);
      std::vector<kiln::Tensor> outputs = session.run({{"x", &x}});
      REQUIRE(outputs.size() == 1);
      CHECK(outputs[0].dtype() == KILN_DTYPE_F32);
      CHECK(outputs[0].shape() == std::vector<int64_t>{2, 3});
      CHECK(reinterpret_cast<uintptr_t>(outputs[0].data()) % KILN_ALIGNMENT ==
            0);
      for (int i = 0; i < 6; ++i)
        CHECK(outputs[0].data<float>()[i] == x.data<float>()[i] + 1.0f);
    }
  }
}

TEST_CASE("sessions of one model run concurrently", "[session]") {
  kiln::Model model(fixturePath("add_one"));
  std::vector<std::thread> threads;
  std::vector<int> failures(4, 0);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      kiln::Session session(model, 2);
      for (int run = 0; run < 200; ++run) {
        kiln::Tensor x = addOneInput(static_cast<float>(t * 1000 + run));
        std::vector<kiln::Tensor> outputs = session.run({{"x", &x}});
        for (int i = 0; i < 6; ++i)
          failures[t] += outputs[0].data<float>()[i] != x.data<float>()[i] + 1;
      }
    });
  for (std::thread &thread : threads)
    thread.join();
  CHECK(failures == std::vector<int>(4, 0));
}

TEST_CASE("wrong inputs are rejected with their names", "[session]") {
  kiln::Model model(fixturePath("two_inputs"));
  kiln::Session session(model, 1);
  kiln::Tensor x = kiln::Tensor::create(KILN_DTYPE_F32, {2, 2});
  kiln::Tensor mask = kiln::Tensor::create(KILN_DTYPE_I64, {2, 2});
  kiln::Tensor maskF32 = kiln::Tensor::create(KILN_DTYPE_F32, {2, 2});
  kiln::Tensor xShort = kiln::Tensor::create(KILN_DTYPE_F32, {2});
  kiln::Tensor xWide = kiln::Tensor::create(KILN_DTYPE_F32, {2, 3});

  CHECK(runError(session, {{"x", x.get()}, {"foo", mask.get()}}, 2) ==
        "unknown input 'foo' (model inputs: x, mask)");
  CHECK(runError(session, {{"mask", mask.get()}}, 2) == "missing input 'x'");
  CHECK(runError(session, {{"x", x.get()}}, 2) == "missing input 'mask'");
  CHECK(runError(session, {{"x", x.get()}, {"x", x.get()}}, 2) ==
        "input 'x' given twice");
  CHECK(runError(session, {{"x", x.get()}, {"mask", maskF32.get()}}, 2) ==
        "input 'mask': expected int64, got float32");
  CHECK(runError(session, {{"x", xShort.get()}, {"mask", mask.get()}}, 2) ==
        "input 'x': expected shape [2,2], got [2]");
  CHECK(runError(session, {{"x", xWide.get()}, {"mask", mask.get()}}, 2) ==
        "input 'x': expected shape [2,2], got [2,3]");
  CHECK(runError(session, {{"x", x.get()}, {"mask", nullptr}}, 2) ==
        "input 'mask': tensor is NULL");
  CHECK(runError(session, {{"x", x.get()}, {"mask", mask.get()}}, 1) ==
        "num_outputs is 1, but the model has 2 output(s)");
  CHECK(runError(session, {{nullptr, x.get()}}, 2) ==
        "input 0 has a NULL name");

  // After all that, a correct run still works.
  for (int i = 0; i < 4; ++i) {
    x.data<float>()[i] = 0.5f * static_cast<float>(i);
    mask.data<int64_t>()[i] = i % 2;
  }
  std::vector<kiln::Tensor> outputs =
      session.run({{"mask", &mask}, {"x", &x}}); // any order
  REQUIRE(outputs.size() == 2);
  CHECK(outputs[0].data<float>()[3] == 2.5f);
  CHECK(outputs[1].rank() == 0);
  CHECK(outputs[1].data<int64_t>()[0] == 2);
}

TEST_CASE("a failing entry point is a run failure", "[session]") {
  kiln::Model model(fixturePath("add_one_fails"));
  kiln::Session session(model, 2);
  kiln::Tensor x = addOneInput(0);
  CHECK(runError(session, {{"x", x.get()}}, 1, KILN_ERROR_RUN_FAILED) ==
        "the model's entry point failed with code 3");
  try {
    session.run({{"x", &x}});
    FAIL("expected kiln::Error");
  } catch (const kiln::Error &error) {
    CHECK(error.status() == KILN_ERROR_RUN_FAILED);
  }
}

TEST_CASE("session creation checks its arguments", "[session]") {
  kiln::Model model(fixturePath("add_one"));
  kiln_session *session = nullptr;
  CHECK(kiln_session_create(nullptr, nullptr, &session) ==
        KILN_ERROR_INVALID_ARGUMENT);
  kiln_session_options tooMany{100000};
  CHECK(kiln_session_create(model.get(), &tooMany, &session) ==
        KILN_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(kiln_last_error()) ==
        "num_threads 100000 is more than the limit of 1024");
  CHECK(kiln_session_create(model.get(), nullptr, &session) == KILN_OK);
  CHECK(kiln_session_num_threads(session) >= 1);
  kiln_session_destroy(session);
  kiln_session_destroy(nullptr); // a no-op
  CHECK(kiln_session_run(nullptr, nullptr, 0, nullptr, 0) ==
        KILN_ERROR_INVALID_ARGUMENT);
}

TEST_CASE("an arena larger than the memory available is refused at "
          "session creation",
          "[session]") {
  kiln::Model model(fixturePath("add_one_huge_arena"));
  kiln_session *session = nullptr;
  CHECK(kiln_session_create(model.get(), nullptr, &session) ==
        KILN_ERROR_OUT_OF_MEMORY);
  CHECK(session == nullptr);
  std::string error = kiln_last_error();
  INFO(error);
  CHECK(error.find("add_one_huge_arena") != std::string::npos);
  CHECK(error.find("' needs 1125899.9 GB for its arena (intermediate "
                   "tensors), but only ") != std::string::npos);
  CHECK((error.find(" are available (MemAvailable)") != std::string::npos ||
         error.find(" are available (the cgroup limit)") != std::string::npos));
}
