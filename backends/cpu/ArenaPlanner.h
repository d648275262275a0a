//===- ArenaPlanner.h - Offsets for buffers with live ranges ----*- C++ -*-===//
//
// The placement half of kiln-plan-arena, kept free of IR so it can be tested
// and reused (e.g. by a GPU backend) on plain numbers.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_BACKENDS_CPU_ARENAPLANNER_H
#define KILN_BACKENDS_CPU_ARENAPLANNER_H

#include <cstdint>
#include <vector>

namespace mlir::kiln {

/// A buffer of `size` bytes live in the closed program interval
/// [`firstUse`, `lastUse`].
struct ArenaBuffer {
  uint64_t size = 0;
  int64_t firstUse = 0;
  int64_t lastUse = 0;
};

struct ArenaPlan {
  std::vector<uint64_t> offsets; ///< One per buffer, in input order.
  uint64_t size = 0;             ///< Bytes needed, a multiple of alignment.
};

/// Places buffers so that two buffers with overlapping live intervals never
/// overlap in memory. First fit, largest buffer first (ties: earlier first
/// use, then input order), every offset a multiple of `alignment` (a power of
/// two). Deterministic for a given input.
ArenaPlan planArena(const std::vector<ArenaBuffer> &buffers,
                    uint64_t alignment = 64);

} // namespace mlir::kiln

#endif // KILN_BACKENDS_CPU_ARENAPLANNER_H
