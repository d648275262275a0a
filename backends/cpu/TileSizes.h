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

/// K block of a direct NHWC convolution (kiln-tile-nhwc-convolutions). Its
/// A rows are read in place and a task walks at most nc / nr panels, so the
/// filter block a task reuses across its pixel tiles is (nc / nr) x KC x nr
/// floats: 512 KiB at 1024, half the L2 of the Zen 4 this was measured on,
/// where 1024 beat 256 (ResNet-18 17.4 -> 17.2 ms, GoogLeNet 15.4 -> 15.1
/// ms, MobileNetV2 equal; 512 in between): fewer passes over each task's
/// output, longer runs of input per register-tile row.
inline int64_t nhwcConvolutionTileK(const ContractionTileSizes &tiles) {
  int64_t budget = 512 * 1024 / 4; // floats
  return std::clamp<int64_t>(budget / tiles.nc, tiles.kc, 1024);
}

} // namespace mlir::kiln

#endif // KILN_BACKENDS_CPU_TILESIZES_H
