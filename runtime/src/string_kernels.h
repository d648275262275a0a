// The string kernels the runtime hands to generated code
// (kiln_runtime_callbacks in abi.h), and output string ownership.
#ifndef KILN_RUNTIME_STRING_KERNELS_H
#define KILN_RUNTIME_STRING_KERNELS_H

#include "kiln/abi.h"

namespace kiln::rt {

// session.cpp: the alloc and fail callbacks (context is the session).
void *scratchAlloc(void *context, uint64_t bytes);
void checkFailed(void *context, const char *message);

void stringsFromNumbers(void *context, int32_t dtype, const void *src,
                        const char **dst, int64_t n);
int32_t stringsToNumbers(void *context, int32_t dtype, const char *const *src,
                         void *dst, int64_t n, const char *what);
int64_t normalizeStrings(void *context, const char *const *src, int64_t n,
                         const char **dst, int32_t caseAction,
                         int32_t caseSensitive, const char *stopwords,
                         int64_t numStopwords);

} // namespace kiln::rt

#endif // KILN_RUNTIME_STRING_KERNELS_H
