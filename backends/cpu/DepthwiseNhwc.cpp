//===- DepthwiseNhwc.cpp - depthwise_conv_2d_nhwc_hwc along the channels --===//
//
// In NHWC the channels of a pixel are contiguous, and a depthwise
// convolution never mixes channels, so a vector of `lanes` channels is
// independent of the others: per output row,
//
//   scf.forall (b, oy)                                 -> thread pool
//     scf.for c step lanes                             channel vector
//       scf.for x step pixels                          register block
//         %acc_j = vector.transfer_read out[x + j, c]  (j < pixels)
//         scf.for kh, scf.for kw:
//           %w = vector.transfer_read W[kh, kw, c]
//           %acc_j = vector.fma(in[b, oy*sh + kh*dh, (x+j)*sw + kw*dw, c],
//                               %w, %acc_j)
//         vector.transfer_write %acc_j
//
// Pixels past the row's end repeat the last one (stores of the same values);
// channels past C are masked. The batch, height and width may be run-time
// extents (an image of any size; the filter and channels are static). A zero
// tensor.pad producer is not read: the kernel reads its source, skips filter
// rows that fall into the top/bottom padding, and blocks whose taps reach into
// the left/right padding take a path with clamped reads replaced by zeros (the
// pad would cost a copy of the input, as much memory traffic as the convolution
// itself). A fill or bias init seeds the accumulators (NhwcInit.cpp); a fused
// epilogue is applied to them before the store (EpilogueTiles.cpp).
//
//===----------------------------------------------------------------------===//
#include "backends/cpu/NhwcCodegen.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::kiln;

namespace {
/// A tensor.pad of the spatial dimensions with zeros, static amounts.
struct ZeroPad {
  Value source;
  int64_t top = 0, left = 0;
};

std::optional<ZeroPad> zeroPadOf(Value input) {
  auto pad = input.getDefiningOp<tensor::PadOp>();
  if (!pad)
    return std::nullopt;
  ArrayRef<int64_t> low = pad.getStaticLow(), high = pad.getStaticHigh();
  if (llvm::any_of(low, ShapedType::isDynamic) ||
      llvm::any_of(high, ShapedType::isDynamic) || low[0] || low[3] ||
      high[0] || high[3])
    return std::nullopt;
  Value value = pad.getConstantPaddingValue();
  if (!value || !matchPattern(value, m_AnyZeroFloat()))
    return std::nullopt;
  return ZeroPad{pad.getSource(), low[1], low[2]};
}
} // namespace

bool mlir::kiln::isVectorizableDepthwise(
    linalg::DepthwiseConv2DNhwcHwcOp conv) {
  return hasNhwcKernelOperands(conv);
}

