//===- EpilogueTiles.cpp - A matched epilogue on row vectors --------------===//
//
// What every register-tile kernel does with an epilogue matched by
// matchEpilogue (EpilogueFusion.cpp), whichever loop nest it built: the
// contraction micro-kernels (MicroKernel.cpp through storeTile), the direct
// NHWC convolution (ConvNhwc.cpp) and the depthwise one (DepthwiseNhwc.cpp).
//
// A row vector of the producer's result, its lanes consecutive along the
// lane group, becomes the consumer's value at the same place:
//
//   %x_r = vector.transfer_read %x[.., group index, lane group index]
//          (tensor.extract + vector.broadcast when %x does not vary along
//          the lanes)
//   %z_r = <the consumer's body on vector operands> (%acc, %x_r, ...)
//
// and the fusion is logged (KILN_LOGS=fusion) and reported (--report:
// `epilogues_fused`, the consumer's nodes joining the producer's kernel).
//
//===----------------------------------------------------------------------===//
#include "backends/cpu/ContractionCodegen.h"

#include "compiler/logging/Logging.h"
#include "compiler/logging/Report.h"
#include "dialects/kiln/NodeLocation.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::kiln;

namespace {
/// The consumer's body on vector<lanes> operands.
Value vectorBody(OpBuilder &b, Location loc, linalg::GenericOp consumer,
                 ArrayRef<Value> inputs, int64_t lanes) {
  Block *body = consumer.getBody();
  IRMapping mapping;
  for (auto [arg, value] : llvm::zip(body->getArguments(), inputs))
    mapping.map(arg, value);
  auto vectorOf = [&](Type t) { return VectorType::get({lanes}, t); };
  auto lookup = [&](Value v) {
    if (Value mapped = mapping.lookupOrNull(v))
      return mapped;
    // A scalar from above the consumer.
    Value splat = vector::BroadcastOp::create(b, loc, vectorOf(v.getType()), v);
    mapping.map(v, splat);
    return splat;
  };
  for (Operation &op : body->without_terminator()) {
    if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
      auto type = vectorOf(constant.getType());
      mapping.map(
          constant.getResult(),
          arith::ConstantOp::create(
              b, loc, type, SplatElementsAttr::get(type, constant.getValue())));
      continue;
    }
    for (Value operand : op.getOperands())
      (void)lookup(operand);
    Operation *clone = b.clone(op, mapping);
    for (Value result : clone->getResults())
      result.setType(vectorOf(result.getType()));
  }
  return lookup(body->getTerminator()->getOperand(0));
}

} // namespace

Value mlir::kiln::applyEpilogue(OpBuilder &b, Location loc,
                                const Epilogue &epilogue, Value acc,
                                ArrayRef<Value> coords, int64_t lanes) {
  // The linear index of a group at `coords` (the extent of a group's first
  // dim, which may be a run-time one, is not needed).
  auto linear = [&](const Epilogue::Group &group) {
    Value index = coords[group.accDims.front()];
    for (unsigned d : ArrayRef<unsigned>(group.accDims).drop_front()) {
      Value size =
          arith::ConstantIndexOp::create(b, loc, epilogue.fullShape[d]);
      index = arith::AddIOp::create(
          b, loc, arith::MulIOp::create(b, loc, index, size), coords[d]);
    }
    return index;
  };
  const Epilogue::Group &laneGroup = epilogue.groups[epilogue.nGroup];
  bool inBounds = laneGroup.valid == laneGroup.size &&
                  epilogue.fullShape[laneGroup.accDims.back()] % lanes == 0;
  SmallVector<Value> inputs;
  for (auto [i, operand] : llvm::enumerate(epilogue.operands)) {
    if (i == epilogue.resultInput) {
      inputs.push_back(acc);
      continue;
    }
    SmallVector<Value> indices;
    for (unsigned g : operand.groups)
      indices.push_back(linear(epilogue.groups[g]));
    auto xType = cast<RankedTensorType>(operand.value.getType());
    Type element = xType.getElementType();
    auto rowType = VectorType::get({lanes}, element);
    auto lanePos = llvm::find(operand.groups, epilogue.nGroup);
    if (lanePos == operand.groups.end()) {
      Value scalar = tensor::ExtractOp::create(b, loc, operand.value, indices);
      inputs.push_back(vector::BroadcastOp::create(b, loc, rowType, scalar));
      continue;
    }
    Value padding = arith::ConstantOp::create(
        b, loc, element, cast<TypedAttr>(b.getZeroAttr(element)));
    AffineMap along = AffineMap::get(
        xType.getRank(), 0,
        getAffineDimExpr(lanePos - operand.groups.begin(), b.getContext()));
    inputs.push_back(vector::TransferReadOp::create(
        b, loc, rowType, operand.value, indices, padding, along,
        ArrayRef<bool>{inBounds}));
  }
  return vectorBody(b, loc, epilogue.consumer, inputs, lanes);
}

void mlir::kiln::recordEpilogue(Location anchor, const Epilogue &epilogue) {
  std::vector<std::string> anchorNodes, consumerNodes;
  appendOnnxNodeNames(anchor, anchorNodes);
  appendOnnxNodeNames(linalg::GenericOp(epilogue.consumer)->getLoc(),
                      consumerNodes);
  KILN_LOG("fusion", Info) << "epilogue " << llvm::join(consumerNodes, ", ")
                           << " fused into " << onnxNodeName(anchor) << "\n";
  report::count("epilogues_fused");
  report::foldKernel(anchorNodes, consumerNodes);
}

void mlir::kiln::recordNoEpilogue(Location anchor, StringRef why) {
  KILN_LOG("fusion", Debug)
      << "no epilogue for " << onnxNodeName(anchor) << ": " << why << "\n";
}
