// Reads a file's ELF header before dlopen, so a wrong file gets a message
// naming the problem instead of dlopen's terse "invalid ELF header".
#ifndef KILN_RUNTIME_ELF_CHECK_H
#define KILN_RUNTIME_ELF_CHECK_H

#include "kiln/runtime.h"

#include <string>

namespace kiln::rt {

// The architecture this runtime was built for ("x86_64", "aarch64", ...).
const char *hostArchName();

// Checks that `path` is an ELF shared library for this machine. On failure
// stores the message (naming the path) and returns the status.
kiln_status checkElfHeader(const std::string &path);

// The same check on the file's first `size` bytes (at most 20 are read);
// `path` only names the file in the message.
kiln_status checkElfBytes(const unsigned char *bytes, size_t size,
                          const std::string &path);

} // namespace kiln::rt

#endif // KILN_RUNTIME_ELF_CHECK_H