LogicalResult mlir::kiln::tileDepthwiseNhwc(
    RewriterBase &rewriter, linalg::DepthwiseConv2DNhwcHwcOp conv,
    int64_t lanes, int64_t pixels, const Epilogue *epilogue) {
  if (!isVectorizableDepthwise(conv))
    return failure();
  Value input = conv.getInputs()[0], filter = conv.getInputs()[1];
  Value init = conv.getOutputs()[0];
  // Zero padding is read from the unpadded source with border checks.
  std::optional<ZeroPad> pad = zeroPadOf(input);
  if (pad)
    input = pad->source;
  ArrayRef<int64_t> fs = cast<RankedTensorType>(filter.getType()).getShape();
  auto outType = cast<RankedTensorType>(init.getType());
  SmallVector<int64_t> strides(conv.getStrides().getValues<int64_t>());
  SmallVector<int64_t> dilations(conv.getDilations().getValues<int64_t>());
  int64_t kh = fs[0], kw = fs[1], channels = fs[2];
  if (!outType.isDynamicDim(2))
    pixels = std::min(pixels, outType.getDimSize(2));
  bool fullLanes = channels % lanes == 0;

  Location loc = conv.getLoc();
  rewriter.setInsertionPoint(conv);
  // A fill or bias init: the accumulators start from its values instead.
  std::optional<SeededInit> seeded = seededInit(init);
  Value dest = seeded ? seeded->dest : init;
  // Batch, height and width may be known only at run time.
  auto extent = [&](Value v, int64_t d) {
    return tensor::getMixedSize(rewriter, loc, v, d);
  };
  OpFoldResult batches = extent(dest, 0), oh = extent(dest, 1),
               ow = extent(dest, 2);
  Value inHeight =
      getValueOrCreateConstantIndexOp(rewriter, loc, extent(input, 1));
  Value inWidth =
      getValueOrCreateConstantIndexOp(rewriter, loc, extent(input, 2));
  Value width = getValueOrCreateConstantIndexOp(rewriter, loc, ow);
  Type f32 = rewriter.getF32Type();
  auto vecType = VectorType::get({lanes}, f32);
  SmallVector<OpFoldResult> bounds = {batches, oh};
  auto forall = scf::ForallOp::create(rewriter, loc, bounds, ValueRange{dest},
                                      std::nullopt);
  rewriter.setInsertionPoint(forall.getTerminator());
  IndexMath im{rewriter, loc};
  Value batch = forall.getInductionVar(0), oy = forall.getInductionVar(1);
  Value shared = forall.getRegionIterArgs()[0];
  SmallVector<OpFoldResult> offsets = {batch, oy, rewriter.getIndexAttr(0),
                                       rewriter.getIndexAttr(0)};
  SmallVector<OpFoldResult> sizes = {rewriter.getIndexAttr(1),
                                     rewriter.getIndexAttr(1), ow,
                                     rewriter.getIndexAttr(channels)};
  SmallVector<OpFoldResult> unit(4, rewriter.getIndexAttr(1));
  auto rowType = RankedTensorType::get({outType.getDimSize(2), channels}, f32);
  Value row = tensor::ExtractSliceOp::create(rewriter, loc, rowType, shared,
                                             offsets, sizes, unit);
  Value c0 = im.cst(0), c1 = im.cst(1);
  Value zero = arith::ConstantOp::create(rewriter, loc, f32,
                                         rewriter.getF32FloatAttr(0));
  Value zeros = vector::BroadcastOp::create(rewriter, loc, vecType, zero);
  int64_t top = pad ? pad->top : 0, left = pad ? pad->left : 0;
  // First input row of the output row (negative inside the top padding).
  Value iy0 =
      arith::SubIOp::create(rewriter, loc, im.mul(oy, strides[0]), im.cst(top));
  Value lastPixel = arith::SubIOp::create(rewriter, loc, width, c1);
  auto inRange = [](OpBuilder &b, Location loc, Value v, Value size) {
    IndexMath im{b, loc};
    return arith::AndIOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, v, im.cst(0)),
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, v, size));
  };

  // The taps of one register block; `checked`: columns may fall into the
  // padding (clamped reads replaced by zeros).
  auto buildTaps = [&](OpBuilder &b, Location loc, Value ch, ArrayRef<Value> xs,
                       ValueRange accs, bool checked) {
    IndexMath im{b, loc};
    auto khLoop = scf::ForOp::create(
        b, loc, c0, im.cst(kh), c1, accs,
        [&](OpBuilder &b, Location loc, Value ky, ValueRange acc) {
          IndexMath im{b, loc};
          Value iy = im.add(iy0, im.mul(ky, dilations[0]));
          auto kwTaps = [&](OpBuilder &b, Location loc) {
            auto kwLoop = scf::ForOp::create(
                b, loc, c0, im.cst(kw), c1, acc,
                [&](OpBuilder &b, Location loc, Value kx, ValueRange acc) {
                  IndexMath im{b, loc};
                  Value w = vector::TransferReadOp::create(
                      b, loc, vecType, filter, ValueRange{ky, kx, ch}, zero,
                      ArrayRef<bool>{fullLanes});
                  Value dx = arith::SubIOp::create(
                      b, loc, im.mul(kx, dilations[1]), im.cst(left));
                  SmallVector<Value> next;
                  for (auto [j, x] : llvm::enumerate(xs)) {
                    Value ix = im.add(im.mul(x, strides[1]), dx);
                    Value valid;
                    if (checked) {
                      valid = inRange(b, loc, ix, inWidth);
                      ix = arith::MinSIOp::create(
                          b, loc, arith::MaxSIOp::create(b, loc, ix, im.cst(0)),
                          arith::SubIOp::create(b, loc, inWidth, im.cst(1)));
                    }
                    Value v = vector::TransferReadOp::create(
                        b, loc, vecType, input, ValueRange{batch, iy, ix, ch},
                        zero, ArrayRef<bool>{fullLanes});
                    if (checked)
                      v = arith::SelectOp::create(b, loc, valid, v, zeros);
                    next.push_back(vector::FMAOp::create(b, loc, v, w, acc[j]));
                  }
                  scf::YieldOp::create(b, loc, next);
                });
            scf::YieldOp::create(b, loc, kwLoop.getResults());
          };
          if (!pad) {
            kwTaps(b, loc);
            return;
          }
          // Filter rows in the top or bottom padding add nothing (nor do
          // any in an image of no columns, which has nothing to read).
          Value someRow = arith::AndIOp::create(
              b, loc, inRange(b, loc, iy, inHeight),
              arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, inWidth,
                                    im.cst(0)));
          auto rowTaps = scf::IfOp::create(b, loc, someRow, kwTaps,
                                           [&](OpBuilder &b, Location loc) {
                                             scf::YieldOp::create(b, loc, acc);
                                           });
          scf::YieldOp::create(b, loc, rowTaps.getResults());
        });
    return SmallVector<Value>(khLoop.getResults());
  };

  auto channelLoop = scf::ForOp::create(
      rewriter, loc, c0, im.cst(channels), im.cst(lanes), ValueRange{row},
      [&](OpBuilder &b, Location loc, Value ch, ValueRange chAcc) {
        IndexMath im{b, loc};
        auto pixelLoop = scf::ForOp::create(
            b, loc, c0, width, im.cst(pixels), chAcc,
            [&](OpBuilder &b, Location loc, Value x0, ValueRange pxAcc) {
              IndexMath im{b, loc};
              SmallVector<Value> xs, accs;
              Value seed = seeded ? seeded->seed(b, loc, vecType, ch, fullLanes)
                                  : Value();
              for (int64_t j = 0; j < pixels; ++j) {
                Value x = im.min(im.add(x0, im.cst(j)), lastPixel);
                xs.push_back(x);
                accs.push_back(seed ? seed
                                    : vector::TransferReadOp::create(
                                          b, loc, vecType, pxAcc[0],
                                          ValueRange{x, ch}, zero,
                                          ArrayRef<bool>{fullLanes})
                                          .getResult());
              }
              SmallVector<Value> sums;
              if (!pad) {
                sums = buildTaps(b, loc, ch, xs, accs, /*checked=*/false);
              } else {
                // Blocks whose taps all fall inside the image skip the
                // column checks.
                Value first = arith::SubIOp::create(
                    b, loc, im.mul(xs.front(), strides[1]), im.cst(left));
                Value last = im.add(im.mul(xs.back(), strides[1]),
                                    im.cst((kw - 1) * dilations[1] - left));
                Value interior = arith::AndIOp::create(
                    b, loc, inRange(b, loc, first, inWidth),
                    inRange(b, loc, last, inWidth));
                auto taps = scf::IfOp::create(
                    b, loc, interior,
                    [&](OpBuilder &b, Location loc) {
                      scf::YieldOp::create(
                          b, loc, buildTaps(b, loc, ch, xs, accs, false));
                    },
                    [&](OpBuilder &b, Location loc) {
                      scf::YieldOp::create(
                          b, loc, buildTaps(b, loc, ch, xs, accs, true));
                    });
                sums.append(taps.getResults().begin(), taps.getResults().end());
              }
              if (epilogue)
                for (auto [j, x] : llvm::enumerate(xs)) {
                  Value coords[] = {batch, oy, x, ch};
                  sums[j] =
                      applyEpilogue(b, loc, *epilogue, sums[j], coords, lanes);
                }
              scf::YieldOp::create(
                  b, loc, writeRows(b, loc, pxAcc[0], xs, sums, ch, fullLanes));
            });
        scf::YieldOp::create(b, loc, pixelLoop.getResults());
      });

  rewriter.setInsertionPointToStart(forall.getTerminator().getBody());
  tensor::ParallelInsertSliceOp::create(rewriter, loc, channelLoop.getResult(0),
                                        shared, offsets, sizes, unit);
  rewriter.replaceOp(conv, forall.getResults());
  if (seeded)
    seeded->eraseIfUnused(rewriter, init);
  return success();
}
