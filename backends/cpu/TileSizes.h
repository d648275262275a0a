//===- TileSizes.h - Tile sizes of contractions for a CPU ------*- C++ -*-===//
//
// The cost model behind kiln-tile-contractions: the register tile fills the
// vector registers with accumulators (two vectors per row, the rest for the
// row of B and the broadcasts). Register tiles walk the B panels of a K block
// outermost, so one KC x nr panel (32 KiB on AVX-512) stays in L1 while the
// MC rows of A stream past it from L2; MC x NC result tiles are the unit of
// work the thread pool distributes. The cache tiles were measured on a Zen 5
// (2048^3 matmul, one thread): 128/128/256 beat 64/256/64 by ~10%.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_BACKENDS_CPU_TILESIZES_H
#define KILN_BACKENDS_CPU_TILESIZES_H

#include <algorithm>
#include <cstdint>

namespace mlir::kiln {

struct ContractionTileSizes {
  int64_t mr, nr; ///< register tile (rows of A, columns of B)
  int64_t mc, nc; ///< parallel cache tile of the result
  int64_t kc;     ///< reduction block
};

/// `vectorBits`: width of one vector register (128 NEON/SSE, 256 AVX2, 512
/// AVX-512); `registers`: how many there are.
inline ContractionTileSizes contractionTileSizes(int64_t vectorBits,
                                                 int64_t registers) {
  int64_t lanes = std::max<int64_t>(vectorBits / 32, 1);
  int64_t nr = 2 * lanes;
  // Two accumulators per row; keep two registers for B and one for the
  // broadcast, at most 8 rows (more rows mean more broadcast loads per FMA
  // than the load ports take).
  int64_t mr = std::clamp<int64_t>((registers - 3) / 2, 1, 8);
  return {mr, nr, /*mc=*/128, /*nc=*/128, /*kc=*/256};
}

} // namespace mlir::kiln

#endif // KILN_BACKENDS_CPU_TILESIZES_H
