// Per-session memory for buffers whose size a run computes: a bump allocator
// over a few aligned chunks, reset at the start of each run. After a run
// that needed several chunks, the next reset keeps one chunk as large as
// all of them, so a model's steady state is a single chunk and no system
// allocation per run.
#ifndef KILN_RUNTIME_SCRATCH_H
#define KILN_RUNTIME_SCRATCH_H

#include <cstddef>
#include <cstdint>
#include <vector>

namespace kiln::rt {

// The bytes a scratch request for `bytes` takes: rounded up to
// KILN_ALIGNMENT, at least one unit; 0 for a size that is a corrupt value,
// not a tensor (past 2^48 bytes).
uint64_t scratchRequestSize(uint64_t bytes);

class Scratch {
public:
  Scratch() = default;
  Scratch(const Scratch &) = delete;
  Scratch &operator=(const Scratch &) = delete;
  ~Scratch();

  // `bytes` aligned to KILN_ALIGNMENT; nullptr if the system has no memory.
  void *allocate(uint64_t bytes);
  // Every earlier allocation becomes invalid.
  void reset();
  // Bytes held in chunks (for tests).
  size_t capacity() const;

private:
  struct Chunk {
    unsigned char *data;
    size_t size;
  };
  std::vector<Chunk> chunks;
  size_t used = 0; // in chunks.back()
};

} // namespace kiln::rt

#endif // KILN_RUNTIME_SCRATCH_H
