// Concurrency: many sessions of one model, a session shared by mistake,
// repeated load/unload, two artifacts side by side (docs/reliability.md).
// With KILN_STRESS_MODEL set to a compiled artifact (ctest
// runtime.concurrency.cnn / .transformer) the first case runs that model;
// otherwise the add_one fixture.
#include <catch.hpp>

#include "test_support.h"

#include "kiln/runtime.hpp"

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <thread>

using kiln::test::fixturePath;

namespace {

std::string stressModel() {
  const char *path = std::getenv("KILN_STRESS_MODEL");
  return path && *path ? path : fixturePath("add_one");
}

/// Deterministic inputs for run `seed`: every byte from a small LCG, as
/// floats in [-1, 1) for float32 inputs.
std::vector<kiln::Tensor> inputsFor(const kiln_artifact_descriptor &d,
                                    uint32_t seed) {
  std::vector<kiln::Tensor> inputs;
  uint32_t state = seed * 2654435761u + 1;
  for (uint32_t i = 0; i < d.num_inputs; ++i) {
    const kiln_tensor_desc &desc = d.inputs[i];
    std::vector<int64_t> shape(desc.shape, desc.shape + desc.rank);
    kiln::Tensor t =
        kiln::Tensor::create(static_cast<kiln_dtype>(desc.dtype), shape);
    if (desc.dtype == KILN_DTYPE_F32) {
      for (size_t e = 0; e < t.numElements(); ++e) {
        state = state * 1664525u + 1013904223u;
        t.data<float>()[e] = (state >> 8) / float(1 << 23) - 1.0f;
      }
    } else {
      std::memset(t.data<unsigned char>(), 0, t.sizeBytes());
    }
    inputs.push_back(std::move(t));
  }
  return inputs;
}

std::vector<std::vector<unsigned char>>
runOnce(kiln::Session &session, const kiln::Model &model, uint32_t seed) {
  std::vector<kiln::Tensor> inputs = inputsFor(model.descriptor(), seed);
  std::vector<std::pair<std::string, const kiln::Tensor *>> named;
  for (uint32_t i = 0; i < model.descriptor().num_inputs; ++i)
    named.push_back({model.descriptor().inputs[i].name, &inputs[i]});
  std::vector<std::vector<unsigned char>> bytes;
  for (kiln::Tensor &out : session.run(named)) {
    auto *p = out.data<unsigned char>();
    bytes.emplace_back(p, p + out.sizeBytes());
  }
  return bytes;
}

size_t residentBytes() {
  std::ifstream statm("/proc/self/statm");
  size_t pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * 4096;
}

} // namespace

TEST_CASE("8 threads x 500 runs on separate sessions match one thread "
          "bit for bit",
          "[concurrency]") {
  kiln::Model model(stressModel());
  constexpr int kThreads = 8, kRuns = 500, kDistinct = 16;
  // References, one thread: kDistinct different inputs.
  std::vector<std::vector<std::vector<unsigned char>>> expected;
  {
    kiln::Session session(model, 1);
    for (int s = 0; s < kDistinct; ++s)
      expected.push_back(runOnce(session, model, s));
  }
  std::atomic<int> mismatches{0}, errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      try {
        kiln::Session session(model, 1);
        for (int run = 0; run < kRuns; ++run) {
          int s = (run + t) % kDistinct;
          if (runOnce(session, model, s) != expected[s])
            ++mismatches;
        }
      } catch (const std::exception &) {
        ++errors;
      }
    });
  for (std::thread &thread : threads)
    thread.join();
  CHECK(errors == 0);
  CHECK(mismatches == 0);
}

TEST_CASE("a session shared between threads is refused, not shared",
          "[concurrency]") {
  kiln::Model model(fixturePath("add_one_slow"));
  kiln::Session session(model, 1);
  kiln::Tensor x = kiln::Tensor::create(KILN_DTYPE_F32, {2, 3});
  std::memset(x.data<float>(), 0, x.sizeBytes());
  std::atomic<bool> firstOk{false};
  std::thread first([&] {
    std::vector<kiln::Tensor> out = session.run({{"x", &x}});
    firstOk = out.size() == 1 && out[0].data<float>()[0] == 1.0f;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  kiln_named_tensor input{"x", x.get()};
  kiln_tensor *output = nullptr;
  kiln_status status = kiln_session_run(session.get(), &input, 1, &output, 1);
  CHECK(status == KILN_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(kiln_last_error()) ==
        "kiln_session_run: the session is running on another thread; use "
        "one session per thread (sessions of one model run in parallel)");
  CHECK(output == nullptr);
  first.join();
  CHECK(firstOk);
  // Free again once the first run is done.
  CHECK(session.run({{"x", &x}}).size() == 1);
}

TEST_CASE("loading and unloading an artifact 1000 times keeps memory flat",
          "[concurrency]") {
  auto cycle = [] {
    kiln::Model model(fixturePath("add_one"));
    kiln::Session session(model, 1);
    kiln::Tensor x = kiln::Tensor::create(KILN_DTYPE_F32, {2, 3});
    std::memset(x.data<float>(), 0, x.sizeBytes());
    session.run({{"x", &x}});
  };
  for (int i = 0; i < 50; ++i) // warm up allocator and loader caches
    cycle();
  size_t before = residentBytes();
  for (int i = 0; i < 1000; ++i)
    cycle();
  size_t after = residentBytes();
  INFO("resident " << before / 1024 << " KiB -> " << after / 1024 << " KiB");
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  // The sanitizers' shadow memory grows with every dlopen; under ASan,
  // LeakSanitizer checks the leaks at exit instead.
  (void)after;
#else
  CHECK(after < before + 4 * 1024 * 1024);
#endif
}

TEST_CASE("two artifacts run side by side without interfering",
          "[concurrency]") {
  kiln::Model addOne(fixturePath("add_one"));
  kiln::Model twoInputs(fixturePath("two_inputs"));
  std::vector<std::vector<unsigned char>> addOneRef, twoInputsRef;
  {
    kiln::Session a(addOne, 1), b(twoInputs, 1);
    addOneRef = runOnce(a, addOne, 7);
    twoInputsRef = runOnce(b, twoInputs, 7);
  }
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      kiln::Model &model = t % 2 ? twoInputs : addOne;
      auto &reference = t % 2 ? twoInputsRef : addOneRef;
      kiln::Session session(model, 2);
      for (int run = 0; run < 200; ++run)
        mismatches += runOnce(session, model, 7) != reference;
    });
  for (std::thread &thread : threads)
    thread.join();
  CHECK(mismatches == 0);
}
