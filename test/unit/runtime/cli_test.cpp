// The kiln-run executable's exit codes, as a shell sees them.
#include <catch.hpp>

#include "test_support.h"

#include <cstdlib>
#include <sys/wait.h>

namespace {
int exitCodeOf(const std::string &arguments) {
  std::string command =
      std::string(KILN_RUN_EXE) + " " + arguments + " >/dev/null 2>&1";
  int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}
} // namespace

TEST_CASE("kiln-run exit codes", "[cli]") {
  std::string model = kiln::test::fixturePath("add_one");
  CHECK(exitCodeOf(model + " --random-inputs") == 0);
  CHECK(exitCodeOf("bench " + model + " --repeat 3 --warmup 0") == 0);
  CHECK(exitCodeOf(kiln::test::fixturePath("no_symbol") + " --random-inputs") ==
        1);
  CHECK(exitCodeOf(model) == 1); // no inputs given
  CHECK(exitCodeOf(model + " --frobnicate") == 2);
  CHECK(exitCodeOf("") == 2);
  CHECK(exitCodeOf("--help") == 0);
  CHECK(exitCodeOf("bench --help") == 0);
}
