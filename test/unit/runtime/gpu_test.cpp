// GPU artifacts: the emulator (barrier kernels as fibers, parallel blocks,
// device weights) and the CUDA path against the fake driver of
// fixtures/fake_cuda.c (module load, weights once per model, buffers per
// session, graph capture and replay, and the errors a user can meet).
#include <catch.hpp>

#include "test_support.h"

#include "kiln/runtime.hpp"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <vector>

using kiln::test::fixturePath;
using kiln::test::scratchPath;

namespace {

kiln::Tensor rows(float scale) {
  kiln::Tensor x = kiln::Tensor::create(KILN_DTYPE_F32, {4, 64});
  for (int i = 0; i < 4 * 64; ++i)
    x.data<float>()[i] = scale * static_cast<float>(i % 64 + i / 64);
  return x;
}

// y[b] = 2 * sum of row b.
void checkSums(const kiln::Tensor &x, const kiln::Tensor &y) {
  REQUIRE(y.shape() == std::vector<int64_t>{4});
  for (int b = 0; b < 4; ++b) {
    float sum = 0;
    for (int i = 0; i < 64; ++i)
      sum += x.data<float>()[b * 64 + i];
    CHECK(y.data<float>()[b] == Approx(2 * sum));
  }
}

std::string loadError(const std::string &path) {
  kiln_model *model = nullptr;
  CHECK(kiln_model_load(path.c_str(), &model) != KILN_OK);
  CHECK(model == nullptr);
  return kiln_last_error();
}

} // namespace

TEST_CASE("the emulator runs kernels with barriers and shared memory",
          "[gpu]") {
  kiln::Model model(fixturePath("gpu_sum"));
  CHECK(std::string(kiln_model_device_name(model.get())) ==
        "kiln GPU emulator");
  for (uint32_t threads : {1u, 2u}) {
    kiln::Session a(model, threads), b(model, threads);
    for (int run = 0; run < 2; ++run) {
      kiln::Tensor x = rows(0.5f + run);
      checkSums(x, a.run({{"x", &x}})[0]);
      checkSums(x, b.run({{"x", &x}})[0]);
    }
  }
}

TEST_CASE("kiln_session_run_device takes device buffers", "[gpu]") {
  kiln::Model model(fixturePath("gpu_sum"));
  kiln::Session session(model, 1);
  kiln::Tensor x = rows(1.0f);
  kiln::Tensor y = kiln::Tensor::create(KILN_DTYPE_F32, {4});
  // The emulator's device memory is host memory.
  const void *in[] = {x.data()};
  void *out[] = {y.data()};
  REQUIRE(kiln_session_run_device(session.get(), in, 1, out, 1) == KILN_OK);
  checkSums(x, y);
  CHECK(kiln_session_run_device(session.get(), in, 2, out, 1) ==
        KILN_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(kiln_last_error()) ==
        "kiln_session_run_device: the model has 1 input(s) and 1 output(s), "
        "got 2 and 1");
}

TEST_CASE("tensor-core kernels read device buffers at any alignment", "[gpu]") {
  // y = a·b ([64, 256] x [256, 256]) on bf16 tensor cores, a compiled
  // artifact. Device buffers at an offset that is not 16-byte aligned are
  // copied into the session's own (aligned) ones, so the kernel's vector
  // loads still apply: the same bits as a host run, within bf16's error of
  // the product.
  kiln::Model model(fixturePath("gpu_matmul_bf16"));
  kiln::Session session(model, 1);
  const int64_t m = 64, k = 256, n = 256;
  kiln::Tensor a = kiln::Tensor::create(KILN_DTYPE_F32, {m, k});
  kiln::Tensor b = kiln::Tensor::create(KILN_DTYPE_F32, {k, n});
  for (int64_t i = 0; i < m * k; ++i)
    a.data<float>()[i] = static_cast<float>((i * 37) % 101 - 50) / 64.0f;
  for (int64_t i = 0; i < k * n; ++i)
    b.data<float>()[i] = static_cast<float>((i * 53) % 97 - 48) / 256.0f;
  std::vector<kiln::Tensor> outputs = session.run({{"a", &a}, {"b", &b}});
  const kiln::Tensor &aligned = outputs[0];

  // The same inputs and output one float past a 16-byte boundary.
  std::vector<float> storage(m * k + k * n + m * n + 16);
  auto *base = reinterpret_cast<float *>(
      (reinterpret_cast<uintptr_t>(storage.data()) + 15) & ~uintptr_t(15));
  float *pa = base + 1, *pb = pa + m * k, *py = pb + k * n;
  std::copy(a.data<float>(), a.data<float>() + m * k, pa);
  std::copy(b.data<float>(), b.data<float>() + k * n, pb);
  const void *in[] = {pa, pb};
  void *out[] = {py};
  REQUIRE(kiln_session_run_device(session.get(), in, 2, out, 1) == KILN_OK);

  double error = 0, norm = 0;
  for (int64_t r = 0; r < m; ++r)
    for (int64_t c = 0; c < n; ++c) {
      double exact = 0;
      for (int64_t j = 0; j < k; ++j)
        exact +=
            double(a.data<float>()[r * k + j]) * b.data<float>()[j * n + c];
      float got = aligned.data<float>()[r * n + c];
      REQUIRE(py[r * n + c] == got);
      error += (got - exact) * (got - exact);
      norm += exact * exact;
    }
  CHECK(std::sqrt(error / norm) < 1e-2);
}

