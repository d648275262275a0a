//===- IndexingCommon.h - Shared by the indexing lowerings ------*- C++ -*-===//
#ifndef KILN_PASSES_LOWERING_INDEXINGCOMMON_H
#define KILN_PASSES_LOWERING_INDEXINGCOMMON_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::kiln {

/// An ONNX index (signless integer scalar; `isUnsigned` from the kiln type)
/// as an `index` into a dim of `size`: negative values count from the end,
/// then the result is clamped into [0, size - 1] so that a bad index reads
/// or writes a valid element instead of arbitrary memory.
Value normalizeIndex(OpBuilder &b, Location loc, Value index, bool isUnsigned,
                     int64_t size);

/// Scatters and TopK (IndexingScatter.cpp).
void populateKilnScatterToLinalgPatterns(RewritePatternSet &patterns,
                                         TypeConverter &typeConverter);
/// ONNX Resize's attributes, as the tap computations read them.
struct ResizeTapParams {
  StringRef mode, transform, nearestMode;
  double cubicA;
  bool excludeOutside;
};

/// One resized dim as the artifact sees it when it runs: its scale and roi
/// bounds (f64; from kiln.resize's `params` or its attributes) and the
/// input and output extents (index; constants or run-time values).
struct RunTimeDim {
  Value scale, roiStart, roiEnd, in, out;
};

/// Tap tables of one dim computed when the artifact runs: `index` (i64, one
/// table per tap), `weight` (empty for nearest) and `inside`
/// (tf_crop_and_resize), each tensor<out x ...>, `out` possibly a run-time
/// extent (IndexingResizeTaps.cpp).
struct RunTimeTaps {
  SmallVector<Value> index, weight;
  Value inside;
};
RunTimeTaps buildRunTimeTaps(OpBuilder &b, Location loc,
                             const ResizeTapParams &p, const RunTimeDim &dim,
                             Type accType);

/// Resize (IndexingResize.cpp).
void populateKilnResizeToLinalgPatterns(RewritePatternSet &patterns,
                                        TypeConverter &typeConverter);

/// GridSample (IndexingGridSample.cpp).
void populateKilnGridSampleToLinalgPatterns(RewritePatternSet &patterns,
                                            TypeConverter &typeConverter);

} // namespace mlir::kiln

#endif // KILN_PASSES_LOWERING_INDEXINGCOMMON_H
