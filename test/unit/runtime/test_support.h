// Shared helpers for the runtime tests: fixture and scratch paths, files,
// and running a command entry point with captured output.
#ifndef KILN_TEST_RUNTIME_TEST_SUPPORT_H
#define KILN_TEST_RUNTIME_TEST_SUPPORT_H

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace kiln::test {

// Path of a fake artifact built from fixtures/<name>.c.
std::string fixturePath(const std::string &name);

// A path in the tests' scratch directory (created on first use).
std::string scratchPath(const std::string &name);

void writeBytes(const std::string &path, const std::vector<uint8_t> &bytes);
void writeText(const std::string &path, const std::string &text);
std::vector<uint8_t> readBytes(const std::string &path);

struct CommandResult {
  int exitCode;
  std::string out, err;
};

// Calls main(argc, argv) with argv built from `args` (args[0] is the command
// name), capturing what it prints on stdout and stderr.
CommandResult runCommand(int (*main)(int, char **),
                         const std::vector<std::string> &args);

// Points the runtime at the fake CUDA driver (fixtures/fake_cuda.c, loaded
// once per process) and starts a new log, whose path it returns;
// `settings` are the fake's behaviour switches (environment variables).
std::string useFakeDriver(
    const std::vector<std::pair<const char *, const char *>> &settings = {});

// The text of the fake driver's log.
std::string readLog(const std::string &path);

} // namespace kiln::test

#endif // KILN_TEST_RUNTIME_TEST_SUPPORT_H
