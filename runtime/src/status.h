// Failure reporting for the C API: every failing call stores a message for
// kiln_last_error() on the calling thread and returns its status code.
#ifndef KILN_RUNTIME_STATUS_H
#define KILN_RUNTIME_STATUS_H

#include "kiln/runtime.h"

#include <string>

namespace kiln::rt {

// Stores `message` as this thread's last error and returns `status`, so call
// sites read `return fail(KILN_ERROR_IO, "...")`.
kiln_status fail(kiln_status status, std::string message);

// Quotes a user-visible value: 'value'.
std::string quoted(const std::string &value);

// Formats a shape the way every message prints it: [1,3,224,224].
std::string shapeString(const int64_t *shape, int32_t rank);

} // namespace kiln::rt

#endif // KILN_RUNTIME_STATUS_H