TEST_CASE("a CPU artifact refuses device runs", "[gpu]") {
  kiln::Model model(fixturePath("add_one"));
  kiln::Session session(model, 1);
  const void *in[] = {nullptr};
  void *out[] = {nullptr};
  CHECK(kiln_session_run_device(session.get(), in, 1, out, 1) ==
        KILN_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(kiln_last_error()) ==
        "kiln_session_run_device needs a GPU artifact; '" +
            fixturePath("add_one") + "' runs on the CPU");
  CHECK(kiln_model_device_name(model.get()) == nullptr);
}

TEST_CASE("threads that skip a barrier fail the run", "[gpu]") {
  kiln::Model model(fixturePath("gpu_sum_diverge"));
  kiln::Session session(model, 1);
  kiln::Tensor x = rows(1.0f);
  kiln_named_tensor input{"x", x.get()};
  kiln_tensor *y = nullptr;
  CHECK(kiln_session_run(session.get(), &input, 1, &y, 1) ==
        KILN_ERROR_RUN_FAILED);
  CHECK(y == nullptr);
  CHECK(std::string(kiln_last_error()) ==
        "the model's run failed: kernel block_sum (ONNX nodes: ReduceSum_0): "
        "threads of block (0,0,0) reached different barriers (32 waiting at "
        "barrier 1, 32 returned)");
}

TEST_CASE("kiln_model_inspect reads a GPU artifact without a GPU", "[gpu]") {
  kiln_model *model = nullptr;
  REQUIRE(kiln_model_inspect(fixturePath("gpu_sum_cuda").c_str(), &model) ==
          KILN_OK);
  const kiln_artifact_descriptor *d = kiln_model_descriptor(model);
  REQUIRE(d->gpu);
  CHECK(d->gpu->platform == KILN_GPU_CUDA);
  CHECK(d->gpu->num_kernels == 2);
  CHECK(std::string(d->gpu->kernels[0].onnx_nodes) == "ReduceSum_0");
  kiln_session *session = nullptr;
  CHECK(kiln_session_create(model, nullptr, &session) ==
        KILN_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(kiln_last_error()) ==
        "'" + fixturePath("gpu_sum_cuda") +
            "' was opened by kiln_model_inspect; load it with "
            "kiln_model_load to run it");
  kiln_model_free(model);
}

// ---- The CUDA path against the fake driver. ----
using kiln::test::readLog;
using kiln::test::useFakeDriver;

