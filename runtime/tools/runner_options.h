// Command-line options of the run and bench commands.
#ifndef KILN_TOOLS_RUNNER_OPTIONS_H
#define KILN_TOOLS_RUNNER_OPTIONS_H

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace kiln::runner {

// A bad command line: reported with exit code 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// --input / --expect argument as given: "NAME=FILE" or "FILE". Which one it
// is depends on the model's tensor names, so it is resolved after loading.
struct TensorFileArg {
  std::string text;
};

enum class Command { Run, Bench };

struct RunnerOptions {
  Command command = Command::Run;
  std::string program; // argv[0], for usage text
  std::string model;
  std::vector<TensorFileArg> inputs, expects;
  bool randomInputs = false;
  uint64_t seed = 0;
  // --dim NAME=N: the extent of a symbolic dim for random inputs.
  std::vector<std::pair<std::string, int64_t>> dims;
  std::string outputDir;
  double rtol = 1e-3, atol = 1e-7;
  double relL2 = -1;    // --rel-l2; < 0: the element-wise rule
  uint32_t threads = 0; // 0: all available cores
  int repeat = 50, warmup = 5;
  bool help = false;
};

// Parses argv (argv[0] is the command name). Throws UsageError.
RunnerOptions parseRunnerOptions(Command command, int argc, char **argv);

std::string usageText(Command command, const std::string &program);

} // namespace kiln::runner

#endif // KILN_TOOLS_RUNNER_OPTIONS_H
