//===- ImportSTFT.cpp - STFT as framing and a DFT -------------------------===//
//
// STFT frames the signal [batch, length, 1 or 2] with a gather (frame f
// reads samples f * frame_step + [0, frame_length)), weights each frame by
// the window, and runs buildDFT along the frame: [batch, frames, bins, 2].
// A real signal [batch, length] (torch.onnx's export of torch.stft) is
// [batch, length, 1]. A run-time frame_step reaches the gather indices; the
// frame count and a run-time frame_length then come from the result shape
// the model declares, checked when the model runs. A signal of run-time
// batch or length (constant frame_step and frame_length) gets its frame
// count from the run and its frame starts from a run-time range.
//
//===----------------------------------------------------------------------===//

#include "compiler/import/onnx/ImportIndexing.h"
#include "compiler/import/onnx/ImportNNBuilder.h"
#include "compiler/import/onnx/SymbolicShapes.h"

#include "onnx/onnx.pb.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::onnx_import;

namespace {
/// Input `i` as a rank-0 i64 tensor when it holds one integer, else null.
Value scalarI64(NodeContext &c, NNBuilder &e, size_t i) {
  if (!c.hasInput(i) || c.type(c.input(i)).getNumElements() != 1 ||
      !isa<IntegerType>(c.type(c.input(i)).getElementType()))
    return Value();
  return e.scalarOf(c.input(i), c.b.getI64Type());
}

/// STFT of a signal whose batch or length is known only at run time, with a
/// constant frame_step and frame_length (or window): the frame count
/// 1 + (length - frame_length) / step comes from the run, the frame starts
/// from a run-time range.
Results importRunTimeSTFT(NodeContext &c, Value x) {
  auto type = c.type(x);
  Type et = type.getElementType(), i64 = c.b.getI64Type();
  int64_t channels = type.getDimSize(2);
  bool onesided = c.attrInt("onesided", 1) != 0;
  auto step = c.constantInts(1);
  if (!step || step->size() != 1 || (*step)[0] < 1)
    return c.unsupported("STFT over a run-time signal needs a constant, "
                         "positive frame_step");
  Value window = c.hasInput(2) ? c.input(2) : Value();
  std::optional<int64_t> fl;
  if (window) {
    if (c.type(window).getRank() != 1 || !c.type(window).hasStaticShape())
      return c.fail("window must be 1-D");
    fl = c.type(window).getDimSize(0);
  }
  if (c.hasInput(3)) {
    auto l = c.constantInts(3);
    if (!l || l->size() != 1)
      return c.unsupported("STFT over a run-time signal needs a constant "
                           "frame_length");
    if (fl && *fl != (*l)[0])
      return c.fail("frame_length differs from the window's length");
    fl = (*l)[0];
  }
  if (!fl)
    return c.unsupported("STFT over a run-time signal needs a frame_length "
                         "or a window");
  if (*fl < 1)
    return c.fail(fmt::format("frame_length {} is not positive", *fl));
  // buildDFT refuses more than 2^26 twiddle entries; a hostile frame_length
  // must not get a frame iota of that size first.
  int64_t bins = onesided ? *fl / 2 + 1 : *fl;
  if (*fl > kMaxDFTTwiddles / bins)
    return c.fail(fmt::format("a frame of {} samples into {} bins needs "
                              "twiddle matrices of more than 2^26 entries",
                              *fl, bins));
  NNBuilder e(c);
  OpBuilder &b = c.b;
  Location loc = c.loc;
  auto constant = [&](int64_t v) -> Value {
    return arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(v));
  };
  SymInt lengthSym = dimOf(c, x, 1);
  Value length = constantOf(lengthSym) ? constant(*constantOf(lengthSym))
                                       : cast<Value>(lengthSym);
  Value enough = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge,
                                       length, constant(*fl));
  AssertOp::create(
      b, loc,
      tensor::FromElementsOp::create(
          b, loc, RankedTensorType::get({}, b.getI1Type()), ValueRange{enough}),
      b.getStringAttr(
          fmt::format("STFT: the signal is shorter than one frame of {} "
                      "samples",
                      *fl)));
  Value frames = arith::AddIOp::create(
      b, loc,
      arith::DivSIOp::create(
          b, loc, arith::SubIOp::create(b, loc, length, constant(*fl)),
          constant((*step)[0])),
      constant(1));
  auto scalarTensor = [&](Value v) -> Value {
    return tensor::FromElementsOp::create(
        b, loc, RankedTensorType::get({}, i64), ValueRange{v});
  };
  // Frame starts f * step as [frames, 1], plus [0, fl) as [1, fl].
  Value end = arith::MulIOp::create(b, loc, frames, constant((*step)[0]));
  FailureOr<Value> starts =
      c.make<DynamicRangeOp>({c.scalar(i64, 0.0), scalarTensor(end),
                              c.scalar(i64, (double)(*step)[0])});
  if (failed(starts))
    return failure();
  auto column = reshapeSymbolic(c, *starts, {frames, b.getI64IntegerAttr(1)},
                                /*allowZero=*/true);
  if (failed(column))
    return failure();
  Value k = i64Tensor(c, {1, *fl}, llvm::to_vector(llvm::seq<int64_t>(0, *fl)));
  auto indices = reshapeSymbolic(c, e.add(*column, k),
                                 {mulSym(c, frames, b.getI64IntegerAttr(*fl))},
                                 /*allowZero=*/true);
  if (failed(indices))
    return failure();
  Value gathered =
      e.op<GatherOp>({x, *indices}, {c.named("axis", b.getI64IntegerAttr(1))});
  if (e.failed)
    return failure();
  auto framed =
      reshapeSymbolic(c, gathered,
                      {dimOf(c, x, 0), frames, b.getI64IntegerAttr(*fl),
                       b.getI64IntegerAttr(channels)},
                      /*allowZero=*/true);
  if (failed(framed))
    return failure();
  Value weighted = *framed;
  if (window)
    weighted = e.mul(weighted, e.reshape(e.cast(window, et), {1, 1, *fl, 1}));
  if (e.failed)
    return failure();
  return one(buildDFT(c, weighted, 2, *fl, onesided, /*inverse=*/false));
}

} // namespace

