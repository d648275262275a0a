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
#include "passes/fusion/QuantizedFusion.h"
#include "passes/graph/ConstantBytes.h"

#include "dialects/kiln/KilnOps.h"
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

/// A QuantizeLinear of constant f32 weights [K, N] to int8 (what
/// onnxruntime's quantizer leaves for weights it shares), as the importer
/// composes it: cast(clip(where(isnan, lo, round(w / scale) [+ 0]))), the
/// scale one or one per column. Returns the int8 values, computed as those
/// ops would.
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
  // NaN -> the lowest value: where(x == x, x, lo) (never NaN here).
  if (auto nanCheck = x.getDefiningOp<WhereOp>()) {
    auto equal = nanCheck.getCondition().getDefiningOp<EqualOp>();
    std::optional<double> fill = uniformConstant(nanCheck.getY());
    if (!equal || equal.getLhs() != equal.getRhs() ||
        equal.getLhs() != nanCheck.getX() || !fill ||
        *fill != clip.getMin()->convertToDouble())
      return std::nullopt;
    x = nanCheck.getX();
  }
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
      values[r * n + c] =
          char(std::isnan(v) ? lo : std::clamp<double>(v, lo, hi));
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
    FailureOr<ActivationQuantization> xq = activationQuantization(*x, reason);
    if (failed(xq))
      return failure();
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
        b, loc, x->quantized, weights, b.getI64IntegerAttr(xq->zeroPoint));
    std::vector<float> scale(n);
    for (int64_t c = 0; c < n; ++c)
      scale[c] = float(xq->scale * double((*wScale)[c]));
    auto scaleType = RankedTensorType::get({n}, b.getF32Type());
    Value scaleConst = ConstantOp::create(
        b, loc, DenseElementsAttr::get(scaleType, ArrayRef<float>(scale)));
    return MulOp::create(b, loc, resultType, product, scaleConst).getResult();
  }

  void runOnOperation() override {
    fuseQuantized<MatMulOp>(
        getOperation(), "matmul",
        [&](OpBuilder &b, MatMulOp op, std::string &reason) {
          return rewrite(b, op, reason);
        });
  }
};
} // namespace
