//===- FuseQuantizedMatmul.cpp - DQ(x) @ DQ(w) -> integer matmul ----------===//
//
// ONNX QDQ models (onnxruntime.quantization, static, per-channel weights)
// spell an int8 matmul as a float one between DequantizeLinear nodes, which
// the importer composes of kiln ops:
//
//   x = (cast(x_q : ui8) - x_zero_point) * x_scale      (per tensor)
//   w = (cast(w_q : i8 constant [K, N]) - 0) * w_scale  (per column, [N])
//   y = kiln.matmul x, w
//
// This pass rewrites such a matmul as the integer product of the bytes and
// one multiply by the combined scale, which the CPU backend runs with VNNI
// (vpdpbusd) instead of dequantizing the weights on every run:
//
//   y = kiln.mul (kiln.quantized_matmul x_q, w_q {lhs_zero_point}),
//                x_scale * w_scale                      ([N] constant)
//
// The integer sums are exact (the backend adds them to the f32 accumulator
// once per K block, rounding only there, as any f32 sum would), and the
// scale product is rounded once to f32. Only
// for targets that have the instructions (the pipeline enables it); each
// candidate's decision is logged under KILN_LOGS=fusion, fused ones are
// counted as `int8_kernels`.
//
//===----------------------------------------------------------------------===//
#include "passes/fusion/Passes.h"
#include "passes/fusion/UniformConstant.h"
#include "passes/graph/ConstantBytes.h"
#include "passes/graph/Dequantize.h"

#include "compiler/logging/Logging.h"
#include "compiler/logging/Report.h"
#include "dialects/kiln/KilnOps.h"
#include "dialects/kiln/NodeLocation.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

#include <algorithm>
#include <cmath>

