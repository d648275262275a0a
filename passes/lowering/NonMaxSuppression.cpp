//===- NonMaxSuppression.cpp - kiln.non_max_suppression -> scf loops ------===//
//
// ONNX NonMaxSuppression is greedy and sequential, so it lowers to scf
// loops over a row buffer sized for the most rows the run can keep
// (batch * classes * min(boxes, max_output_boxes_per_class)), then copies
// the rows kept into the result, whose extent is their count:
//
//   for b, c:                                 (rows of this class start at
//     prev = none                              `first`)
//     repeat up to `boxes` times, while kept < max and a box is left:
//       best = the box after `prev` in (score desc, index asc) order with
//              score > score_threshold (when given)
//       keep best unless IoU(best, rows[first..count)) > iou_threshold
//       prev = best
//   result = rows[0 .. count)
//
// Finding the next box by scanning for the best one ordered after the
// previous needs no sort and no scratch: O(boxes^2) per class.
//
//===----------------------------------------------------------------------===//
#include "passes/lowering/LoweringUtils.h"
#include "passes/lowering/Patterns.h"
#include "passes/lowering/ScalarOps.h"

#include "dialects/kiln/KilnOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::kiln;

namespace {

/// Whether box `i` suppresses box `j` of batch `batch`: ONNX's reference,
/// where a box of no area or no overlap suppresses nothing.
Value suppresses(ScalarOps &o, Value boxes, Value batch, Value i, Value j,
                 bool centerPointBox, Value iouThreshold) {
  using P = arith::CmpFPredicate;
  auto coord = [&](Value box, int64_t k) {
    return o.at(boxes, {batch, box, o.idx(k)});
  };
  // [min, max] of each axis of a box: x from coords 1 and 3 (corners) or
  // center 0 and size 2; y from 0 and 2, or center 1 and size 3.
  auto extent = [&](Value box, bool x) -> std::pair<Value, Value> {
    if (centerPointBox) {
      Value center = coord(box, x ? 0 : 1);
      Value half = o.divf(coord(box, x ? 2 : 3),
                          arith::ConstantOp::create(
                              o.b, o.l, FloatAttr::get(center.getType(), 2)));
      return {o.subf(center, half), o.addf(center, half)};
    }
    Value a = coord(box, x ? 1 : 0), b = coord(box, x ? 3 : 2);
    Value ordered = o.cmpf(P::OGE, a, b);
    return {o.select(ordered, b, a), o.select(ordered, a, b)};
  };
  auto [x1min, x1max] = extent(i, true);
  auto [x2min, x2max] = extent(j, true);
  auto [y1min, y1max] = extent(i, false);
  auto [y2min, y2max] = extent(j, false);
  auto maxf = [&](Value a, Value b) {
    return o.select(o.cmpf(P::OGT, a, b), a, b);
  };
  auto minf = [&](Value a, Value b) {
    return o.select(o.cmpf(P::OLT, a, b), a, b);
  };
  Value ixMin = maxf(x1min, x2min), ixMax = minf(x1max, x2max);
  Value iyMin = maxf(y1min, y2min), iyMax = minf(y1max, y2max);
  Value zero =
      arith::ConstantOp::create(o.b, o.l, FloatAttr::get(ixMin.getType(), 0));
  Value inter = o.mulf(o.subf(ixMax, ixMin), o.subf(iyMax, iyMin));
  Value area1 = o.mulf(o.subf(x1max, x1min), o.subf(y1max, y1min));
  Value area2 = o.mulf(o.subf(x2max, x2min), o.subf(y2max, y2min));
  Value unionArea = o.subf(o.addf(area1, area2), inter);
  Value result =
      o.andi(o.cmpf(P::OGT, ixMax, ixMin), o.cmpf(P::OGT, iyMax, iyMin));
  result = o.andi(result, o.cmpf(P::OGT, inter, zero));
  result = o.andi(result, o.cmpf(P::OGT, area1, zero));
  result = o.andi(result, o.cmpf(P::OGT, area2, zero));
  result = o.andi(result, o.cmpf(P::OGT, unionArea, zero));
  return o.andi(result, o.cmpf(P::OGT, o.divf(inter, unionArea), iouThreshold));
}

struct NonMaxSuppressionLowering
    : OpConversionPattern<kiln::NonMaxSuppressionOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(kiln::NonMaxSuppressionOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value boxes = adaptor.getBoxes(), scores = adaptor.getScores();
    Type ft = cast<RankedTensorType>(boxes.getType()).getElementType();
    // The loops are built outside the conversion driver, as the attention
    // lowering does: scf is not among its legal dialects.
    OpBuilder b(op);
    ScalarOps o{b, loc};
    auto dim = [&](Value t, int64_t d) -> Value {
      return tensor::DimOp::create(b, loc, t, d);
    };
    auto scalar = [&](Value t, Type to) {
      Value v = tensor::ExtractOp::create(b, loc, t, ValueRange{});
      Type from = cast<RankedTensorType>(t.getType()).getElementType();
      return from == to ? v : convertScalar(b, loc, v, from, to);
    };
    Value batches = dim(boxes, 0), count = dim(boxes, 1),
          classes = dim(scores, 1);
    Value maxOut = scalar(adaptor.getMaxOutputBoxesPerClass(), b.getI64Type());
    maxOut = arith::MaxSIOp::create(b, loc, maxOut, o.i64(0));
    Value iou = scalar(adaptor.getIouThreshold(), ft);
    Value threshold = scalar(adaptor.getScoreThreshold(), ft);
    bool useThreshold = op.getUseScoreThreshold();
    bool centerPointBox = op.getCenterPointBox();

    Value perClass = arith::MinUIOp::create(b, loc, count, o.toIndex(maxOut));
    Value capacity = arith::MulIOp::create(
        b, loc, arith::MulIOp::create(b, loc, batches, classes), perClass);
    Type i64 = b.getI64Type();
    Value rows = tensor::EmptyOp::create(
        b, loc, ArrayRef<int64_t>{ShapedType::kDynamic, 3}, i64,
        ValueRange{capacity});

    using IP = arith::CmpIPredicate;
    using FP = arith::CmpFPredicate;
    Value c0 = o.idx(0), c1 = o.idx(1);
    auto batchLoop = scf::ForOp::create(
        b, loc, c0, batches, c1, ValueRange{rows, c0},
        [&](OpBuilder &bb, Location, Value batch, ValueRange bArgs) {
          auto classLoop = scf::ForOp::create(
              bb, loc, c0, classes, c1, bArgs,
              [&](OpBuilder &cb, Location, Value cls, ValueRange cArgs) {
                Value first = cArgs[1];
                ScalarOps co{cb, loc};
                Value none = co.i64(-1);
                Value noScore =
                    arith::ConstantOp::create(cb, loc, FloatAttr::get(ft, 0));
                // rows, count, kept, previous score, previous index, done.
                auto steps = scf::ForOp::create(
                    cb, loc, c0, count, c1,
                    ValueRange{cArgs[0], cArgs[1], co.i64(0), noScore, none,
                               co.flag(false)},
                    [&](OpBuilder &sb, Location, Value, ValueRange s) {
                      ScalarOps so{sb, loc};
                      Value active = so.andi(so.noti(s[5]),
                                             so.cmpi(IP::slt, s[2], maxOut));
                      auto step = scf::IfOp::create(
                          sb, loc, active,
                          [&](OpBuilder &tb, Location) {
                            ScalarOps to{tb, loc};
                            // The best box ordered after the previous one.
                            auto search = scf::ForOp::create(
                                tb, loc, c0, count, c1,
                                ValueRange{none, noScore},
                                [&](OpBuilder &fb, Location, Value i,
                                    ValueRange f) {
                                  ScalarOps fo{fb, loc};
                                  Value score = fo.at(scores, {batch, cls, i});
                                  Value index = fo.toI64(i);
                                  Value after = fo.ori(
                                      fo.cmpi(IP::slt, s[4], fo.i64(0)),
                                      fo.ori(
                                          fo.cmpf(FP::OLT, score, s[3]),
                                          fo.andi(
                                              fo.cmpf(FP::OEQ, score, s[3]),
                                              fo.cmpi(IP::sgt, index, s[4]))));
                                  if (useThreshold)
                                    after =
                                        fo.andi(after, fo.cmpf(FP::OGT, score,
                                                               threshold));
                                  Value better =
                                      fo.ori(fo.cmpi(IP::slt, f[0], fo.i64(0)),
                                             fo.cmpf(FP::OGT, score, f[1]));
                                  Value take = fo.andi(after, better);
                                  scf::YieldOp::create(
                                      fb, loc,
                                      ValueRange{fo.select(take, index, f[0]),
                                                 fo.select(take, score, f[1])});
                                });
                            Value best = search.getResult(0);
                            Value found = to.cmpi(IP::sge, best, to.i64(0));
                            auto keep = scf::IfOp::create(
                                tb, loc, found,
                                [&](OpBuilder &kb, Location) {
                                  ScalarOps ko{kb, loc};
                                  Value bestIdx = ko.toIndex(best);
                                  auto check = scf::ForOp::create(
                                      kb, loc, first, s[1], c1,
                                      ValueRange{ko.flag(false)},
                                      [&](OpBuilder &rb, Location, Value r,
                                          ValueRange a) {
                                        ScalarOps ro{rb, loc};
                                        Value other = ro.toIndex(
                                            ro.at(s[0], {r, ro.idx(2)}));
                                        Value hit = suppresses(
                                            ro, boxes, batch, bestIdx, other,
                                            centerPointBox, iou);
                                        scf::YieldOp::create(
                                            rb, loc,
                                            ValueRange{ro.ori(a[0], hit)});
                                      });
                                  Value kept = ko.noti(check.getResult(0));
                                  auto write = scf::IfOp::create(
                                      kb, loc, kept,
                                      [&](OpBuilder &wb, Location) {
                                        ScalarOps wo{wb, loc};
                                        Value t = s[0];
                                        Value row[3] = {wo.toI64(batch),
                                                        wo.toI64(cls), best};
                                        for (int64_t k = 0; k < 3; ++k)
                                          t = tensor::InsertOp::create(
                                              wb, loc, row[k], t,
                                              ValueRange{s[1], wo.idx(k)});
                                        Value next = arith::AddIOp::create(
                                            wb, loc, s[1], wo.idx(1));
                                        Value keptNext = arith::AddIOp::create(
                                            wb, loc, s[2], wo.i64(1));
                                        scf::YieldOp::create(
                                            wb, loc,
                                            ValueRange{t, next, keptNext});
                                      },
                                      [&](OpBuilder &wb, Location) {
                                        scf::YieldOp::create(
                                            wb, loc,
                                            ValueRange{s[0], s[1], s[2]});
                                      });
                                  ValueRange w = write.getResults();
                                  scf::YieldOp::create(
                                      kb, loc,
                                      ValueRange{w[0], w[1], w[2],
                                                 search.getResult(1), best,
                                                 ko.flag(false)});
                                },
                                [&](OpBuilder &kb, Location) {
                                  ScalarOps ko{kb, loc};
                                  scf::YieldOp::create(
                                      kb, loc,
                                      ValueRange{s[0], s[1], s[2], s[3], s[4],
                                                 ko.flag(true)});
                                });
                            scf::YieldOp::create(tb, loc, keep.getResults());
                          },
                          [&](OpBuilder &tb, Location) {
                            scf::YieldOp::create(tb, loc, s);
                          });
                      scf::YieldOp::create(sb, loc, step.getResults());
                    });
                scf::YieldOp::create(
                    cb, loc,
                    ValueRange{steps.getResult(0), steps.getResult(1)});
              });
          scf::YieldOp::create(bb, loc, classLoop.getResults());
        });
    Value filled = batchLoop.getResult(0), kept = batchLoop.getResult(1);
    auto resultType = cast<RankedTensorType>(op.getType());
    Value result = createParallelGeneric(
        b, loc, resultType, {}, ValueRange{kept},
        [&](OpBuilder &gb, Location l, ValueRange) -> Value {
          Value r = linalg::IndexOp::create(gb, l, 0);
          Value k = linalg::IndexOp::create(gb, l, 1);
          return tensor::ExtractOp::create(gb, l, filled, ValueRange{r, k});
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void mlir::kiln::populateKilnNonMaxSuppressionToLinalgPatterns(
    RewritePatternSet &patterns, TypeConverter &typeConverter) {
  patterns.add<NonMaxSuppressionLowering>(typeConverter, patterns.getContext());
}