TEST_CASE("a CUDA model loads once, captures a graph, then replays it",
          "[gpu_cuda]") {
  std::string log = useFakeDriver();
  {
    kiln::Model model(fixturePath("gpu_sum_cuda"));
    CHECK(std::string(kiln_model_device_name(model.get())) ==
          "Fake GPU 0 (sm_90)");
    kiln::Session first(model, 1), second(model, 1);
    kiln::Tensor x = rows(1.0f);
    for (int run = 0; run < 2; ++run)
      first.run({{"x", &x}});
    second.run({{"x", &x}});
  }
  CHECK(readLog(log) == "cuInit\n"
                        "cuDevicePrimaryCtxRetain 0\n"
                        "cuModuleLoadData 50ed55ba\n"
                        "cuModuleGetFunction block_sum\n"
                        "cuModuleGetFunction scale\n"
                        // The weights, once for both sessions.
                        "cuMemAlloc 64\n"
                        "cuMemcpyHtoD 64\n"
                        // Each session: stream, arena, input, output.
                        "cuStreamCreate 1\n"
                        "cuMemAlloc 16\n"
                        "cuMemAlloc 1024\n"
                        "cuMemAlloc 16\n"
                        "cuStreamCreate 1\n"
                        "cuMemAlloc 16\n"
                        "cuMemAlloc 1024\n"
                        "cuMemAlloc 16\n"
                        // First run: captured, then replayed.
                        "cuMemcpyHtoDAsync 1024\n"
                        "cuStreamBeginCapture 1\n"
                        "capture block_sum grid 4x1x1 block 64x1x1 shared 0 "
                        "param0 set\n"
                        "capture scale grid 1x1x1 block 32x1x1 shared 0 "
                        "param0 set\n"
                        "cuStreamEndCapture 2 launches\n"
                        "cuGraphInstantiate\n"
                        "cuGraphLaunch 2 launches\n"
                        "cuMemcpyDtoHAsync 16\n"
                        "cuStreamSynchronize\n"
                        // Second run: the graph only.
                        "cuMemcpyHtoDAsync 1024\n"
                        "cuGraphLaunch 2 launches\n"
                        "cuMemcpyDtoHAsync 16\n"
                        "cuStreamSynchronize\n"
                        // The other session captures its own graph.
                        "cuMemcpyHtoDAsync 1024\n"
                        "cuStreamBeginCapture 1\n"
                        "capture block_sum grid 4x1x1 block 64x1x1 shared 0 "
                        "param0 set\n"
                        "capture scale grid 1x1x1 block 32x1x1 shared 0 "
                        "param0 set\n"
                        "cuStreamEndCapture 2 launches\n"
                        "cuGraphInstantiate\n"
                        "cuGraphLaunch 2 launches\n"
                        "cuMemcpyDtoHAsync 16\n"
                        "cuStreamSynchronize\n"
                        "cuStreamDestroy\n"
                        "cuMemFree 1024\n"
                        "cuMemFree 16\n"
                        "cuMemFree 16\n"
                        "cuStreamDestroy\n"
                        "cuMemFree 1024\n"
                        "cuMemFree 16\n"
                        "cuMemFree 16\n"
                        "cuMemFree 64\n"
                        "cuModuleUnload\n"
                        "cuDevicePrimaryCtxRelease 0\n");
}

TEST_CASE("without graphs every run launches its kernels", "[gpu_cuda]") {
  std::string log = useFakeDriver();
  kiln::Model model(fixturePath("gpu_sum_cuda"));
  kiln_session_options options{1, /*disable_gpu_graphs=*/1};
  kiln_session *session = nullptr;
  REQUIRE(kiln_session_create(model.get(), &options, &session) == KILN_OK);
  kiln::Tensor x = rows(1.0f);
  kiln_named_tensor input{"x", x.get()};
  for (int run = 0; run < 2; ++run) {
    kiln_tensor *y = nullptr;
    REQUIRE(kiln_session_run(session, &input, 1, &y, 1) == KILN_OK);
    kiln_tensor_destroy(y);
  }
  // Per-kernel timing: the fake's events report 0.5 ms each.
  REQUIRE(kiln_session_time_next_run(session) == KILN_OK);
  kiln_tensor *y = nullptr;
  REQUIRE(kiln_session_run(session, &input, 1, &y, 1) == KILN_OK);
  kiln_tensor_destroy(y);
  kiln_kernel_time times[4];
  REQUIRE(kiln_session_kernel_times(session, times, 4) == 2);
  CHECK(times[0].kernel == 0);
  CHECK(times[1].kernel == 1);
  CHECK(times[1].milliseconds == 0.5f);
  kiln_session_destroy(session);
  std::string text = readLog(log);
  size_t launches = 0;
  for (size_t at = 0;
       (at = text.find("cuLaunchKernel block_sum", at)) != std::string::npos;
       ++at)
    ++launches;
  CHECK(launches == 3);
  CHECK(text.find("Capture") == std::string::npos);
}

