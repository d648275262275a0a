//===- ConvLayout.cpp - NHWC for chains of 2-D convolutions ---------------===//
//
// Analysis, choice, conversions at the boundaries (as Triton assigns an
// encoding and inserts convert_layout ops, leaving their removal to a later
// pass): chains are connected components of 2-D convolutions and
// layout-transparent ops (Layout.h); the cost model of Passes.td weighs a
// chain's convolution FLOPs against the bytes its boundary conversions move.
// Each chosen conv and pool is rewritten in place between two marked
// transposes; kiln-sink-transposes cancels the inner ones.
//
//===----------------------------------------------------------------------===//
#include "passes/graph/Layout.h"
#include "passes/graph/Passes.h"

#include "compiler/logging/Logging.h"
#include "dialects/kiln/NodeLocation.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/EquivalenceClasses.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_CONVLAYOUT
#include "passes/graph/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;

namespace {

/// Whether a window op's dims `first` to `last` are static.
bool staticDims(Operation *op, int64_t first, int64_t last) {
  for (Type type : {op->getOperand(0).getType(), op->getResult(0).getType()}) {
    auto ranked = cast<RankedTensorType>(type);
    for (int64_t d = first; d <= last && d < ranked.getRank(); ++d)
      if (ranked.isDynamicDim(d))
        return false;
  }
  return true;
}

/// An integer convolution over a run-time height or width: its NHWC kernel
/// is static (and it has no NCHW one either: refused when lowered).
bool runTimeInt8Image(Operation *op) {
  auto conv = dyn_cast<ConvOp>(op);
  return conv && conv.getInputZeroPoint() && !staticDims(op, 2, 3);
}

/// A 2-D convolution or pool still in NCHW form. Its channels must be
/// static; a run-time batch, height or width is lowered in NHWC too (the
/// direct convolution and channel-vectorized depthwise kernels).
bool isNchw2D(Operation *op) {
  if (isa<ConvOp, MaxPoolOp, AvgPoolOp>(op) &&
      (!staticDims(op, 1, 1) || runTimeInt8Image(op)))
    return false;
  if (auto conv = dyn_cast<ConvOp>(op))
    return !conv.getChannelsLast() && conv.getType().getRank() == 4;
  if (auto pool = dyn_cast<MaxPoolOp>(op))
    return !pool.getChannelsLast() && pool.getType().getRank() == 4;
  if (auto pool = dyn_cast<AvgPoolOp>(op))
    return !pool.getChannelsLast() && pool.getType().getRank() == 4;
  return false;
}

/// A convolution the cost model may move to NHWC: 2-D, f32, or the integer
/// core of a dequantized one (f32 result of 8-bit operands).
bool isCandidateConv(Operation *op) {
  auto conv = dyn_cast<ConvOp>(op);
  return conv && isNchw2D(op) && conv.getType().getElementType().isF32() &&
         (conv.getInputZeroPoint() ||
          cast<RankedTensorType>(conv.getWeight().getType())
              .getElementType()
              .isF32());
}

/// A dim's extent for the cost model: a run-time one (a symbolic batch,
/// height or width) counts as 1, on both sides of the comparison, so the
/// choice is the one made per image (per pixel).
int64_t costExtent(int64_t d) { return ShapedType::isDynamic(d) ? 1 : d; }

int64_t convFlops(ConvOp conv) {
  auto w = cast<RankedTensorType>(conv.getWeight().getType()).getShape();
  auto out = conv.getType().getShape();
  // out = [N, F, OH, OW], w = [F, C/group, KH, KW].
  return 2 * costExtent(out[0]) * out[1] * costExtent(out[2]) *
         costExtent(out[3]) * w[1] * w[2] * w[3];
}

int64_t bytes(Value v) {
  auto type = cast<RankedTensorType>(v.getType());
  int64_t bits = type.getElementType().getIntOrFloatBitWidth();
  int64_t elements = 1;
  for (int64_t d : type.getShape())
    elements *= costExtent(d);
  return elements * std::max<int64_t>(1, bits / 8);
}

/// Rewrites one NCHW conv or pool to its channels_last form between two
/// marked transposes.
void convert(Operation *op) {
  OpBuilder b(op);
  Location loc = op->getLoc();
  IRMapping mapping;
  mapping.map(op->getOperand(0),
              layout::createTranspose(b, loc, op->getOperand(0),
                                      layout::kToNHWC, /*conversion=*/true));
  if (auto conv = dyn_cast<ConvOp>(op))
    mapping.map(conv.getWeight(),
                layout::createTranspose(b, conv.getWeight().getLoc(),
                                        conv.getWeight(), layout::kToHWCF,
                                        /*conversion=*/false));
  Operation *nhwc = b.clone(*op, mapping);
  nhwc->setAttr("channels_last", b.getUnitAttr());
  auto type = cast<RankedTensorType>(op->getResult(0).getType());
  nhwc->getResult(0).setType(
      type.clone(layout::unpermuteShape(type.getShape(), layout::kToNCHW)));
  Value back = layout::createTranspose(b, loc, nhwc->getResult(0),
                                       layout::kToNCHW, /*conversion=*/true);
  op->getResult(0).replaceAllUsesWith(back);
  op->erase();
}

struct Chain {
  SmallVector<Operation *> ops;
  int64_t flops = 0, conversionBytes = 0, convs = 0;
  /// Integer convolutions (input_zero_point): their fast kernel is NHWC.
  int64_t int8Convs = 0;
  /// Convolutions over a run-time height or width: in NCHW each is an
  /// im2col matmul between two transposes, or a scalar loop nest.
  int64_t runTimeImageConvs = 0;
};

struct ConvLayoutPass : mlir::kiln::impl::ConvLayoutBase<ConvLayoutPass> {
  using Base::Base;

