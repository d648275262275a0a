// The `run` and `bench` commands, shared by the standalone kiln-run tool and
// the compiler's `kiln run` / `kiln bench` subcommands.
//
// argv[0] names the command in usage text (e.g. "kiln run" or "kiln-run");
// argv[1] is the artifact (MODEL.so), followed by options (see --help).
// Return value is the process exit code: 0 success, 1 failure (including an
// --expect mismatch), 2 usage error.
#ifndef KILN_TOOLS_RUNNER_H
#define KILN_TOOLS_RUNNER_H

#include <functional>
#include <optional>
#include <string>

// `kiln run` and `kiln bench` also take model files: `prepare` turns the
// model argument into the artifact to load (compiling a model to a
// temporary artifact), or returns nullopt after printing why it cannot.
using KilnModelPreparer =
    std::function<std::optional<std::string>(const std::string &model)>;

int kilnRunMain(int argc, char **argv);
int kilnBenchMain(int argc, char **argv);
int kilnRunMain(int argc, char **argv, const KilnModelPreparer &prepare);
int kilnBenchMain(int argc, char **argv, const KilnModelPreparer &prepare);

#endif // KILN_TOOLS_RUNNER_H