Results mlir::kiln::onnx_import::importSTFT(NodeContext &c) {
  Value x = c.input(0);
  if (!x)
    return c.fail("needs a signal");
  auto type = c.type(x);
  Type et = type.getElementType();
  // A real signal [batch, length] (as torch.onnx exports torch.stft, and
  // onnxruntime takes) is [batch, length, 1].
  if (type.getRank() == 2 && isa<FloatType>(et)) {
    FailureOr<Value> real =
        type.hasStaticShape()
            ? c.make<ReshapeOp>(
                  x, {c.named("shape", c.i64s({type.getDimSize(0),
                                               type.getDimSize(1), 1}))})
            : reshapeSymbolic(
                  c, x,
                  {dimOf(c, x, 0), dimOf(c, x, 1), c.b.getI64IntegerAttr(1)},
                  /*allowZero=*/true);
    if (failed(real))
      return failure();
    x = *real;
    type = c.type(x);
  }
  if (type.getRank() != 3 || !isa<FloatType>(et) ||
      (type.getDimSize(2) != 1 && type.getDimSize(2) != 2))
    return c.fail("signal must be floats [batch, length, 1 or 2] (or "
                  "[batch, length], real)");
  bool onesided = c.attrInt("onesided", 1) != 0;
  if (onesided && type.getDimSize(2) == 2)
    return c.fail("onesided needs a real signal");
  if (!type.hasStaticShape())
    return importRunTimeSTFT(c, x);
  int64_t batch = type.getDimSize(0), length = type.getDimSize(1);
  auto declared = c.declaredShape(0);
  if (declared && declared->size() != 4)
    declared.reset();
  NNBuilder e(c);

  // frame_length: a constant, the window's length, or the declared bins.
  std::optional<int64_t> frameLength;
  Value window = c.hasInput(2) ? c.input(2) : Value();
  if (window) {
    if (c.type(window).getRank() != 1 || !c.type(window).hasStaticShape())
      return c.fail("window must be 1-D");
    frameLength = c.type(window).getDimSize(0);
  }
  if (c.hasInput(3)) {
    auto l = c.shapeInput(3, [&]() -> std::optional<SmallVector<int64_t>> {
      if (frameLength)
        return SmallVector<int64_t>{*frameLength};
      if (!declared)
        return std::nullopt;
      int64_t bins = (*declared)[2];
      return SmallVector<int64_t>{onesided ? 2 * (bins - 1) : bins};
    });
    if (!l || l->size() != 1)
      return c.error.empty() ? c.needsConstant(3) : Results(failure());
    if (frameLength && *frameLength != (*l)[0])
      return c.fail("frame_length differs from the window's length");
    frameLength = (*l)[0];
  }
  if (!frameLength)
    frameLength = length;
  int64_t fl = *frameLength;
  if (fl < 1 || fl > length)
    return c.fail(fmt::format("frame_length {} is not in [1, {}]", fl, length));

  // frame_step: a constant gives the frame count; a run-time one is checked
  // to give the declared count.
  int64_t frames;
  Value step;
  if (auto s = c.constantInts(1)) {
    if (s->size() != 1 || (*s)[0] < 1)
      return c.fail("frame_step must be one positive value");
    frames = 1 + (length - fl) / (*s)[0];
    step = c.scalar(c.b.getI64Type(), (double)(*s)[0]);
  } else {
    step = scalarI64(c, e, 1);
    if (!step || !declared)
      return c.needsConstant(1);
    frames = (*declared)[1];
    Value safe = e.max(step, e.k(step, 1));
    Value count =
        e.add(e.div(e.k(step, (double)(length - fl)), safe), e.k(step, 1));
    Value ok = e.op<AndOp>({e.greater(step, e.k(step, 0)),
                            e.equal(count, e.k(step, (double)frames))});
    if (e.failed)
      return failure();
    AssertOp::create(
        c.b, c.loc, ok,
        c.b.getStringAttr(fmt::format(
            "STFT: input 1 '{}' must be positive and give {} frames of {} "
            "samples from {}, as the model declares '{}' as [{}]",
            c.node.input(1), frames, fl, length, c.node.output(0),
            fmt::join(*declared, ", "))));
  }
  if (frames < 1)
    return c.fail("the signal is shorter than one frame");

  // Frames [batch, frames, fl, channels] gathered at f * step + k.
  Value f =
      i64Tensor(c, {frames, 1}, llvm::to_vector(llvm::seq<int64_t>(0, frames)));
  Value k = i64Tensor(c, {1, fl}, llvm::to_vector(llvm::seq<int64_t>(0, fl)));
  Value indices = e.reshape(e.add(e.mul(f, step), k), {frames * fl});
  Value framed =
      e.op<GatherOp>({x, indices}, {c.named("axis", c.b.getI64IntegerAttr(1))});
  framed = e.reshape(framed, {batch, frames, fl, type.getDimSize(2)});
  if (window)
    framed = e.mul(framed, e.reshape(e.cast(window, et), {1, 1, fl, 1}));
  if (e.failed)
    return failure();
  return one(buildDFT(c, framed, 2, fl, onesided, /*inverse=*/false));
}
