// GPU artifacts with a symbolic dim (fixtures/gpu_rows.c: x [rows, 64] ->
// y [rows]): the emulator runs them at any size in one session (input
// buffers grown, run-time buffers from the device scratch, the output
// copied from the address the run reports), and against the fake CUDA
// driver a graph is captured only by a run repeating the last run's
// extents and replayed only for those extents.
#include <catch.hpp>

#include "test_support.h"

#include "kiln/runtime.hpp"

#include <string>
#include <vector>

using kiln::test::fixturePath;
using kiln::test::readLog;
using kiln::test::useFakeDriver;

namespace {

kiln::Tensor rowsOf(int64_t rows) {
  kiln::Tensor x = kiln::Tensor::create(KILN_DTYPE_F32, {rows, 64});
  for (int64_t i = 0; i < rows * 64; ++i)
    x.data<float>()[i] = static_cast<float>(i % 64 + i / 64);
  return x;
}

// y[b] = 2 * sum of row b.
void checkSums(const kiln::Tensor &x, const kiln::Tensor &y) {
  int64_t rows = x.shape()[0];
  REQUIRE(y.shape() == std::vector<int64_t>{rows});
  for (int64_t b = 0; b < rows; ++b) {
    float sum = 0;
    for (int i = 0; i < 64; ++i)
      sum += x.data<float>()[b * 64 + i];
    CHECK(y.data<float>()[b] == Approx(2 * sum));
  }
}

size_t count(const std::string &text, const std::string &what) {
  size_t n = 0;
  for (size_t at = 0; (at = text.find(what, at)) != std::string::npos; ++at)
    ++n;
  return n;
}

} // namespace

TEST_CASE("an emulated GPU artifact runs a symbolic dim at any size", "[gpu]") {
  kiln::Model model(fixturePath("gpu_rows"));
  kiln::Session session(model, 1);
  for (int64_t rows : {4, 100, 1, 100, 37, 4}) {
    kiln::Tensor x = rowsOf(rows);
    std::vector<kiln::Tensor> y = session.run({{"x", &x}});
    REQUIRE(y.size() == 1);
    checkSums(x, y[0]);
  }
  // The range is the runtime's check, as for CPU artifacts.
  kiln::Tensor big = rowsOf(5000);
  kiln_named_tensor input{"x", big.get()};
  kiln_tensor *out = nullptr;
  CHECK(kiln_session_run(session.get(), &input, 1, &out, 1) ==
        KILN_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(kiln_last_error()) ==
        "input 'x' dim 0 (rows) is 5000, outside the range 1..4096 the model "
        "was compiled for");
  // Device buffers carry no shape: run_device refuses the artifact.
  const void *in[1] = {nullptr};
  void *outs[1] = {nullptr};
  CHECK(kiln_session_run_device(session.get(), in, 1, outs, 1) ==
        KILN_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(kiln_last_error()) ==
        "kiln_session_run_device: input 'x' has a run-time shape; run it "
        "with kiln_session_run");
}

TEST_CASE("a graph is captured for repeated extents and replayed for them",
          "[gpu_cuda]") {
  std::string log = useFakeDriver();
  std::vector<std::string> runs;
  {
    kiln::Model model(fixturePath("gpu_rows_cuda"));
    kiln::Session session(model, 1);
    size_t seen = 0;
    for (int64_t rows : {4, 4, 4, 8, 4, 4, 4}) {
      kiln::Tensor x = rowsOf(rows);
      std::vector<kiln::Tensor> y = session.run({{"x", &x}});
      REQUIRE(y[0].shape() == std::vector<int64_t>{rows});
      std::string text = readLog(log);
      runs.push_back(text.substr(seen));
      seen = text.size();
    }
  }
  // 4 rows: launched directly (the input buffer and the scratch's first
  // chunk are allocated), then captured (the extents repeat, the buffers
  // stay), then replayed.
  CHECK(count(runs[0], "cuLaunchKernel block_sum grid 4x1x1") == 1);
  CHECK(count(runs[0], "cuMemAlloc 1048576") == 1);
  CHECK(count(runs[0], "Capture") == 0);
  CHECK(count(runs[1], "cuStreamBeginCapture") == 1);
  CHECK(count(runs[1], "capture block_sum grid 4x1x1") == 1);
  CHECK(count(runs[1], "cuGraphLaunch 2 launches") == 1);
  CHECK(count(runs[2], "cuGraphLaunch 2 launches") == 1);
  CHECK(count(runs[2], "cuLaunchKernel") + count(runs[2], "capture ") == 0);
  // 8 rows: a larger input buffer, launched directly.
  CHECK(count(runs[3], "cuMemAlloc 2048") == 1);
  CHECK(count(runs[3], "cuLaunchKernel block_sum grid 8x1x1") == 1);
  CHECK(count(runs[3], "cuGraphLaunch") == 0);
  // Back to 4 rows (the input buffer, grown for 8, stays): other extents
  // than the last run's, so no graph; then a new capture, then replays.
  CHECK(count(runs[4], "cuLaunchKernel block_sum grid 4x1x1") == 1);
  CHECK(count(runs[4], "cuGraphLaunch") == 0);
  CHECK(count(runs[5], "capture block_sum grid 4x1x1") == 1);
  CHECK(count(runs[6], "cuGraphLaunch 2 launches") == 1);
  CHECK(count(runs[6], "cuLaunchKernel") + count(runs[6], "capture ") == 0);
  // Every run copies y [rows] back from the address its record names.
  CHECK(count(runs[0], "cuMemcpyDtoHAsync 16") == 1);
  CHECK(count(runs[3], "cuMemcpyDtoHAsync 32") == 1);
  CHECK(count(runs[6], "cuMemcpyDtoHAsync 16") == 1);
}
