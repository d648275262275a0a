//===- MergeContractions.cpp - same-input contractions -> one wider one ---===//
//
// Q/K/V projections, and the parallel 1x1 convolutions of an Inception
// block, read the same input with different constant weights. Merged, the
// input is read once and the contraction is wider, which is what a tiled
// matmul microkernel wants:
//
//   matmul(x, W1), matmul(x, W2)      -> slice(matmul(x, [W1 W2]))
//   conv1x1(x, F1, b1), conv1x1(x, F2) -> slice(conv1x1(x, [F1; F2], [b1; 0]))
//
// Cost model (documented in Passes.td): every member has a constant weight,
// an output no wider than `max-width` columns/filters, and the group has at
// least two members. Past that width a single contraction already fills
// the vector units and merging only adds a slice.
//
// Groups are formed per input value, in program order; the merged op sits at
// the first member, its weights are a new constant made from the members'
// bytes (never per element), and each member's result becomes a kiln.slice
// of it. Each decision is logged under KILN_LOGS=fusion with the ONNX node
// names, and every contraction merged adds one to `contractions_merged`.
//
//===----------------------------------------------------------------------===//
#include "passes/graph/ConstantBytes.h"
#include "passes/graph/Passes.h"

#include "compiler/logging/Logging.h"
#include "compiler/logging/Report.h"
#include "dialects/kiln/NodeLocation.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/MapVector.h"

#include <cstring>

