// Zeroed heap memory aligned to KILN_ALIGNMENT, for tensors and arenas.
#ifndef KILN_RUNTIME_ALIGNED_BUFFER_H
#define KILN_RUNTIME_ALIGNED_BUFFER_H

#include <cstddef>

namespace kiln::rt {

// Returns zeroed memory of at least `bytes` bytes (never null for 0 bytes, so
// generated code always gets a valid aligned pointer), or null when out of
// memory. Release with freeAligned.
void *allocateAligned(size_t bytes);
void freeAligned(void *data);

} // namespace kiln::rt

#endif // KILN_RUNTIME_ALIGNED_BUFFER_H