TEST_CASE("CUDA errors name what failed", "[gpu_cuda]") {
  std::string path = fixturePath("gpu_sum_cuda");
  SECTION("no GPU") {
    useFakeDriver({{"FAKE_CUDA_DEVICES", "0"}});
    CHECK(loadError(path) ==
          "'" + path +
              "' needs a CUDA GPU, and the driver finds none: "
              "CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected)");
  }
  SECTION("no code for this GPU") {
    useFakeDriver({{"FAKE_CUDA_NO_BINARY", "1"}});
    CHECK(loadError(path) ==
          "'" + path +
              "' has no code this GPU (Fake GPU 0 (sm_90)) can run: it was "
              "built for sm_80,sm_90a (CUDA_ERROR_NO_BINARY_FOR_GPU (no "
              "kernel image is available for execution on the device)); "
              "compile with --gpu-arch=sm_90");
  }
  SECTION("out of device memory") {
    useFakeDriver({{"FAKE_CUDA_MEMORY", "100"}});
    kiln::Model model(path);
    kiln_session *session = nullptr;
    CHECK(kiln_session_create(model.get(), nullptr, &session) ==
          KILN_ERROR_OUT_OF_MEMORY);
    CHECK(std::string(kiln_last_error()) ==
          "out of GPU memory allocating 1024 bytes for the input 'x' (20 of "
          "100 bytes free on Fake GPU 0 (sm_90)): CUDA_ERROR_OUT_OF_MEMORY "
          "(out of memory)");
  }
  SECTION("a kernel that fails to launch") {
    useFakeDriver({{"FAKE_CUDA_FAIL_LAUNCH", "scale"}});
    kiln::Model model(path);
    kiln_session_options options{1, /*disable_gpu_graphs=*/1};
    kiln_session *session = nullptr;
    REQUIRE(kiln_session_create(model.get(), &options, &session) == KILN_OK);
    kiln::Tensor x = rows(1.0f);
    kiln_named_tensor input{"x", x.get()};
    kiln_tensor *y = nullptr;
    CHECK(kiln_session_run(session, &input, 1, &y, 1) == KILN_ERROR_RUN_FAILED);
    CHECK(y == nullptr);
    CHECK(std::string(kiln_last_error()) ==
          "the model's run failed: kernel scale (ONNX nodes: Mul_1) failed "
          "to launch (grid 1x1x1, block 32x1x1): CUDA_ERROR_LAUNCH_FAILED "
          "(unspecified launch failure)");
    kiln_session_destroy(session);
  }
}

TEST_CASE("a kernel fault is reported at the run's end, or by name with "
          "KILN_CUDA_SYNC=1",
          "[gpu_cuda]") {
  std::string path = fixturePath("gpu_sum_cuda");
  kiln::Tensor x = rows(1.0f);
  kiln_named_tensor input{"x", x.get()};
  SECTION("by default the graph's run fails as a whole") {
    useFakeDriver({{"FAKE_CUDA_FAULT", "block_sum"}});
    kiln::Model model(path);
    kiln_session *session = nullptr;
    REQUIRE(kiln_session_create(model.get(), nullptr, &session) == KILN_OK);
    kiln_tensor *y = nullptr;
    CHECK(kiln_session_run(session, &input, 1, &y, 1) == KILN_ERROR_RUN_FAILED);
    CHECK(y == nullptr);
    CHECK(std::string(kiln_last_error()) ==
          "the GPU run failed (KILN_CUDA_SYNC=1 names the kernel): "
          "CUDA_ERROR_LAUNCH_FAILED (unspecified launch failure)");
    kiln_session_destroy(session);
  }
  SECTION("KILN_CUDA_SYNC=1 launches directly and waits after each kernel") {
    std::string log = useFakeDriver(
        {{"FAKE_CUDA_FAULT", "block_sum"}, {"KILN_CUDA_SYNC", "1"}});
    kiln::Model model(path);
    kiln_session *session = nullptr;
    REQUIRE(kiln_session_create(model.get(), nullptr, &session) == KILN_OK);
    kiln_tensor *y = nullptr;
    CHECK(kiln_session_run(session, &input, 1, &y, 1) == KILN_ERROR_RUN_FAILED);
    CHECK(std::string(kiln_last_error()) ==
          "the model's run failed: kernel block_sum (ONNX nodes: "
          "ReduceSum_0) failed: CUDA_ERROR_LAUNCH_FAILED (unspecified launch "
          "failure)");
    kiln_session_destroy(session);
    unsetenv("KILN_CUDA_SYNC");
    std::string text = readLog(log);
    CHECK(text.find("Capture") == std::string::npos);
    CHECK(text.find("cuLaunchKernel block_sum grid 4x1x1 block 64x1x1 shared "
                    "0 param0 set\ncuStreamSynchronize\n") !=
          std::string::npos);
  }
}