namespace mlir::kiln {
#define GEN_PASS_DEF_MERGECONTRACTIONS
#include "passes/graph/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;

namespace {

std::optional<std::vector<char>> constantOperandBytes(Value v) {
  ElementsAttr attr;
  if (!v || !matchPattern(v, m_Constant(&attr)))
    return std::nullopt;
  return constantBytes(attr);
}

int64_t elementBytes(Type t) {
  return cast<ShapedType>(t).getElementTypeBitWidth() / 8;
}

/// Why `op` cannot join a merge group, or "" if it can.
std::string mergeBlocker(Operation *op, int64_t maxWidth) {
  if (auto mm = dyn_cast<MatMulOp>(op)) {
    auto lhs = cast<RankedTensorType>(mm.getLhs().getType());
    auto rhs = cast<RankedTensorType>(mm.getRhs().getType());
    if (rhs.getRank() != 2 || lhs.getRank() < 2)
      return "weight is not a matrix";
    if (!matchPattern(mm.getRhs(), m_Constant()))
      return "weight is not constant";
    if (rhs.getElementTypeBitWidth() % 8 != 0)
      return "weight element type is not byte sized";
    if (rhs.getDimSize(1) > maxWidth)
      return "output wider than max-width";
    return "";
  }
  auto conv = cast<ConvOp>(op);
  auto w = cast<RankedTensorType>(conv.getWeight().getType());
  if (conv.getGroup() != 1)
    return "grouped convolution";
  if (conv.getChannelsLast())
    return "channels_last convolution";
  if (llvm::any_of(w.getShape().drop_front(2),
                   [](int64_t k) { return k != 1; }))
    return "kernel is not 1x1";
  if (!matchPattern(conv.getWeight(), m_Constant()) ||
      (conv.getBias() && !matchPattern(conv.getBias(), m_Constant())))
    return "weight or bias is not constant";
  if (w.getElementTypeBitWidth() % 8 != 0)
    return "weight element type is not byte sized";
  if (w.getDimSize(0) > maxWidth)
    return "output wider than max-width";
  return "";
}

/// Members of one group must agree on everything but the weights.
bool compatible(Operation *a, Operation *b) {
  if (a->getName() != b->getName())
    return false;
  if (auto ma = dyn_cast<MatMulOp>(a)) {
    auto mb = cast<MatMulOp>(b);
    auto ra = cast<RankedTensorType>(ma.getRhs().getType());
    auto rb = cast<RankedTensorType>(mb.getRhs().getType());
    return ra.getDimSize(0) == rb.getDimSize(0) &&
           ra.getElementType() == rb.getElementType() &&
           ma.getType().getElementType() == mb.getType().getElementType();
  }
  auto ca = cast<ConvOp>(a), cb = cast<ConvOp>(b);
  return ca.getStrides() == cb.getStrides() && ca.getPads() == cb.getPads() &&
         ca.getDilations() == cb.getDilations() &&
         ca.getInputZeroPoint() == cb.getInputZeroPoint() &&
         ca.getWeight().getType().getElementType() ==
             cb.getWeight().getType().getElementType() &&
         (!ca.getBias() || !cb.getBias() ||
          ca.getBias().getType().getElementType() ==
              cb.getBias().getType().getElementType());
}

int64_t outputWidth(Operation *op) {
  if (auto mm = dyn_cast<MatMulOp>(op))
    return cast<RankedTensorType>(mm.getRhs().getType()).getDimSize(1);
  return cast<RankedTensorType>(cast<ConvOp>(op).getWeight().getType())
      .getDimSize(0);
}

ArrayRef<char> asBytes(const std::vector<char> &v) {
  return ArrayRef<char>(v.data(), v.size());
}

/// Replaces `group` (same input, compatible, in program order) by one
/// contraction and a slice per member.
void mergeGroup(ArrayRef<Operation *> group) {
  Operation *first = group.front();
  OpBuilder b(first);
  MLIRContext *ctx = first->getContext();
  SmallVector<Location> locs;
  for (Operation *op : group)
    locs.push_back(op->getLoc());
  Location loc = FusedLoc::get(ctx, locs);
  int64_t total = 0;
  for (Operation *op : group)
    total += outputWidth(op);

  Value merged;
  int64_t axis;
  if (auto mm = dyn_cast<MatMulOp>(first)) {
    // [K, N_i] row by row: row k of the result is row k of every member.
    auto rhsType = cast<RankedTensorType>(mm.getRhs().getType());
    int64_t k = rhsType.getDimSize(0), width = elementBytes(rhsType);
    std::vector<std::vector<char>> parts;
    for (Operation *op : group)
      parts.push_back(*constantOperandBytes(cast<MatMulOp>(op).getRhs()));
    std::vector<char> bytes;
    bytes.reserve(k * total * width);
    for (int64_t row = 0; row < k; ++row)
      for (auto [op, part] : llvm::zip(group, parts)) {
        int64_t rowBytes = outputWidth(op) * width;
        bytes.insert(bytes.end(), part.begin() + row * rowBytes,
                     part.begin() + (row + 1) * rowBytes);
      }
    auto type = RankedTensorType::get({k, total}, rhsType.getElementType());
    Value weight = ConstantOp::create(
        b, mm.getRhs().getLoc(),
        bytesToConstant(type, "merged_weight", asBytes(bytes)));
    merged = MatMulOp::create(b, loc, mm.getLhs(), weight).getResult();
    axis = cast<RankedTensorType>(merged.getType()).getRank() - 1;
  } else {
    // [F_i, C, 1...] filters one after the other; missing biases are 0.
    auto conv = cast<ConvOp>(first);
    auto wType = cast<RankedTensorType>(conv.getWeight().getType());
    std::vector<char> weights;
    bool anyBias = false;
    Type biasElement;
    for (Operation *op : group) {
      auto c = cast<ConvOp>(op);
      auto w = *constantOperandBytes(c.getWeight());
      weights.insert(weights.end(), w.begin(), w.end());
      if (c.getBias()) {
        anyBias = true;
        biasElement = c.getBias().getType().getElementType();
      }
    }
    SmallVector<int64_t> shape(wType.getShape());
    shape[0] = total;
    Value weight = ConstantOp::create(
        b, conv.getWeight().getLoc(),
        bytesToConstant(wType.clone(shape), "merged_weight", asBytes(weights)));
    Value bias;
    if (anyBias) {
      std::vector<char> biases;
      int64_t width = biasElement.getIntOrFloatBitWidth() / 8;
      for (Operation *op : group) {
        auto c = cast<ConvOp>(op);
        if (c.getBias()) {
          auto part = *constantOperandBytes(c.getBias());
          biases.insert(biases.end(), part.begin(), part.end());
        } else {
          biases.insert(biases.end(), outputWidth(op) * width, 0);
        }
      }
      bias = ConstantOp::create(
          b, loc,
          bytesToConstant(RankedTensorType::get({total}, biasElement),
                          "merged_bias", asBytes(biases)));
    }
    merged =
        ConvOp::create(b, loc, conv.getInput(), weight, bias,
                       conv.getStridesAttr(), conv.getPadsAttr(),
                       conv.getDilationsAttr(), conv.getGroupAttr(),
                       /*channels_last=*/nullptr, conv.getInputZeroPointAttr())
            .getResult();
    axis = 1;
  }

  auto mergedType = cast<RankedTensorType>(merged.getType());
  // All slices first: the builder's insertion point is the first member.
  SmallVector<Value> slices;
  int64_t offset = 0;
  for (Operation *op : group) {
    SmallVector<int64_t> starts(mergedType.getRank(), 0);
    SmallVector<int64_t> ends(mergedType.getShape());
    SmallVector<int64_t> steps(mergedType.getRank(), 1);
    starts[axis] = offset;
    offset += outputWidth(op);
    ends[axis] = offset;
    slices.push_back(SliceOp::create(b, op->getLoc(),
                                     op->getResult(0).getType(), merged, starts,
                                     ends, steps));
  }
  for (auto [op, slice] : llvm::zip(group, slices)) {
    op->getResult(0).replaceAllUsesWith(slice);
    op->erase();
  }
}

struct MergeContractionsPass
    : mlir::kiln::impl::MergeContractionsBase<MergeContractionsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<Block *> blocks;
    getOperation().walk([&](Block *block) { blocks.push_back(block); });
    for (Block *block : blocks) {
      // Candidates per input value, in program order.
      llvm::MapVector<Value, SmallVector<Operation *>> byInput;
      for (Operation &op : *block) {
        if (auto mm = dyn_cast<MatMulOp>(op))
          byInput[mm.getLhs()].push_back(&op);
        else if (auto conv = dyn_cast<ConvOp>(op))
          byInput[conv.getInput()].push_back(&op);
      }
      for (auto &[input, ops] : byInput) {
        if (ops.size() < 2)
          continue;
        SmallVector<Operation *> eligible;
        for (Operation *op : ops) {
          std::string why = mergeBlocker(op, maxWidth);
          if (why.empty()) {
            eligible.push_back(op);
            continue;
          }
          KILN_LOG("fusion", Info)
              << "not merging contraction '" << onnxNodeName(op->getLoc())
              << "' with others on the same input: " << why << "\n";
        }
        // Split into compatible groups, keeping program order.
        SmallVector<SmallVector<Operation *>> groups;
        for (Operation *op : eligible) {
          auto it = llvm::find_if(
              groups, [&](auto &g) { return compatible(g.front(), op); });
          if (it == groups.end())
            groups.push_back({op});
          else
            it->push_back(op);
        }
        for (auto &group : groups) {
          if (group.size() < 2)
            continue;
          KILN_LOG("fusion", Info)
              << "merged " << group.size() << " contractions on '"
              << (input.getDefiningOp() ? onnxNodeName(input.getLoc())
                                        : std::string("a graph input"))
              << "' into one: " << onnxNodeList(group) << "\n";
          report::count("contractions_merged", group.size());
          mergeGroup(group);
        }
      }
    }
  }
};
} // namespace
