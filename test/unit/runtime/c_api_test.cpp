// The C API from a C translation unit (c_api_smoke.c).
#include <catch.hpp>

#include "test_support.h"

#include <cstddef>

extern "C" int kiln_test_run_add_one_from_c(const char *path, char *error,
                                            size_t error_size);

TEST_CASE("the C API works from C", "[session]") {
  char error[512] = "";
  std::string path = kiln::test::fixturePath("add_one");
  CHECK(kiln_test_run_add_one_from_c(path.c_str(), error, sizeof error) == 0);
  CHECK(std::string(error).empty());
}
