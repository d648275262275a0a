#include "command_main.h"

#include <cstdio>
#include <exception>
#include <new>

namespace kiln::runner {

int commandMain(Command command, int argc, char **argv,
                const std::function<int(const RunnerOptions &)> &body,
                const KilnModelPreparer &prepare) {
  std::string program = argc > 0 && argv[0] ? argv[0] : "kiln-run";
  RunnerOptions options;
  try {
    options = parseRunnerOptions(command, argc, argv);
  } catch (const UsageError &error) {
    std::fprintf(stderr, "error: %s (see %s --help)\n", error.what(),
                 program.c_str());
    return 2;
  }
  if (options.help) {
    std::fputs(usageText(command, program).c_str(), stdout);
    return 0;
  }
  if (prepare) {
    std::optional<std::string> artifact = prepare(options.model);
    if (!artifact)
      return 1;
    options.model = *artifact;
  }
  try {
    return body(options);
  } catch (const std::bad_alloc &) {
    std::fprintf(stderr, "error: out of memory\n");
  } catch (const std::exception &error) {
    std::fprintf(stderr, "error: %s\n", error.what());
  }
  return 1;
}

} // namespace kiln::runner
