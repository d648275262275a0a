//===- ImportNNNorm.cpp - Normalizations and Dropout ----------------------===//
//
// BatchNormalization and LayerNormalization map to their kiln ops in the
// common inference case; the variants that also return statistics (training
// mode batch norm, layer norm's Mean/InvStdDev) are composed from reductions
// and elementwise ops following the ONNX function bodies, as are
// InstanceNormalization, MeanVarianceNormalization and LRN.
//
//===----------------------------------------------------------------------===//

#include "compiler/import/onnx/ImportNNBuilder.h"
#include "compiler/import/onnx/SymbolicShapes.h"

#include "onnx/onnx.pb.h"

#include <fmt/format.h>

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::onnx_import;

namespace {
using Results = FailureOr<SmallVector<Value>>;

/// Shape of a per-channel [C] parameter broadcast against NC... of `rank`.
SmallVector<int64_t> channelShape(int64_t channels, int64_t rank) {
  SmallVector<int64_t> shape(rank - 1, 1);
  shape[0] = channels;
  return shape;
}

/// A per-channel parameter `v` ([C]) shaped to broadcast against NC... of
/// `rank`. It keeps its own extent, so one that differs from run-time
/// channels fails the run in the broadcast.
Value toChannels(NNBuilder &e, Value v, int64_t rank) {
  if (!v)
    return v;
  if (e.rank(v) != 1) // the reshape reports it
    return e.reshape(v, channelShape(1, rank));
  return e.reshape(v, channelShape(e.shape(v)[0], rank));
}

/// Training mode: normalize with the batch's own statistics and return the
/// updated running statistics.
Results importBatchNormTraining(NodeContext &c) {
  if (c.hasOutput(3) || c.hasOutput(4))
    return c.unsupported("the saved_mean/saved_var outputs of training mode");
  NNBuilder e(c);
  Value x = c.input(0);
  int64_t rank = e.rank(x), channels = e.shape(x)[1];
  SmallVector<int64_t> axes = dimRange(0, rank);
  axes.erase(axes.begin() + 1);
  auto toChannel = [&](Value v) { return toChannels(e, v, rank); };

  Value mean = e.reduceMean(x, axes, true);
  Value centered = e.sub(x, mean);
  Value var = e.reduceMean(e.mul(centered, centered), axes, true);
  Value eps = e.k(x, c.attrFloat("epsilon", 1e-5));
  Value y = e.div(centered, e.sqrt(e.add(var, eps)));
  y = e.add(e.mul(y, toChannel(c.input(1))), toChannel(c.input(2)));

  // running = input_running * momentum + batch * (1 - momentum)
  double momentum = c.attrFloat("momentum", 0.9);
  auto running = [&](Value previous, Value batch) {
    Value flat = e.reshape(batch, {channels});
    return e.add(e.mul(previous, e.k(previous, momentum)),
                 e.mul(e.cast(flat, e.elementType(previous)),
                       e.k(previous, 1 - momentum)));
  };
  Value runningMean = c.hasOutput(1) ? running(c.input(3), mean) : Value();
  Value runningVar = c.hasOutput(2) ? running(c.input(4), var) : Value();
  return e.done({y, runningMean, runningVar});
}

Results importBatchNorm(NodeContext &c) {
  for (size_t i = 0; i < 5; ++i)
    if (!c.hasInput(i))
      return c.fail("needs X, scale, B, mean and var");
  if (c.type(c.input(0)).getRank() < 2)
    return c.fail("X must have rank >= 2");
  // Opset < 7 had is_test (0 means training); from 14, training_mode.
  bool training =
      c.opset >= 14 ? c.attrInt("training_mode", 0) != 0 : c.numOutputs() > 1;
  if (training)
    return importBatchNormTraining(c);
  NNBuilder e(c);
  return e.done({e.op<BatchNormOp>(
      {c.input(0), c.input(1), c.input(2), c.input(3), c.input(4)},
      {c.named("epsilon",
               c.b.getF64FloatAttr(c.attrFloat("epsilon", 1e-5)))})});
}

/// LayerNormalization. Y alone is kiln.layer_norm; with the Mean/InvStdDev
/// outputs it is the ONNX function body, statistics in `stash_type`.
Results importLayerNorm(NodeContext &c) {
  Value x = c.input(0);
  if (!x || !c.hasInput(1))
    return c.fail("needs X and Scale");
  NNBuilder e(c);
  int64_t rank = e.rank(x);
  auto axis = c.normalizeAxis(c.attrInt("axis", -1), rank);
  if (!axis)
    return c.fail("axis out of range");
  double epsilon = c.attrFloat("epsilon", 1e-5);
  if (!c.hasOutput(1) && !c.hasOutput(2)) {
    SmallVector<Value> operands = {x, c.input(1)};
    if (c.hasInput(2))
      operands.push_back(c.input(2));
    return e.done({e.op<LayerNormOp>(
        operands, {c.named("axis", c.b.getI64IntegerAttr(*axis)),
                   c.named("epsilon", c.b.getF64FloatAttr(epsilon))})});
  }
  int64_t stashType = c.attrInt("stash_type", 1);
  Type stash = elementTypeFor(c.ctx(), stashType);
  if (!stash || !isa<FloatType>(stash))
    return c.unsupported(fmt::format("stash_type {}", stashType));
  Type xType = e.elementType(x);
  Value xs = e.cast(x, stash);
  SmallVector<int64_t> axes = dimRange(*axis, rank);
  Value mean = e.reduceMean(xs, axes, true);
  Value centered = e.sub(xs, mean);
  Value var = e.reduceMean(e.mul(centered, centered), axes, true);
  Value invStdDev = e.div(e.k(var, 1), e.sqrt(e.add(var, e.k(var, epsilon))));
  Value y = e.cast(e.mul(centered, invStdDev), xType);
  y = e.mul(y, c.input(1));
  if (c.hasInput(2))
    y = e.add(y, c.input(2));
  return e.done({y, mean, invStdDev});
}

/// InstanceNormalization: per (sample, channel) mean and variance over the
/// spatial dims, then the per-channel affine transform.
Results importInstanceNorm(NodeContext &c) {
  Value x = c.input(0);
  if (!x || c.type(x).getRank() < 3 || !c.hasInput(1) || !c.hasInput(2))
    return c.fail("needs an input of rank >= 3, scale and B");
  NNBuilder e(c);
  int64_t rank = e.rank(x);
  SmallVector<int64_t> axes = dimRange(2, rank);
  auto toChannel = [&](Value v) { return toChannels(e, v, rank); };
  Value mean = e.reduceMean(x, axes, true);
  Value centered = e.sub(x, mean);
  Value var = e.reduceMean(e.mul(centered, centered), axes, true);
  Value eps = e.k(x, c.attrFloat("epsilon", 1e-5));
  Value normalized = e.div(centered, e.sqrt(e.add(var, eps)));
  Value scaled = e.mul(normalized, toChannel(c.input(1)));
  return e.done({e.add(scaled, toChannel(c.input(2)))});
}

/// MeanVarianceNormalization, as its function body: (X - E[X]) /
/// (sqrt(E[X^2] - E[X]^2) + 1e-9).
Results importMeanVarianceNorm(NodeContext &c) {
  Value x = c.input(0);
  NNBuilder e(c);
  int64_t rank = e.rank(x);
  SmallVector<int64_t> axes =
      c.attrInts("axes").value_or(SmallVector<int64_t>{0, 2, 3});
  for (int64_t &a : axes) {
    auto axis = c.normalizeAxis(a, rank);
    if (!axis)
      return c.fail("axes out of range");
    a = *axis;
  }
  llvm::sort(axes);
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  Value mean = e.reduceMean(x, axes, true);
  Value meanOfSquares = e.reduceMean(e.mul(x, x), axes, true);
  Value std = e.sqrt(e.sub(meanOfSquares, e.mul(mean, mean)));
  return e.done({e.div(e.sub(x, mean), e.add(std, e.k(x, 1e-9)))});
}

/// LRN: the sum of squares over a window of channels is an average pool
/// (padding counted, so mean * size is the sum) over a view of X^2 that puts
/// the channels in a spatial position: [N, 1, C, H*W], or, when the batch
/// or the spatial extents are known only at run time, [N, 1, C, H, W] with
/// a window of one position in each spatial dim (the channels may be run-time
/// too).
Results importLRN(NodeContext &c) {
  Value x = c.input(0);
  NNBuilder e(c);
  if (e.rank(x) < 3)
    return c.fail("X must have rank >= 3");
  int64_t size = c.attrInt("size", 0);
  if (size < 1)
    return c.fail("size must be positive");
  double alpha = c.attrFloat("alpha", 1e-4), beta = c.attrFloat("beta", 0.75),
         bias = c.attrFloat("bias", 1.0);
  ArrayRef<int64_t> shape = e.shape(x);
  // A window of 2C - 1 channels or more covers every channel from every
  // position: the sum is the same with the window clamped there (a size
  // from the file may be in the billions; alpha / size keeps it). With a
  // run-time channel extent the window is the size itself.
  // The pool pads size - 1 channels at every position: a wider window
  // would multiply the memory of a large map.
  constexpr int64_t kMaxRunTimeWindow = 1024;
  int64_t kernel = size;
  if (!ShapedType::isDynamic(shape[1]))
    kernel = std::max<int64_t>(1, std::min(size, 2 * shape[1] - 1));
  else if (size > kMaxRunTimeWindow)
    return c.unsupported(
        fmt::format("LRN of size {} over a run-time channel extent (up to {} "
                    "channels; give a static one with --input-shape)",
                    size, kMaxRunTimeWindow));
  int64_t before = (kernel - 1) / 2, after = kernel - 1 - before;
  bool runTime = !c.type(x).hasStaticShape();
  // The view, and the window: the channels, one position elsewhere.
  SmallVector<int64_t> window{kernel}, pads{before}, ends{after};
  SmallVector<SymInt> view{dimOf(c, x, 0), c.b.getI64IntegerAttr(1),
                           dimOf(c, x, 1)};
  if (runTime) {
    for (int64_t d = 2; d < (int64_t)shape.size(); ++d) {
      view.push_back(dimOf(c, x, d));
      window.push_back(1), pads.push_back(0), ends.push_back(0);
    }
  } else {
    int64_t positions = 1;
    for (int64_t d : shape.drop_front(2))
      positions *= d;
    view.push_back(c.b.getI64IntegerAttr(positions));
    window.push_back(1), pads.push_back(0), ends.push_back(0);
  }
  pads.append(ends);
  SmallVector<int64_t> ones(window.size(), 1);
  auto reshape = [&](Value v, ArrayRef<SymInt> to) -> FailureOr<Value> {
    if (!v)
      return failure();
    if (runTime)
      return reshapeSymbolic(c, v, to, /*allowZero=*/true);
    SmallVector<int64_t> dims;
    for (SymInt d : to)
      dims.push_back(*constantOf(d));
    return e.reshape(v, dims);
  };
  FailureOr<Value> squares = reshape(e.mul(x, x), view);
  if (failed(squares))
    return failure();
  Value mean = e.op<AvgPoolOp>(
      {*squares},
      {c.named("kernel_shape", c.i64s(window)),
       c.named("strides", c.i64s(ones)), c.named("pads", c.i64s(pads)),
       c.named("dilations", c.i64s(ones)),
       // Spelled out: make<> does not fill in default attributes.
       c.named("ceil_mode", c.b.getBoolAttr(false)),
       c.named("count_include_pad", c.b.getBoolAttr(true))});
  SmallVector<SymInt> back;
  for (int64_t d = 0; d < (int64_t)shape.size(); ++d)
    back.push_back(dimOf(c, x, d));
  FailureOr<Value> sum = reshape(e.mul(mean, e.k(x, kernel)), back);
  if (failed(sum))
    return failure();
  Value denominator = e.pow(
      e.add(e.mul(*sum, e.k(x, alpha / size)), e.k(x, bias)), e.k(x, beta));
  return e.done({e.div(x, denominator)});
}

/// Dropout is the identity outside training, and in training with ratio 0;
/// the mask is then all true. Random dropout cannot match a reference, so a
/// constant training_mode=true with a non-zero ratio is rejected; a
/// training_mode computed at run time is taken as inference, as Kiln compiles
/// models for inference (the identity was the behavior before masks too).
Results importDropout(NodeContext &c) {
  Value x = c.input(0);
  bool training = false;
  if (c.opset >= 12 && c.hasInput(2)) {
    auto mode = c.constantInts(2);
    training = mode && mode->size() == 1 && (*mode)[0] != 0;
  }
  double ratio = c.attrFloat("ratio", 0.5);
  if (training && c.hasInput(1)) {
    auto r = c.constantFloats(1);
    if (!r || r->size() != 1)
      return c.unsupported("ratio computed at run time in training mode "
                           "(training dropout is random)");
    ratio = (*r)[0];
  }
  if (training && ratio != 0)
    return c.unsupported("random dropout (training_mode with ratio > 0)");
  NNBuilder e(c);
  Value mask = c.hasOutput(1)
                   ? e.splat(e.shape(x), IntegerType::get(c.ctx(), 1), 1)
                   : Value();
  return e.done({x, mask});
}
} // namespace

void mlir::kiln::onnx_import::registerNNNormHandlers(
    llvm::StringMap<OpHandler> &t) {
  t["BatchNormalization"] = importBatchNorm;
  t["LayerNormalization"] = importLayerNorm;
  t["InstanceNormalization"] = importInstanceNorm;
  t["MeanVarianceNormalization"] = importMeanVarianceNorm;
  t["LRN"] = importLRN;
  t["Dropout"] = importDropout;
}
