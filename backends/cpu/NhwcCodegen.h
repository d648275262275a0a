//===- NhwcCodegen.h - Pieces of kiln-tile-nhwc-convolutions ----*- C++ -*-===//
//
// kiln-tile-nhwc-convolutions in two rewrites, one file each:
//   * ConvNhwc.cpp: conv_2d_nhwc_hwcf as a direct convolution (the input
//     read in place, the filter prepacked into nr-lane panels) in the
//     register tiles of kiln-tile-contractions;
//   * DepthwiseNhwc.cpp: depthwise_conv_2d_nhwc_hwc vectorized along the
//     channels;
//   * WinogradNhwc.cpp: 3x3 stride-1 conv_2d_nhwc_hwcf by Winograd's
//     F(2x2, 3x3) or F(4x4, 3x3), around a batch matmul;
//   * NhwcInit.cpp: accumulators seeded from a fill or bias init.
// Both kernels apply a matched epilogue (EpilogueTiles.cpp) to their row
// vectors before the final store.
// Both build their loop nests on tensors (scf.forall over thread-pool tiles,
// scf.for inside) with vector transfers and FMAs.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_BACKENDS_CPU_NHWCCODEGEN_H
#define KILN_BACKENDS_CPU_NHWCCODEGEN_H

#include "backends/cpu/ContractionCodegen.h"
#include "backends/cpu/TileSizes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::kiln {

/// An init the kernels start their accumulators from without reading it
/// (NhwcInit.cpp): a linalg.fill (its value in every lane) or a
/// linalg.broadcast of a per-channel vector (a bias) along batch, rows and
/// columns (its lanes at the channel offset). The kernels write into `dest`,
/// the tensor filled, so the fill or broadcast goes away.
struct SeededInit {
  Value fillValue;  ///< set for a fill
  Value perChannel; ///< set for a broadcast: tensor<C>
  Value dest;
  /// The accumulator of `type` for channels from `channel` on.
  Value seed(OpBuilder &b, Location loc, VectorType type, Value channel,
             bool inBounds) const;
  /// Erases the fill or broadcast producing `init` once nothing reads it.
  void eraseIfUnused(RewriterBase &rewriter, Value init) const;
};
std::optional<SeededInit> seededInit(Value init);

/// Writes `vectors[i]` into the 2-D tensor `dest` at (`rows[i]`, `col`), in
/// order (a repeated row is written again with the same values); returns
/// the updated tensor.
inline Value writeRows(OpBuilder &b, Location loc, Value dest,
                       ArrayRef<Value> rows, ValueRange vectors, Value col,
                       bool inBounds) {
  for (auto [row, v] : llvm::zip_equal(rows, vectors))
    dest = vector::TransferWriteOp::create(
               b, loc, v, dest, ValueRange{row, col}, ArrayRef<bool>{inBounds})
               .getResult();
  return dest;
}

/// Index arithmetic at one insertion point (arith ops on `index`).
struct IndexMath {
  OpBuilder &b;
  Location loc;
  Value cst(int64_t v) const {
    return arith::ConstantIndexOp::create(b, loc, v);
  }
  Value add(Value x, Value y) const {
    return arith::AddIOp::create(b, loc, x, y);
  }
  Value mul(Value x, int64_t c) const {
    return arith::MulIOp::create(b, loc, x, cst(c));
  }
  Value min(Value x, Value y) const {
    return arith::MinUIOp::create(b, loc, x, y);
  }
  Value div(Value x, int64_t c) const {
    return arith::DivUIOp::create(b, loc, x, cst(c));
  }
  Value rem(Value x, int64_t c) const {
    return arith::RemUIOp::create(b, loc, x, cst(c));
  }
};

/// True when the kernels below take `op` (the checks they start with).
bool isTileableNhwcConvolution(Operation *op);

/// Whether tileNhwcConvolution takes `conv`: f32 tensors, a constant filter,
/// static channels (the batch, height and width may be run-time extents).
bool isDirectNhwcConvolution(linalg::Conv2DNhwcHwcfOp conv);

/// Rewrites an f32 conv_2d_nhwc_hwcf with a constant filter into the
/// direct-convolution loop nest. Fails (op untouched) on anything
/// isDirectNhwcConvolution refuses.
/// With `epilogue` (matched on the conv, lanes along the filters), the last
/// K block stores the consumer's values.
LogicalResult tileNhwcConvolution(RewriterBase &rewriter,
                                  linalg::Conv2DNhwcHwcfOp conv,
                                  const ContractionTileSizes &tiles,
                                  const Epilogue *epilogue = nullptr);

/// True for a static f32 3x3, stride-1, undilated conv_2d_nhwc_hwcf with a
/// constant filter: what winogradNhwcConvolution takes.
bool isWinogradConvolution(linalg::Conv2DNhwcHwcfOp conv);

/// The cost model's Winograd tile for `conv` (register tiles of `mr` rows
/// by `nr` lanes, `lanes` floats per vector): 4 (F(4x4, 3x3)), 2
/// (F(2x2, 3x3)) or 0 (the direct kernel).
int64_t winogradTileSize(linalg::Conv2DNhwcHwcfOp conv, int64_t mr, int64_t nr,
                         int64_t lanes);

/// Rewrites a Winograd convolution (see isWinogradConvolution) with F(m x m,
/// 3 x 3), m = 2 or 4 (WinogradNhwc.cpp): the filter transformed at compile
/// time, an input-transform loop, a linalg.batch_matmul over the alpha^2
/// points (tiled later by kiln-tile-contractions) and an output-transform
/// loop that seeds from a fill or bias init and applies `epilogue`. `lanes`
/// floats per vector. Fails (op untouched) on anything else.
LogicalResult winogradNhwcConvolution(RewriterBase &rewriter,
                                      linalg::Conv2DNhwcHwcfOp conv, int64_t m,
                                      int64_t lanes,
                                      const Epilogue *epilogue = nullptr);

/// True for the int8 NHWC convolution generic of kiln.conv with
/// input_zero_point (kInt8ConvAttr): uint8 input with channels a multiple of
/// 4, constant int8 filter, static shapes.
bool isInt8NhwcConvolution(Operation *op);

/// The same direct convolution for that generic on VNNI (AVX-512): the
/// filter packed into k-quads, vpdpbusd into i32 sums added to the f32
/// accumulator after each K block. Fails (op untouched) on anything else.
LogicalResult tileInt8NhwcConvolution(RewriterBase &rewriter,
                                      linalg::GenericOp conv,
                                      const ContractionTileSizes &tiles,
                                      const Epilogue *epilogue = nullptr);

/// Whether tileDepthwiseNhwc takes `conv`: f32 tensors, a static filter and
/// channel count (the batch, height and width may be run-time extents).
bool isVectorizableDepthwise(linalg::DepthwiseConv2DNhwcHwcOp conv);

/// Rewrites an f32 depthwise_conv_2d_nhwc_hwc into rows of `lanes`-wide
/// channel vectors, `pixels` output pixels per register block. Fails (op
/// untouched) on anything isVectorizableDepthwise refuses. With `epilogue`
/// (lanes along the channels), the stores hold the consumer's values.
LogicalResult tileDepthwiseNhwc(RewriterBase &rewriter,
                                linalg::DepthwiseConv2DNhwcHwcOp conv,
                                int64_t lanes, int64_t pixels,
                                const Epilogue *epilogue = nullptr);

} // namespace mlir::kiln

#endif // KILN_BACKENDS_CPU_NHWCCODEGEN_H
