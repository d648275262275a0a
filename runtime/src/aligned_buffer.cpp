#include "aligned_buffer.h"

#include "kiln/abi.h"

#include <cstdlib>
#include <cstring>

namespace kiln::rt {

void *allocateAligned(size_t bytes) {
  // aligned_alloc wants a multiple of the alignment; round up, guarding
  // against wrap-around for absurd sizes.
  constexpr size_t align = KILN_ALIGNMENT;
  if (bytes > SIZE_MAX - align)
    return nullptr;
  size_t rounded = bytes == 0 ? align : (bytes + align - 1) / align * align;
  void *data = std::aligned_alloc(align, rounded);
  if (data)
    std::memset(data, 0, rounded);
  return data;
}

void freeAligned(void *data) { std::free(data); }

} // namespace kiln::rt
