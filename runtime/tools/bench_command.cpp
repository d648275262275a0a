// `bench`: latency of an artifact over repeated runs, plus peak memory.
#include "runner.h"

#include "command_main.h"
#include "tensor_args.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
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

double median(std::vector<double> times) {
  std::sort(times.begin(), times.end());
  size_t mid = times.size() / 2;
  return times.size() % 2 ? times[mid] : (times[mid - 1] + times[mid]) / 2;
}

// GPU artifacts: the latency with the inputs and outputs already on the
// device (the session's own buffers, no copies), and the GPU time of each
// kernel of one run from CUDA events, the slowest first.
void benchGpu(const Model &model, Session &session,
              const RunnerOptions &options,
              const std::vector<std::pair<std::string, const Tensor *>> &refs) {
  const kiln_artifact_descriptor &descriptor = model.descriptor();
  std::vector<const void *> in(descriptor.num_inputs);
  std::vector<void *> out(descriptor.num_outputs);
  for (size_t i = 0; i < in.size(); ++i)
    in[i] = kiln_session_device_input(session.get(), i);
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = kiln_session_device_output(session.get(), i);
  // Inputs or outputs of a run-time shape (symbolic dims) have no device
  // buffer of their own: the latency above, copies included, is the figure.
  auto runTimeShape = [](const kiln_tensor_desc &desc) {
    return std::any_of(desc.shape, desc.shape + desc.rank,
                       [](int64_t d) { return d < 0; });
  };
  bool runTimeShapes =
      std::any_of(descriptor.inputs, descriptor.inputs + descriptor.num_inputs,
                  runTimeShape) ||
      std::any_of(descriptor.outputs,
                  descriptor.outputs + descriptor.num_outputs, runTimeShape);
  std::vector<double> times;
  for (int i = 0; i < options.repeat && !runTimeShapes; ++i) {
    auto start = std::chrono::steady_clock::now();
    detail::check(kiln_session_run_device(session.get(), in.data(), in.size(),
                                          out.data(), out.size()));
    std::chrono::duration<double, std::milli> elapsed =
        std::chrono::steady_clock::now() - start;
    times.push_back(elapsed.count());
  }
  const char *device = kiln_model_device_name(model.get());
  std::printf("device: %s\n", device ? device : "?");
  if (runTimeShapes)
    std::printf("on-device latency: not measured (symbolic dims: the latency "
                "includes the copies)\n");
  else
    std::printf("on-device latency: median %s ms (inputs and outputs in "
                "device memory)\n",
                formatMilliseconds(median(times)).c_str());

  detail::check(kiln_session_time_next_run(session.get()));
  session.run(refs);
  size_t count = kiln_session_kernel_times(session.get(), nullptr, 0);
  std::vector<kiln_kernel_time> kernels(count);
  kiln_session_kernel_times(session.get(), kernels.data(), count);
  std::map<uint32_t, std::pair<double, int>> perKernel;
  double total = 0;
  for (const kiln_kernel_time &k : kernels) {
    perKernel[k.kernel].first += k.milliseconds;
    perKernel[k.kernel].second += 1;
    total += k.milliseconds;
  }
  std::printf("GPU kernel time: %s ms in %zu launches of %zu kernels\n",
              formatMilliseconds(total).c_str(), kernels.size(),
              perKernel.size());
  std::vector<std::pair<double, uint32_t>> slowest;
  for (const auto &[kernel, time] : perKernel)
    slowest.push_back({time.first, kernel});
  std::sort(slowest.rbegin(), slowest.rend());
  const kiln_gpu_program &program = *descriptor.gpu;
  for (size_t i = 0; i < slowest.size() && i < 10; ++i) {
    const kiln_gpu_kernel &k = program.kernels[slowest[i].second];
    std::printf("  %8s ms %5.1f%%  %-18s %s\n",
                formatMilliseconds(slowest[i].first).c_str(),
                total > 0 ? 100 * slowest[i].first / total : 0.0, k.name,
                k.onnx_nodes);
  }
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
  double middle = median(times);
  std::sort(times.begin(), times.end());
  std::printf("model: %s (%u threads, %d warmup, %d runs)\n",
              options.model.c_str(), session.numThreads(), options.warmup,
              options.repeat);
  std::printf("latency: median %s ms, min %s ms\n",
              formatMilliseconds(middle).c_str(),
              formatMilliseconds(times.front()).c_str());
  // The compiler's count of the contractions' work, when it made one.
  if (uint64_t flops = model.descriptor().flops; flops && middle > 0)
    std::printf("compute: %.2f GFLOP per run, %.1f GFLOP/s at the median\n",
                double(flops) * 1e-9, double(flops) * 1e-6 / middle);
  if (descriptor.gpu)
    benchGpu(model, session, options, refs);
  std::printf("peak RSS: %.1f MB\n", peakRssMegabytes());
  std::fflush(stdout);
  return 0;
}

} // namespace
} // namespace kiln::runner

int kilnBenchMain(int argc, char **argv, const KilnModelPreparer &prepare) {
  return kiln::runner::commandMain(kiln::runner::Command::Bench, argc, argv,
                                   kiln::runner::bench, prepare);
}

int kilnBenchMain(int argc, char **argv) {
  return kilnBenchMain(argc, argv, nullptr);
}