namespace mlir::kiln {
#define GEN_PASS_DEF_FUSEQUANTIZEDMATMUL
#include "passes/fusion/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;

namespace {

/// matchDequantize of 8-bit integers.
std::optional<Dequantized> matchByteDequantize(Value v) {
  std::optional<Dequantized> dq = matchDequantize(v);
  if (!dq || !cast<RankedTensorType>(dq->quantized.getType())
                  .getElementType()
                  .isInteger(8))
    return std::nullopt;
  return dq;
}

/// The values of a constant (through reshapes) as f32: `count` of them, a
/// single element repeated.
std::optional<std::vector<float>> constantFloats(Value v, int64_t count) {
  std::optional<std::vector<double>> values = constantValues(v);
  if (!values || (values->size() != 1 && int64_t(values->size()) != count))
    return std::nullopt;
  std::vector<float> floats(count);
  for (int64_t i = 0; i < count; ++i)
    floats[i] = float((*values)[values->size() == 1 ? 0 : i]);
  return floats;
}

/// Whether `v` is a constant (through reshapes and casts) whose elements are
/// all zero: the weights' zero point, usually a dense_resource per column.
bool isZeroConstant(Value v) {
  while (Operation *op = v.getDefiningOp()) {
    if (!isa<ReshapeOp, CastOp>(op))
      break;
    v = op->getOperand(0);
  }
  ElementsAttr attr;
  if (!matchPattern(v, m_Constant(&attr)))
    return false;
  std::optional<std::vector<char>> bytes = constantBytes(attr);
  return bytes && llvm::all_of(*bytes, [](char c) { return c == 0; });
}

/// A QuantizeLinear of constant f32 weights [K, N] to int8 (what
/// onnxruntime's quantizer leaves for weights it shares), as the importer
/// composes it: cast(clip(round(w / scale) [+ 0])), the scale one or one per
/// column. Returns the int8 values, computed as those ops would.
std::optional<std::vector<char>> quantizedConstant(Value q) {
  auto castOp = q.getDefiningOp<CastOp>();
  auto type = cast<RankedTensorType>(q.getType());
  if (!castOp || !type.getElementType().isSignlessInteger(8) ||
      type.getRank() != 2)
    return std::nullopt;
  auto clip = castOp.getInput().getDefiningOp<ClipOp>();
  if (!clip || !clip.getMin() || !clip.getMax())
    return std::nullopt;
  Value x = clip.getInput();
  if (auto add = x.getDefiningOp<AddOp>()) {
    if (!isZeroConstant(add.getRhs()))
      return std::nullopt;
    x = add.getLhs();
  }
  auto round = x.getDefiningOp<RoundOp>();
  auto div = round ? round.getInput().getDefiningOp<DivOp>() : DivOp();
  if (!div)
    return std::nullopt;
  int64_t k = type.getDimSize(0), n = type.getDimSize(1);
  std::optional<std::vector<float>> w = constantFloats(div.getLhs(), k * n);
  auto scaleType = cast<RankedTensorType>(div.getRhs().getType());
  // One scale, or one per column ([N] or [1, N]).
  bool perColumn = scaleType.getNumElements() > 1;
  if (perColumn &&
      (scaleType.getShape().back() != n || scaleType.getNumElements() != n))
    return std::nullopt;
  std::optional<std::vector<float>> scale = constantFloats(div.getRhs(), n);
  if (!w || !scale)
    return std::nullopt;
  double lo = clip.getMin()->convertToDouble(),
         hi = clip.getMax()->convertToDouble();
  std::vector<char> values(k * n);
  for (int64_t r = 0; r < k; ++r)
    for (int64_t c = 0; c < n; ++c) {
      float v = std::nearbyint((*w)[r * n + c] / (*scale)[c]); // half to even
      values[r * n + c] = char(std::clamp<double>(v, lo, hi));
    }
  return values;
}

struct FuseQuantizedMatmulPass
    : mlir::kiln::impl::FuseQuantizedMatmulBase<FuseQuantizedMatmulPass> {
  using Base::Base;

  /// The replacement of `op`, or a reason it has none (empty: not a
  /// quantized matmul at all, nothing to log).
  FailureOr<Value> rewrite(OpBuilder &b, MatMulOp op, std::string &reason) {
    // Gemm's transB: the weights [N, K], transposed after dequantizing.
    Value rhs = op.getRhs();
    auto transpose = rhs.getDefiningOp<TransposeOp>();
    bool transposed =
        transpose && transpose.getPerm() == ArrayRef<int64_t>{1, 0};
    if (transposed)
      rhs = transpose.getInput();
    std::optional<Dequantized> x = matchByteDequantize(op.getLhs());
    std::optional<Dequantized> w = matchByteDequantize(rhs);
    if (!x || !w)
      return failure();
    auto xType = cast<RankedTensorType>(x->quantized.getType());
    auto wType = cast<RankedTensorType>(w->quantized.getType());
    auto resultType = op.getType();
    if (!resultType.getElementType().isF32())
      return reason = "the result is not f32", failure();
    if (!cast<IntegerType>(xType.getElementType()).isUnsigned())
      return reason = "the activations are int8, not uint8", failure();
    // Weights quantized at run time from a constant: quantized now.
    std::optional<std::vector<char>> computed;
    if (!matchPattern(w->quantized, m_Constant()))
      computed = quantizedConstant(w->quantized);
    if (wType.getRank() != 2 ||
        cast<IntegerType>(wType.getElementType()).isUnsigned() ||
        (!computed && !matchPattern(w->quantized, m_Constant())))
      return reason = "the weights are not a constant int8 matrix", failure();
    if (!xType.hasStaticShape() || xType.getRank() < 2)
      return reason = "the activations have run-time dims", failure();
    if (w->zeroPoint && !isZeroConstant(w->zeroPoint))
      return reason = "the weights' zero point is not 0", failure();
    std::optional<double> xScale = uniformConstant(x->scale);
    std::optional<double> xZero =
        x->zeroPoint ? uniformConstant(x->zeroPoint) : 0.0;
    if (!xScale || !xZero || *xZero != std::round(*xZero) || *xZero < 0 ||
        *xZero > 255)
      return reason = "the activations' scale or zero point is not one "
                      "constant",
             failure();
    int64_t k = wType.getDimSize(transposed ? 1 : 0);
    int64_t n = wType.getDimSize(transposed ? 0 : 1);
    // The byte products sum over k, so only a scale per column (or one)
    // factors out: [N] or [1, N] on [K, N] weights, [N, 1] on transB ones.
    auto scaleShape = cast<RankedTensorType>(w->scale.getType()).getShape();
    int64_t scaleCount = 1;
    for (int64_t d : scaleShape)
      scaleCount *= d;
    bool perColumn =
        transposed
            ? scaleShape.size() == 2 && scaleShape[0] == n && scaleShape[1] == 1
            : !scaleShape.empty() && scaleShape.back() == n && scaleCount == n;
    if (scaleCount != 1 && !perColumn)
      return reason = "the weights' scale varies along the reduced dim",
             failure();
    if (k % 4 != 0)
      return reason = "the reduced dim is not a multiple of 4 (VNNI quads)",
             failure();
    std::optional<std::vector<float>> wScale = constantFloats(w->scale, n);
    if (!wScale)
      return reason = "the weights' scale is not a constant per column",
             failure();

    Location loc = op.getLoc();
    b.setInsertionPoint(op);
    Value weights = w->quantized;
    if (computed && !transposed)
      weights = ConstantOp::create(
          b, loc, bytesToConstant(wType, "int8_weights", *computed));
    if (transposed) {
      ElementsAttr attr;
      std::optional<std::vector<char>> bytes = computed;
      if (!bytes && matchPattern(weights, m_Constant(&attr)))
        bytes = constantBytes(attr);
      if (!bytes)
        return reason = "the weights' bytes cannot be read", failure();
      std::vector<char> t(bytes->size());
      for (int64_t r = 0; r < k; ++r)
        for (int64_t c = 0; c < n; ++c)
          t[r * n + c] = (*bytes)[c * k + r];
      weights = ConstantOp::create(
          b, loc,
          bytesToConstant(RankedTensorType::get({k, n}, wType.getElementType()),
                          "int8_weights", t));
    }
    auto product = QuantizedMatMulOp::create(
        b, loc, x->quantized, weights, b.getI64IntegerAttr(int64_t(*xZero)));
    std::vector<float> scale(n);
    for (int64_t c = 0; c < n; ++c)
      scale[c] = float(*xScale * double((*wScale)[c]));
    auto scaleType = RankedTensorType::get({n}, b.getF32Type());
    Value scaleConst = ConstantOp::create(
        b, loc, DenseElementsAttr::get(scaleType, ArrayRef<float>(scale)));
    return MulOp::create(b, loc, resultType, product, scaleConst).getResult();
  }

  void runOnOperation() override {
    SmallVector<MatMulOp> candidates;
    getOperation().walk([&](MatMulOp op) { candidates.push_back(op); });
    OpBuilder b(&getContext());
    for (MatMulOp op : candidates) {
      std::string reason;
      std::string at = onnxNodeName(op.getLoc());
      FailureOr<Value> fused = rewrite(b, op, reason);
      if (failed(fused)) {
        if (!reason.empty())
          KILN_LOG("fusion", Info)
              << "not fusing int8 matmul at '" << at << "': " << reason << "\n";
        continue;
      }
      op.getResult().replaceAllUsesWith(*fused);
      op->erase();
      report::count("int8_kernels");
      KILN_LOG("fusion", Info)
          << "fused int8 matmul at '" << at << "' (uint8 x int8, VNNI)\n";
    }
  }
};
} // namespace
