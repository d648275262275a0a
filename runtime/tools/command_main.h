// Shared shell of the run and bench commands: option parsing, --help, and
// turning exceptions into one "error: ..." line and an exit code.
#ifndef KILN_TOOLS_COMMAND_MAIN_H
#define KILN_TOOLS_COMMAND_MAIN_H

#include "runner.h"
#include "runner_options.h"

#include <functional>

namespace kiln::runner {

// Parses options and calls `body`, returning its exit code. --help prints
// usage (exit 0); a usage error prints one "error: ..." line pointing at
// --help (exit 2); any other exception becomes "error: <message>" on stderr
// and exit 1. With `prepare`, the model argument goes through it first.
int commandMain(Command command, int argc, char **argv,
                const std::function<int(const RunnerOptions &)> &body,
                const KilnModelPreparer &prepare = nullptr);

} // namespace kiln::runner

#endif // KILN_TOOLS_COMMAND_MAIN_H