  void runOnOperation() override {
    if (layout != "auto" && layout != "nchw" && layout != "nhwc") {
      getOperation().emitError()
          << "kiln-conv-layout: layout must be auto, nchw or nhwc, got '"
          << layout << "'";
      return signalPassFailure();
    }
    getOperation().walk([&](func::FuncOp func) { runOnFunction(func); });
  }

  void runOnFunction(func::FuncOp func) {
    SmallVector<Operation *> toConvert;
    if (layout == "nchw") {
      KILN_LOG("layout", Info) << "layout=nchw: every convolution stays NCHW\n";
      return;
    }
    if (layout == "nhwc") {
      func.walk([&](Operation *op) {
        if (isNchw2D(op)) {
          toConvert.push_back(op);
          KILN_LOG("layout", Info)
              << "layout=nhwc: " << op->getName().stripDialect() << " '"
              << onnxNodeName(op->getLoc()) << "' -> NHWC\n";
        }
      });
    } else {
      for (Chain &chain : analyze(func))
        if (choose(chain))
          for (Operation *op : chain.ops)
            if (isNchw2D(op))
              toConvert.push_back(op);
    }
    for (Operation *op : toConvert)
      convert(op);
  }

  bool inChain(Operation *op) {
    return isCandidateConv(op) || layout::isLayoutTransparent(op);
  }

  /// Connected components of candidate convolutions and transparent ops, in
  /// program order, with their cost figures.
  SmallVector<Chain> analyze(func::FuncOp func) {
    llvm::EquivalenceClasses<Operation *> classes;
    SmallVector<Operation *> members;
    func.walk([&](Operation *op) {
      if (!inChain(op))
        return;
      members.push_back(op);
      classes.insert(op);
      for (Value v : op->getOperands())
        if (Operation *def = v.getDefiningOp(); def && classes.contains(def))
          classes.unionSets(op, def);
    });
    llvm::MapVector<Operation *, Chain> chains;
    for (Operation *op : members)
      chains[classes.getLeaderValue(op)].ops.push_back(op);

    SmallVector<Chain> result;
    for (auto &[leader, chain] : chains) {
      llvm::SmallPtrSet<Operation *, 16> inside(chain.ops.begin(),
                                                chain.ops.end());
      llvm::SetVector<Value> boundary;
      for (Operation *op : chain.ops) {
        if (auto conv = dyn_cast<ConvOp>(op)) {
          chain.flops += convFlops(conv);
          ++chain.convs;
          if (conv.getInputZeroPoint())
            ++chain.int8Convs;
          if (!staticDims(conv, 2, 3))
            ++chain.runTimeImageConvs;
        }
        // The data operand of convs and pools; every operand of the others.
        unsigned numData =
            isa<ConvOp, MaxPoolOp, AvgPoolOp>(op) ? 1 : op->getNumOperands();
        for (Value v : op->getOperands().take_front(numData)) {
          Operation *def = v.getDefiningOp();
          if ((!def || !inside.contains(def)) && !matchPattern(v, m_Constant()))
            boundary.insert(v);
        }
        for (Value r : op->getResults())
          if (llvm::any_of(r.getUsers(), [&](Operation *user) {
                return !inside.contains(user);
              }))
            boundary.insert(r);
      }
      for (Value v : boundary)
        chain.conversionBytes += 2 * bytes(v);
      if (chain.convs)
        result.push_back(std::move(chain));
    }
    return result;
  }

  bool choose(const Chain &chain) {
    // The int8 convolutions have an NHWC kernel only (NCHW ones run as
    // scalar loops), and so do f32 ones over a run-time image (NCHW: an
    // im2col between two transposes per convolution, or a scalar loop nest
    // for a depthwise one), so their chains go NHWC whatever the
    // conversions cost.
    bool nhwc = chain.int8Convs > 0 || chain.runTimeImageConvs > 0 ||
                chain.flops >= flopsPerByte * chain.conversionBytes;
    KILN_LOG("layout", Info)
        << "chain of " << chain.convs << " conv(s) from '"
        << onnxNodeName(chain.ops.front()->getLoc()) << "' to '"
        << onnxNodeName(chain.ops.back()->getLoc()) << "': " << chain.flops
        << " conv FLOPs, " << chain.conversionBytes
        << " bytes of conversions -> " << (nhwc ? "NHWC" : "NCHW")
        << (chain.int8Convs           ? " (int8 convolutions)"
            : chain.runTimeImageConvs ? " (convolutions over run-time images)"
            : nhwc                    ? ""
                                      : " (FLOPs below flops-per-byte x bytes)")
        << "\n";
    if (nhwc)
      for (Operation *op : chain.ops)
        if (isNchw2D(op)) {
          KILN_LOG("layout", Info)
              << "  " << op->getName().stripDialect() << " '"
              << onnxNodeName(op->getLoc()) << "' -> NHWC\n";
        }
    return nhwc;
  }
};
} // namespace
