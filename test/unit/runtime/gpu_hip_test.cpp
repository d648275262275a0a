// The HIP path against the test double of fixtures/fake_hip.c: the bundle
// loaded once per model on the model's device (the caller's device kept),
// weights once, buffers per session, graph capture then replay (or direct
// launches where the runtime cannot capture), timing, and the errors.
#include <catch.hpp>

#include "test_support.h"

#include "kiln/runtime.hpp"

#include <cstdlib>
#include <dlfcn.h>
#include <fstream>
#include <sstream>

using kiln::test::fixturePath;
using kiln::test::scratchPath;

namespace {

// Points the runtime at the fake HIP runtime and starts a new log;
// `settings` are the fake's behaviour switches.
std::string useFakeHip(
    const std::vector<std::pair<const char *, const char *>> &settings = {}) {
  setenv("KILN_HIP_RUNTIME", fixturePath("fake_hip").c_str(), 1);
  for (const char *name :
       {"FAKE_HIP_NO_BINARY", "FAKE_HIP_MEMORY", "FAKE_HIP_NO_GRAPHS"})
    unsetenv(name);
  for (auto [name, value] : settings)
    setenv(name, value, 1);
  std::string log = scratchPath("fake_hip.log");
  std::ofstream(log, std::ios::trunc);
  setenv("FAKE_HIP_LOG", log.c_str(), 1);
  return log;
}

std::string readText(const std::string &path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The fake's current device, as the host program sees it.
int currentDevice() {
  void *fake = dlopen(fixturePath("fake_hip").c_str(), RTLD_NOW | RTLD_LOCAL);
  REQUIRE(fake);
  auto getDevice =
      reinterpret_cast<int (*)(int *)>(dlsym(fake, "hipGetDevice"));
  int device = -1;
  getDevice(&device);
  dlclose(fake);
  return device;
}

kiln::Tensor rows() {
  kiln::Tensor x = kiln::Tensor::create(KILN_DTYPE_F32, {4, 64});
  for (int i = 0; i < 4 * 64; ++i)
    x.data<float>()[i] = 1.0f;
  return x;
}

} // namespace

TEST_CASE("a HIP model loads its bundle once, captures a graph, then "
          "replays it on its own device",
          "[gpu_hip]") {
  std::string log = useFakeHip();
  {
    kiln::Model model(fixturePath("gpu_sum_hip"));
    CHECK(std::string(kiln_model_device_name(model.get())) == "Fake AMD GPU 0");
    kiln::Session session(model, 1);
    kiln::Tensor x = rows();
    for (int run = 0; run < 2; ++run)
      session.run({{"x", &x}});
    // The host program's device (1) is current again after each call.
    CHECK(currentDevice() == 1);
  }
  CHECK(readText(log) == "hipInit\n"
                         "hipModuleLoadData __CLANG_OFFLOAD_BUNDLE__\n"
                         "hipModuleGetFunction block_sum\n"
                         "hipModuleGetFunction scale\n"
                         "hipMalloc 64\n"
                         "hipMemcpyHtoD 64\n"
                         "hipStreamCreateWithFlags 1\n"
                         "hipMalloc 16\n"
                         "hipMalloc 1024\n"
                         "hipMalloc 16\n"
                         "hipMemcpyHtoDAsync 1024\n"
                         "hipStreamBeginCapture 1\n"
                         "capture block_sum grid 4x1x1 block 64x1x1 shared 0 "
                         "param0 set\n"
                         "capture scale grid 1x1x1 block 32x1x1 shared 0 "
                         "param0 set\n"
                         "hipStreamEndCapture 2 launches\n"
                         "hipGraphInstantiateWithFlags\n"
                         "hipGraphLaunch 2 launches\n"
                         "hipMemcpyDtoHAsync 16\n"
                         "hipStreamSynchronize\n"
                         "hipMemcpyHtoDAsync 1024\n"
                         "hipGraphLaunch 2 launches\n"
                         "hipMemcpyDtoHAsync 16\n"
                         "hipStreamSynchronize\n"
                         "hipStreamDestroy\n"
                         "hipFree 1024\n"
                         "hipFree 16\n"
                         "hipFree 16\n"
                         "hipFree 64\n"
                         "hipModuleUnload\n");
}

TEST_CASE("where the HIP runtime cannot capture, runs launch directly",
          "[gpu_hip]") {
  std::string log = useFakeHip({{"FAKE_HIP_NO_GRAPHS", "1"}});
  kiln::Model model(fixturePath("gpu_sum_hip"));
  kiln_session *session = nullptr;
  REQUIRE(kiln_session_create(model.get(), nullptr, &session) == KILN_OK);
  kiln::Tensor x = rows();
  kiln_named_tensor input{"x", x.get()};
  for (int run = 0; run < 2; ++run) {
    kiln_tensor *y = nullptr;
    REQUIRE(kiln_session_run(session, &input, 1, &y, 1) == KILN_OK);
    CHECK(static_cast<const float *>(kiln_tensor_data(y))[0] == 0.0f);
    kiln_tensor_destroy(y);
  }
  // Per-kernel timing: the fake's events report 0.25 ms each.
  REQUIRE(kiln_session_time_next_run(session) == KILN_OK);
  kiln_tensor *y = nullptr;
  REQUIRE(kiln_session_run(session, &input, 1, &y, 1) == KILN_OK);
  kiln_tensor_destroy(y);
  kiln_kernel_time times[4];
  REQUIRE(kiln_session_kernel_times(session, times, 4) == 2);
  CHECK(times[1].kernel == 1);
  CHECK(times[1].milliseconds == 0.25f);
  kiln_session_destroy(session);
  std::string text = readText(log);
  // One refused capture, then three runs of direct launches.
  size_t captures = 0, launches = 0;
  for (size_t at = 0;
       (at = text.find("hipStreamBeginCapture", at)) != std::string::npos; ++at)
    ++captures;
  for (size_t at = 0; (at = text.find("hipModuleLaunchKernel block_sum", at)) !=
                      std::string::npos;
       ++at)
    ++launches;
  CHECK(captures == 1);
  CHECK(launches == 3);
}

TEST_CASE("HIP errors name what failed", "[gpu_hip]") {
  std::string path = fixturePath("gpu_sum_hip");
  SECTION("no code for this GPU") {
    useFakeHip({{"FAKE_HIP_NO_BINARY", "1"}});
    kiln_model *model = nullptr;
    CHECK(kiln_model_load(path.c_str(), &model) == KILN_ERROR_BAD_ARTIFACT);
    CHECK(std::string(kiln_last_error()) ==
          "'" + path +
              "' has no code this GPU (Fake AMD GPU 0) can run: it was built "
              "for gfx90a,gfx942 (hipErrorNoBinaryForGpu (no kernel image is "
              "available for execution on the device)); compile with "
              "--gpu-arch set to this GPU's gfx arch (rocminfo lists it)");
  }
  SECTION("out of device memory") {
    useFakeHip({{"FAKE_HIP_MEMORY", "100"}});
    kiln::Model model(path);
    kiln_session *session = nullptr;
    CHECK(kiln_session_create(model.get(), nullptr, &session) ==
          KILN_ERROR_OUT_OF_MEMORY);
    CHECK(std::string(kiln_last_error()) ==
          "out of GPU memory allocating 1024 bytes for the input 'x' (20 of "
          "100 bytes free on Fake AMD GPU 0): hipErrorOutOfMemory (out of "
          "memory)");
  }
}
