// The `run` and `bench` commands, shared by the standalone kiln-run tool and
// the compiler's `kiln run` / `kiln bench` subcommands.
//
// argv[0] names the command in usage text (e.g. "kiln run" or "kiln-run");
// argv[1] is the artifact (MODEL.so), followed by options (see --help).
// Return value is the process exit code: 0 success, 1 failure (including an
// --expect mismatch), 2 usage error.
#ifndef KILN_TOOLS_RUNNER_H
#define KILN_TOOLS_RUNNER_H

int kilnRunMain(int argc, char **argv);
int kilnBenchMain(int argc, char **argv);

#endif // KILN_TOOLS_RUNNER_H
