// `bench`: latency of an artifact over repeated runs, plus peak memory.
#include "runner.h"

#include "command_main.h"
#include "tensor_args.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <sys/resource.h>

namespace kiln::runner {
namespace {

// This process's own high-water mark: VmHWM belongs to its address space,
// while getrusage's ru_maxrss also keeps the peak of whatever ran before
// exec in the same process (a large parent that forked this one).
double peakRssMegabytes() {
  if (FILE *status = std::fopen("/proc/self/status", "r")) {
    char line[256];
    long kilobytes = -1;
    while (std::fgets(line, sizeof line, status))
      if (std::sscanf(line, "VmHWM: %ld kB", &kilobytes) == 1)
        break;
    std::fclose(status);
    if (kilobytes >= 0)
      return static_cast<double>(kilobytes) / 1024.0;
  }
  struct rusage usage;
  if (getrusage(RUSAGE_SELF, &usage) != 0)
    return 0;
  return static_cast<double>(usage.ru_maxrss) / 1024.0; // Linux: kilobytes
}

// Three decimals, or four significant digits for sub-millisecond models.
std::string formatMilliseconds(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, value < 1 ? "%.4g" : "%.3f", value);
  return buffer;
}

int bench(const RunnerOptions &options) {
  Model model(options.model);
  const kiln_artifact_descriptor &descriptor = model.descriptor();
  std::vector<std::pair<std::string, Tensor>> inputs =
      loadInputs(descriptor, options);
  auto refs = inputRefs(inputs);
  Session session(model, options.threads);

  for (int i = 0; i < options.warmup; ++i)
    session.run(refs);
  std::vector<double> times;
  times.reserve(options.repeat);
  for (int i = 0; i < options.repeat; ++i) {
    auto start = std::chrono::steady_clock::now();
    session.run(refs);
    std::chrono::duration<double, std::milli> elapsed =
        std::chrono::steady_clock::now() - start;
    times.push_back(elapsed.count());
  }
  std::sort(times.begin(), times.end());
  size_t mid = times.size() / 2;
  double median =
      times.size() % 2 ? times[mid] : (times[mid - 1] + times[mid]) / 2;
  std::printf("model: %s (%u threads, %d warmup, %d runs)\n",
              options.model.c_str(), session.numThreads(), options.warmup,
              options.repeat);
  std::printf("latency: median %s ms, min %s ms\n",
              formatMilliseconds(median).c_str(),
              formatMilliseconds(times.front()).c_str());
  // The compiler's count of the contractions' work, when it made one.
  if (uint64_t flops = model.descriptor().flops; flops && median > 0)
    std::printf("compute: %.2f GFLOP per run, %.1f GFLOP/s at the median\n",
                double(flops) * 1e-9, double(flops) * 1e-6 / median);
  std::printf("peak RSS: %.1f MB\n", peakRssMegabytes());
  std::fflush(stdout);
  return 0;
}

} // namespace
} // namespace kiln::runner

int kilnBenchMain(int argc, char **argv) {
  return kiln::runner::commandMain(kiln::runner::Command::Bench, argc, argv,
                                   kiln::runner::bench);
}
