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
// channels past C are masked.
//
//===----------------------------------------------------------------------===//
#include "backends/cpu/NhwcCodegen.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::kiln;

LogicalResult
mlir::kiln::tileDepthwiseNhwc(RewriterBase &rewriter,
                              linalg::DepthwiseConv2DNhwcHwcOp conv,
                              int64_t lanes, int64_t pixels) {
  if (!conv.hasPureTensorSemantics() || !hasStaticF32Operands(conv))
    return failure();
  Value input = conv.getInputs()[0], filter = conv.getInputs()[1];
  Value init = conv.getOutputs()[0];
  ArrayRef<int64_t> fs = cast<RankedTensorType>(filter.getType()).getShape();
  auto outType = cast<RankedTensorType>(init.getType());
  ArrayRef<int64_t> out = outType.getShape();
  SmallVector<int64_t> strides(conv.getStrides().getValues<int64_t>());
  SmallVector<int64_t> dilations(conv.getDilations().getValues<int64_t>());
  int64_t kh = fs[0], kw = fs[1], channels = fs[2];
  int64_t oh = out[1], ow = out[2];
  pixels = std::min(pixels, ow);
  bool fullLanes = channels % lanes == 0;

  Location loc = conv.getLoc();
  rewriter.setInsertionPoint(conv);
  Type f32 = rewriter.getF32Type();
  auto vecType = VectorType::get({lanes}, f32);
  SmallVector<OpFoldResult> bounds = {rewriter.getIndexAttr(out[0]),
                                      rewriter.getIndexAttr(oh)};
  // A filled init: the accumulators start from the fill value instead.
  std::optional<FilledInit> filled = filledInit(init);
  auto forall = scf::ForallOp::create(rewriter, loc, bounds,
                                      ValueRange{filled ? filled->dest : init},
                                      std::nullopt);
  rewriter.setInsertionPoint(forall.getTerminator());
  IndexMath im{rewriter, loc};
  Value batch = forall.getInductionVar(0), oy = forall.getInductionVar(1);
  Value shared = forall.getRegionIterArgs()[0];
  SmallVector<OpFoldResult> offsets = {batch, oy, rewriter.getIndexAttr(0),
                                       rewriter.getIndexAttr(0)};
  SmallVector<OpFoldResult> sizes = {
      rewriter.getIndexAttr(1), rewriter.getIndexAttr(1),
      rewriter.getIndexAttr(ow), rewriter.getIndexAttr(channels)};
  SmallVector<OpFoldResult> unit(4, rewriter.getIndexAttr(1));
  auto rowType = RankedTensorType::get({ow, channels}, f32);
  Value row = tensor::ExtractSliceOp::create(rewriter, loc, rowType, shared,
                                             offsets, sizes, unit);
  Value c0 = im.cst(0), c1 = im.cst(1);
  Value zero = arith::ConstantOp::create(rewriter, loc, f32,
                                         rewriter.getF32FloatAttr(0));
  Value iy0 = im.mul(oy, strides[0]);
  Value lastPixel = im.cst(ow - 1);

  auto channelLoop = scf::ForOp::create(
      rewriter, loc, c0, im.cst(channels), im.cst(lanes), ValueRange{row},
      [&](OpBuilder &b, Location loc, Value ch, ValueRange chAcc) {
        IndexMath im{b, loc};
        auto pixelLoop = scf::ForOp::create(
            b, loc, c0, im.cst(ow), im.cst(pixels), chAcc,
            [&](OpBuilder &b, Location loc, Value x0, ValueRange pxAcc) {
              IndexMath im{b, loc};
              SmallVector<Value> xs, accs;
              for (int64_t j = 0; j < pixels; ++j) {
                Value x = im.min(im.add(x0, im.cst(j)), lastPixel);
                xs.push_back(x);
                accs.push_back(
                    filled ? vector::BroadcastOp::create(b, loc, vecType,
                                                         filled->value)
                                 .getResult()
                           : vector::TransferReadOp::create(
                                 b, loc, vecType, pxAcc[0], ValueRange{x, ch},
                                 zero, ArrayRef<bool>{fullLanes})
                                 .getResult());
              }
              auto khLoop = scf::ForOp::create(
                  b, loc, c0, im.cst(kh), c1, accs,
                  [&](OpBuilder &b, Location loc, Value ky, ValueRange acc) {
                    IndexMath im{b, loc};
                    Value iy = im.add(iy0, im.mul(ky, dilations[0]));
                    auto kwLoop = scf::ForOp::create(
                        b, loc, c0, im.cst(kw), c1, acc,
                        [&](OpBuilder &b, Location loc, Value kx,
                            ValueRange acc) {
                          IndexMath im{b, loc};
                          Value w = vector::TransferReadOp::create(
                              b, loc, vecType, filter, ValueRange{ky, kx, ch},
                              zero, ArrayRef<bool>{fullLanes});
                          Value dx = im.mul(kx, dilations[1]);
                          SmallVector<Value> next;
                          for (int64_t j = 0; j < pixels; ++j) {
                            Value ix = im.add(im.mul(xs[j], strides[1]), dx);
                            Value v = vector::TransferReadOp::create(
                                b, loc, vecType, input,
                                ValueRange{batch, iy, ix, ch}, zero,
                                ArrayRef<bool>{fullLanes});
                            next.push_back(
                                vector::FMAOp::create(b, loc, v, w, acc[j]));
                          }
                          scf::YieldOp::create(b, loc, next);
                        });
                    scf::YieldOp::create(b, loc, kwLoop.getResults());
                  });
              Value result = pxAcc[0];
              for (auto [x, c] : llvm::zip_equal(xs, khLoop.getResults()))
                result = vector::TransferWriteOp::create(
                             b, loc, c, result, ValueRange{x, ch},
                             ArrayRef<bool>{fullLanes})
                             .getResult();
              scf::YieldOp::create(b, loc, result);
            });
        scf::YieldOp::create(b, loc, pixelLoop.getResults());
      });

  rewriter.setInsertionPointToStart(forall.getTerminator().getBody());
  tensor::ParallelInsertSliceOp::create(rewriter, loc, channelLoop.getResult(0),
                                        shared, offsets, sizes, unit);
  rewriter.replaceOp(conv, forall.getResults());
  return success();
}
