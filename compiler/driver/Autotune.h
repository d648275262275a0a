//===- Autotune.h - Timing tile sizes of hot contractions -------*- C++ -*-===//
//
// `kiln compile -O3 --autotune`, in the manner of Inductor's max-autotune:
// after the lowering stage, each hot contraction (static f32 matmul, batch
// matmul or NCHW convolution the tiled backend handles, with at least 1
// MFLOP and 1% of the model's contraction flops) is compiled alone with each
// candidate cache tiling (MC x NC result tiles, KC reduction blocks), run on
// this machine through the runtime, and the fastest choice is recorded on the
// op as `kiln.tile_sizes = array<i64: MC, NC, KC>` for kiln-tile-contractions.
// Choices are cached in a JSON file keyed by the CPU, the thread count and
// the op's signature (operation, operand types, which operands are
// constants), so recompiling a model, or another model with the same
// shapes, times nothing.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_COMPILER_DRIVER_AUTOTUNE_H
#define KILN_COMPILER_DRIVER_AUTOTUNE_H

#include "compiler/driver/Pipeline.h"
#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace mlir::kiln {

struct AutotuneOptions {
  /// The JSON cache; created if missing.
  std::string cachePath;
  /// Threads the kernels are timed with (0: one per core).
  unsigned threads = 0;
};

/// The default cache: $XDG_CACHE_HOME/kiln/autotune.json, else
/// ~/.cache/kiln/autotune.json.
std::string defaultAutotuneCachePath();

/// Annotates the hot contractions of `module` (linalg on tensors) with the
/// fastest tile sizes. Fails, with `error` naming the file or the kernel,
/// when the cache cannot be read or written or a candidate cannot be built.
LogicalResult autotuneContractions(ModuleOp module,
                                   const PipelineOptions &pipeline,
                                   const AutotuneOptions &options,
                                   std::string &error);

} // namespace mlir::kiln

#endif // KILN_COMPILER_DRIVER_AUTOTUNE_H
