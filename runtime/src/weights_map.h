// The model's weights, mapped read-only from the artifact's
// KILN_WEIGHTS_SECTION (abi.h, ABI 6).
#ifndef KILN_RUNTIME_WEIGHTS_MAP_H
#define KILN_RUNTIME_WEIGHTS_MAP_H

#include "kiln/runtime.h"

#include <cstddef>
#include <string>

namespace kiln::rt {

// One read-only, private mapping of the file; every session of the model
// reads it, so the weights are in memory once however many sessions run.
class MappedWeights {
public:
  MappedWeights() = default;
  ~MappedWeights();
  MappedWeights(const MappedWeights &) = delete;
  MappedWeights &operator=(const MappedWeights &) = delete;

  // NULL until mapped (and for a model without weights).
  const void *data() const { return data_; }

  // Finds KILN_WEIGHTS_SECTION in the ELF file at `path`, checks that it
  // holds `size` bytes at a KILN_ALIGNMENT-aligned offset inside the file,
  // and maps it. On failure stores a message naming `path` and returns the
  // status.
  kiln_status map(const std::string &path, uint64_t size);

private:
  void *mapping_ = nullptr;
  size_t length_ = 0;
  const void *data_ = nullptr;
};

} // namespace kiln::rt

#endif // KILN_RUNTIME_WEIGHTS_MAP_H
