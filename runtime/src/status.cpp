#include "status.h"

namespace kiln::rt {
namespace {
// Thread-local so concurrent sessions never read each other's failures.
thread_local std::string lastError;
} // namespace

kiln_status fail(kiln_status status, std::string message) {
  lastError = std::move(message);
  return status;
}

std::string quoted(const std::string &value) { return "'" + value + "'"; }

std::string shapeString(const int64_t *shape, int32_t rank) {
  std::string text = "[";
  for (int32_t i = 0; i < rank; ++i) {
    if (i)
      text += ",";
    text += std::to_string(shape[i]);
  }
  return text + "]";
}

} // namespace kiln::rt

extern "C" const char *kiln_last_error(void) {
  return kiln::rt::lastError.c_str();
}
