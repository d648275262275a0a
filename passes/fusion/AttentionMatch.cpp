//===- AttentionMatch.cpp - Recognizing decomposed attention --------------===//
//
// Walks back from the MatMul with the values:
//
//   MatMul(Softmax_last(mask?(scale?(MatMul(q', k^T')))), v)
//
// where the scale is Div/Mul by a constant (or q' = q*c and k^T' = k^T*c, as
// the scaled_dot_product_attention export does), and the mask is Add of a
// float tensor or Where(cond, scores, fill) / Where(cond, fill, scores) with
// a fill of -inf or a huge negative number. Constants may arrive as small
// expressions (SDPA computes 1/sqrt(sqrt(D)) from Shape), so scalars are
// evaluated here rather than relying on folders.
//
//===----------------------------------------------------------------------===//
#include "passes/fusion/AttentionMatch.h"
#include "passes/fusion/UniformConstant.h"

#include "passes/graph/ConstantBytes.h"

#include "mlir/IR/Matchers.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>

using namespace mlir;
using namespace mlir::kiln;

namespace {

// A Where fill at or below this acts like an additive -inf: in f32, a score
// under 32 in magnitude added to it rounds back to the fill itself.
constexpr double kMaskFillLimit = -1e9;
// Constant masks larger than this are not scanned for a causal triangle.
constexpr int64_t kMaxScannedMask = 1 << 24;
// A symbolic mask's function of (i, j) is checked on a square this large.
constexpr int64_t kCausalSample = 64;

RankedTensorType tensorType(Value v) {
  return cast<RankedTensorType>(v.getType());
}

std::string shapeText(Value v) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "[";
  llvm::interleaveComma(tensorType(v).getShape(), os, [&](int64_t d) {
    if (ShapedType::isDynamic(d))
      os << "?";
    else
      os << d;
  });
  os << "]";
  return s;
}

std::string nameOf(Value v) {
  if (Operation *op = v.getDefiningOp())
    return "'" + onnxNodeName(op->getLoc()) + "'";
  return "a graph input";
}

bool isMaskFill(double x) { return x <= kMaskFillLimit; }

bool hasOneUse(Value v) { return v.hasOneUse(); }

/// Classifies a constant mask aligned to scores [B..., Sq, Sk]: true if every
/// [Sq, Sk] slice keeps exactly the keys j <= i (causal, top-left aligned).
/// `keptAt(e)` says whether flat element e keeps its key; nullopt = neither
/// clearly kept nor masked.
bool isCausalTriangle(ArrayRef<int64_t> maskShape, int64_t sq, int64_t sk,
                      function_ref<std::optional<bool>(int64_t)> keptAt) {
  // Symbolic Sq and Sk (the mask built from `seq`, as exports do): a
  // function of (i, j) from trilu, equal, where and not is causal for every
  // extent if it is on a square larger than any diagonal offset it keeps.
  // (maskIsCausal then passes Sq = Sk = kCausalSample.)
  if (maskShape.size() >= 2 && ShapedType::isDynamic(maskShape.end()[-2]) &&
      ShapedType::isDynamic(maskShape.back()) && sq == kCausalSample &&
      sk == kCausalSample) {
    SmallVector<int64_t> sample(maskShape.size(), 1);
    sample.end()[-2] = sample.back() = kCausalSample;
    return isCausalTriangle(sample, sq, sk, keptAt);
  }
  if (maskShape.size() < 2 || maskShape.end()[-2] != sq ||
      maskShape.back() != sk || sq < 2)
    return false;
  int64_t count = 1;
  for (int64_t d : maskShape)
    count *= d;
  if (count > kMaxScannedMask)
    return false;
  for (int64_t e = 0; e < count; ++e) {
    int64_t i = (e / sk) % sq, j = e % sk;
    std::optional<bool> kept = keptAt(e);
    if (!kept || *kept != (j <= i))
      return false;
  }
  return true;
}

/// Element (i, j) of the last two dims of a value computed from uniform
/// constants through trilu, equal and where (torch's causal SDPA export:
/// `where(trilu(ones) == 0, -inf, 0)`), resolved once into a function of
/// (i, j); null if `v` is anything else.
using TriangleFn = std::function<double(int64_t, int64_t)>;

/// A constant [1..., R, C] mask that is a triangle: one value on and below
/// the diagonal, another above it, everywhere; its (i, j) function (NaN
/// outside it). Null for anything else.
TriangleFn constantTriangle(Value v) {
  DenseElementsAttr values;
  if (!matchPattern(v, m_Constant(&values)) || values.isSplat() ||
      values.getNumElements() > kMaxScannedMask)
    return nullptr;
  auto shape = tensorType(v).getShape();
  if (shape.size() < 2 ||
      llvm::any_of(shape.drop_back(2), [](int64_t d) { return d != 1; }))
    return nullptr;
  int64_t rows = shape.end()[-2], cols = shape.back();
  auto table = std::make_shared<std::vector<double>>();
  Type et = values.getElementType();
  if (isa<FloatType>(et)) {
    for (const APFloat &x : values.getValues<APFloat>())
      table->push_back(x.convertToDouble());
  } else {
    for (const APInt &x : values.getValues<APInt>())
      table->push_back(et.isInteger(1) ? double(x.getZExtValue())
                                       : double(x.getSExtValue()));
  }
  double below = (*table)[0], above = cols > 1 ? (*table)[1] : below;
  if (below == above)
    return nullptr;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      if ((*table)[i * cols + j] != (j <= i ? below : above))
        return nullptr;
  return [=](int64_t i, int64_t j) {
    return i < rows && j < cols ? (*table)[i * cols + j]
                                : std::numeric_limits<double>::quiet_NaN();
  };
}
TriangleFn triangleFunction(Value v, int depth = 0) {
  if (depth > 8)
    return nullptr;
  if (std::optional<double> u = uniformConstant(v))
    return [x = *u](int64_t, int64_t) { return x; };
  Operation *op = v.getDefiningOp();
  if (auto trilu = dyn_cast_or_null<TriluOp>(op)) {
    std::optional<double> k = uniformConstant(trilu.getK());
    TriangleFn input = triangleFunction(trilu.getInput(), depth + 1);
    // Masks too large to scan are judged on a kCausalSample square, which
    // sees every diagonal only while |k| stays well inside it (a sliding
    // window of 63 keys would look causal on 64 x 64).
    if (!k || !input || std::abs(*k) >= kCausalSample / 2)
      return nullptr;
    bool upper = trilu.getUpper();
    int64_t diagonal = int64_t(*k);
    return [=](int64_t i, int64_t j) {
      bool keep = upper ? j - i >= diagonal : j - i <= diagonal;
      return keep ? input(i, j) : 0.0;
    };
  }
  // The top-left corner of a mask (GPT-2's `bias[:, :, :s, :s]` of a
  // registered triangle): the same function of (i, j).
  if (auto slice = dyn_cast_or_null<DynamicSliceOp>(op)) {
    DenseElementsAttr starts;
    if ((slice.getSteps() &&
         llvm::any_of(*slice.getSteps(), [](int64_t s) { return s != 1; })) ||
        !matchPattern(slice.getStarts(), m_Constant(&starts)) ||
        !llvm::all_of(starts.getValues<APInt>(),
                      [](const APInt &s) { return s.isZero(); }))
      return nullptr;
    return triangleFunction(slice.getInput(), depth + 1);
  }
  if (TriangleFn table = constantTriangle(v))
    return table;
  if (auto notOp = dyn_cast_or_null<NotOp>(op)) {
    TriangleFn a = triangleFunction(notOp.getInput(), depth + 1);
    if (!a)
      return nullptr;
    return [=](int64_t i, int64_t j) { return a(i, j) != 0.0 ? 0.0 : 1.0; };
  }
  if (auto equal = dyn_cast_or_null<EqualOp>(op)) {
    TriangleFn a = triangleFunction(equal.getLhs(), depth + 1);
    TriangleFn b = triangleFunction(equal.getRhs(), depth + 1);
    if (!a || !b)
      return nullptr;
    return [=](int64_t i, int64_t j) { return a(i, j) == b(i, j) ? 1.0 : 0.0; };
  }
  if (auto where = dyn_cast_or_null<WhereOp>(op)) {
    TriangleFn c = triangleFunction(where.getCondition(), depth + 1);
    TriangleFn a = triangleFunction(where.getX(), depth + 1);
    TriangleFn b = triangleFunction(where.getY(), depth + 1);
    if (!c || !a || !b)
      return nullptr;
    return [=](int64_t i, int64_t j) {
      return c(i, j) != 0.0 ? a(i, j) : b(i, j);
    };
  }
  return nullptr;
}

/// Causal detection for the two mask spellings, constant or computed from
/// constants through trilu/equal/where; false for runtime masks.
bool maskIsCausal(const AttentionMatch &m, int64_t sq, int64_t sk) {
  if (ShapedType::isDynamic(sq) && ShapedType::isDynamic(sk))
    sq = sk = kCausalSample;
  if (Value mask = m.additiveMask ? m.additiveMask : m.selectMask)
    if (!mask.getDefiningOp<ConstantOp>())
      if (TriangleFn f = triangleFunction(mask)) {
        // A mask computed from constants too large to scan ([16k, 16k] is
        // 2^28 elements) is a function of (i, j) like a symbolic one: causal
        // for its full square if on a sample square larger than any
        // diagonal offset it keeps.
        SmallVector<int64_t> shape(tensorType(mask).getShape());
        if (tensorType(mask).hasStaticShape() &&
            tensorType(mask).getNumElements() > kMaxScannedMask &&
            shape.size() >= 2 && shape.end()[-2] == sq && shape.back() == sk &&
            sq == sk &&
            llvm::all_of(ArrayRef(shape).drop_back(2),
                         [](int64_t d) { return d == 1; })) {
          sq = sk = kCausalSample;
          shape.end()[-2] = shape.back() = kCausalSample;
        }
        return isCausalTriangle(shape, sq, sk,
                                [&](int64_t e) -> std::optional<bool> {
                                  double x = f((e / sk) % sq, e % sk);
                                  if (m.selectMask)
                                    return (x != 0.0) == m.keepWhen;
                                  if (x == 0.0)
                                    return true;
                                  if (isMaskFill(x))
                                    return false;
                                  return std::nullopt;
                                });
      }
  ElementsAttr attr;
  if (m.additiveMask && matchPattern(m.additiveMask, m_Constant(&attr))) {
    auto type = tensorType(m.additiveMask);
    if (!type.getElementType().isF32())
      return false;
    auto bytes = constantBytes(attr);
    if (!bytes || bytes->size() != size_t(type.getNumElements()) * 4)
      return false;
    std::vector<float> values(type.getNumElements());
    std::memcpy(values.data(), bytes->data(), bytes->size());
    return isCausalTriangle(type.getShape(), sq, sk,
                            [&](int64_t e) -> std::optional<bool> {
                              if (values[e] == 0.0f)
                                return true;
                              if (isMaskFill(values[e]))
                                return false;
                              return std::nullopt;
                            });
  }
  if (m.selectMask && matchPattern(m.selectMask, m_Constant(&attr))) {
    auto dense = dyn_cast<DenseElementsAttr>(attr);
    if (!dense || dense.isSplat())
      return false;
    auto values = llvm::to_vector(dense.getValues<bool>());
    return isCausalTriangle(tensorType(m.selectMask).getShape(), sq, sk,
                            [&](int64_t e) -> std::optional<bool> {
                              return values[e] == m.keepWhen;
                            });
  }
  return false;
}

/// Whether `mask` broadcasts into `scores` without widening it.
bool broadcastsInto(Value mask, RankedTensorType scores) {
  auto type = tensorType(mask);
  if (type.getRank() > scores.getRank())
    return false;
  auto shape = broadcastShapes(scores.getShape(), type.getShape());
  return succeeded(shape) && ArrayRef<int64_t>(*shape) == scores.getShape();
}

/// Peels a Mul/Div by a uniform constant off `v`; multiplies it into scale.
/// On the scores (`required`), a Mul/Div by a runtime value is not attention
/// and fails with a reason; on q and k it is just how they were computed.
/// `sharedPositive`: `v` may have readers besides the one being matched
/// (torch's row guard comparing the scaled scores with -inf), which a
/// positive scale keeps true of the unscaled ones.
Value peelScale(Value v, double &scale, SmallVectorImpl<Operation *> &ops,
                std::string &reason, bool required,
                bool sharedPositive = false) {
  Operation *op = v.getDefiningOp();
  if (!isa_and_nonnull<MulOp, DivOp>(op) || (!hasOneUse(v) && !sharedPositive))
    return v;
  bool shared = !hasOneUse(v);
  Value lhs = op->getOperand(0), rhs = op->getOperand(1);
  // The constant factor and the other operand: x * c, x / c or c * x.
  std::optional<double> factor;
  Value other;
  if (auto c = uniformConstant(rhs); c && tensorType(lhs) == tensorType(v)) {
    factor = isa<DivOp>(op) ? 1.0 / *c : *c;
    other = lhs;
  } else if (auto c = uniformConstant(lhs);
             c && isa<MulOp>(op) && tensorType(rhs) == tensorType(v)) {
    factor = *c;
    other = rhs;
  }
  if (factor && (!shared || *factor > 0)) {
    scale *= *factor;
    ops.push_back(op);
    return other;
  }
  if (!required)
    return v;
  reason = factor ? llvm::formatv("the scale at '{0}' is not positive and "
                                  "torch's row guard also reads the scaled "
                                  "scores",
                                  onnxNodeName(op->getLoc()))
                        .str()
                  : llvm::formatv("the scale at '{0}' is not a compile-time "
                                  "constant",
                                  onnxNodeName(op->getLoc()))
                        .str();
  return Value();
}

/// Whether the score matmul's operands and the values agree on batch dims
/// (attention never broadcasts them) and the shapes chain: the head dims
/// too, exactly (MatMul's types let a run-time one meet a static one, which
/// only the matmul's own lowering checks).
bool shapesChain(Value q, Value kT, Value v, RankedTensorType scores) {
  auto qt = tensorType(q), kt = tensorType(kT), vt = tensorType(v);
  int64_t rank = scores.getRank();
  if (qt.getRank() != rank || kt.getRank() != rank || vt.getRank() != rank)
    return false;
  auto batch = scores.getShape().drop_back(2);
  return qt.getShape().drop_back(2) == batch &&
         kt.getShape().drop_back(2) == batch &&
         vt.getShape().drop_back(2) == batch &&
         vt.getShape().end()[-2] == kt.getShape().back() &&
         qt.getShape().back() == kt.getShape().end()[-2] &&
         isa<FloatType>(qt.getElementType());
}

} // namespace

FailureOr<AttentionMatch> mlir::kiln::matchAttention(MatMulOp output,
                                                     std::string &reason) {
  reason.clear();
  // torch's decomposition guards the probabilities against rows masked
  // everywhere; the guard's equal is the scores' one other reader.
  std::optional<RowGuard> guard = matchRowGuard(output.getLhs());
  auto softmax =
      guard ? guard->softmax : output.getLhs().getDefiningOp<SoftmaxOp>();
  if (!softmax)
    return failure();
  auto fail = [&](const Twine &why) {
    reason = why.str();
    return failure();
  };
  // The softmax input's readers: the softmax, and the guard's equal.
  auto onlyReaders = [&](Value v) {
    return llvm::all_of(v.getUsers(), [&](Operation *user) {
      return user == softmax.getOperation() ||
             (guard && user == guard->equal && v == softmax.getInput());
    });
  };
  AttentionMatch m;
  m.value = output.getRhs();
  m.ops.push_back(output);
  if (guard)
    m.ops.append(guard->ops);
  m.ops.push_back(softmax);
  auto probs = softmax.getType();
  if (int64_t(softmax.getAxis()) != probs.getRank() - 1)
    return fail(llvm::formatv("softmax over axis {0}, not the last (keys)",
                              softmax.getAxis()));
  if (!hasOneUse(softmax.getResult()))
    return fail("the softmax result has other users");

  // Optional mask.
  Value scores = softmax.getInput();
  std::string maskText = "none";
  if (auto add = scores.getDefiningOp<AddOp>(); add && onlyReaders(scores)) {
    // The scores side is the one that keeps the result's shape and comes
    // from a matmul through an optional scale.
    auto fromMatmul = [](Value v) {
      Operation *op = v.getDefiningOp();
      if (isa_and_nonnull<MulOp, DivOp>(op))
        op = op->getOperand(0).getDefiningOp();
      return isa_and_nonnull<MatMulOp>(op);
    };
    bool lhsScores = fromMatmul(add.getLhs());
    Value s = lhsScores ? add.getLhs() : add.getRhs();
    Value mask = lhsScores ? add.getRhs() : add.getLhs();
    if (tensorType(s) != add.getType() || !broadcastsInto(mask, add.getType()))
      return fail(llvm::formatv("the mask {0} at '{1}' widens the scores {2}",
                                shapeText(mask), onnxNodeName(add.getLoc()),
                                shapeText(s)));
    m.additiveMask = mask;
    m.ops.push_back(add);
    maskText = "additive " + shapeText(mask) + " from " + nameOf(mask);
    scores = s;
  } else if (auto where = scores.getDefiningOp<WhereOp>();
             where && onlyReaders(scores)) {
    std::optional<double> fillY = uniformConstant(where.getY());
    std::optional<double> fillX = uniformConstant(where.getX());
    Value s;
    if (fillY && isMaskFill(*fillY)) {
      s = where.getX(), m.keepWhen = true, m.fill = *fillY;
    } else if (fillX && isMaskFill(*fillX)) {
      s = where.getY(), m.keepWhen = false, m.fill = *fillX;
    } else {
      return fail(llvm::formatv("Where '{0}' does not select -inf (or below "
                                "-1e9) against the scores",
                                onnxNodeName(where.getLoc())));
    }
    Value cond = where.getCondition();
    if (tensorType(s) != where.getType() ||
        !broadcastsInto(cond, where.getType()))
      return fail(llvm::formatv("the mask {0} at '{1}' widens the scores {2}",
                                shapeText(cond), onnxNodeName(where.getLoc()),
                                shapeText(s)));
    m.selectMask = cond;
    m.ops.push_back(where);
    maskText = llvm::formatv("boolean {0} from {1} (masked when {2})",
                             shapeText(cond), nameOf(cond), !m.keepWhen);
    scores = s;
  }

  // Optional scale on the scores, then on q and k^T.
  // (Without a mask, the guard's equal reads the softmax input: scores
  // scaled after the product are read twice.)
  scores = peelScale(scores, m.scale, m.ops, reason, /*required=*/true,
                     /*sharedPositive=*/onlyReaders(scores));
  if (!scores)
    return failure();
  auto scoreMatmul = scores.getDefiningOp<MatMulOp>();
  if (!scoreMatmul)
    return fail(llvm::formatv(
        "the softmax input is not q @ k^T (found {0})",
        scores.getDefiningOp()
            ? scores.getDefiningOp()->getName().getStringRef().str()
            : std::string("a graph input")));
  if (!hasOneUse(scores) && !onlyReaders(scores))
    return fail("the scores have other users");
  m.ops.push_back(scoreMatmul);
  m.query = peelScale(scoreMatmul.getLhs(), m.scale, m.ops, reason,
                      /*required=*/false);
  if (!m.query)
    return failure();
  m.keyTransposed = peelScale(scoreMatmul.getRhs(), m.scale, m.ops, reason,
                              /*required=*/false);
  if (!m.keyTransposed)
    return failure();
  auto scoreType = scoreMatmul.getType();
  if (!shapesChain(m.query, m.keyTransposed, m.value, scoreType))
    return fail(llvm::formatv("shapes do not chain as attention: q {0}, k^T "
                              "{1}, v {2}",
                              shapeText(m.query), shapeText(m.keyTransposed),
                              shapeText(m.value)));
  if (m.additiveMask &&
      tensorType(m.additiveMask).getElementType() != scoreType.getElementType())
    return fail("the additive mask has another element type");

  int64_t sq = scoreType.getShape().end()[-2], sk = scoreType.getShape().back();
  if (maskIsCausal(m, sq, sk)) {
    m.causal = true;
    maskText = std::string(ShapedType::isDynamic(sq)
                               ? "causal (triangle over seq from "
                               : "causal (constant triangle from ") +
               nameOf(m.additiveMask ? m.additiveMask : m.selectMask) + ")";
  }

  // The guard turns rows masked everywhere into 0 where the plain softmax
  // gives NaN: kiln.attention's `zero_masked_rows`, needed only where a
  // mask other than the causal one (whose diagonal stays) could do it.
  if (guard && !m.causal && (m.additiveMask || m.selectMask)) {
    m.zeroMaskedRows = true;
    maskText += ", rows it masks everywhere 0 (torch's guard)";
  } else if (guard) {
    maskText += ", the guard against rows masked everywhere dropped (none "
                "can be)";
  }

  std::string names;
  for (Operation *op : llvm::reverse(m.ops))
    names += (names.empty() ? "'" : ", '") + onnxNodeName(op->getLoc()) + "'";
  m.summary = llvm::formatv("q {0}, k^T {1}, v {2}, scale {3}, mask {4}; "
                            "nodes {5}",
                            shapeText(m.query), shapeText(m.keyTransposed),
                            shapeText(m.value), m.scale, maskText, names);
  return m;
}

AttentionOp mlir::kiln::rewriteAttention(RewriterBase &rewriter,
                                         MatMulOp output,
                                         const AttentionMatch &m) {
  // The fused op keeps every matched node's location (the output's first,
  // so onnxNodeName still names it): the kernel report lists them all.
  SmallVector<Location> locs;
  for (Operation *op : m.ops)
    locs.push_back(op->getLoc());
  Location loc = FusedLoc::get(locs, rewriter.getStringAttr("Attention"),
                               rewriter.getContext());
  rewriter.setInsertionPoint(output);

  // k = swap-last-two(k^T), composed with the transpose that made k^T.
  int64_t rank = tensorType(m.keyTransposed).getRank();
  SmallVector<int64_t> perm = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  std::swap(perm[rank - 1], perm[rank - 2]);
  Value keySource = m.keyTransposed;
  if (auto t = keySource.getDefiningOp<TransposeOp>()) {
    SmallVector<int64_t> composed;
    for (int64_t p : perm)
      composed.push_back(t.getPerm()[p]);
    perm = composed;
    keySource = t.getInput();
  }
  Value key = keySource;
  if (!llvm::equal(perm, llvm::seq<int64_t>(0, rank)))
    key = TransposeOp::create(rewriter, m.keyTransposed.getLoc(), keySource,
                              rewriter.getDenseI64ArrayAttr(perm));

  Value mask;
  if (!m.causal && m.additiveMask) {
    mask = m.additiveMask;
  } else if (!m.causal && m.selectMask) {
    // keep ? 0 : fill, shaped like the boolean mask (not like the scores).
    Type element = tensorType(m.query).getElementType();
    auto scalar = RankedTensorType::get({}, element);
    Value zero = ConstantOp::create(
        rewriter, loc,
        DenseElementsAttr::get(scalar, rewriter.getFloatAttr(element, 0.0)));
    Value fill = ConstantOp::create(
        rewriter, loc,
        DenseElementsAttr::get(scalar, rewriter.getFloatAttr(element, m.fill)));
    mask = WhereOp::create(rewriter, loc, m.selectMask,
                           m.keepWhen ? zero : fill, m.keepWhen ? fill : zero);
  }
  auto attention = AttentionOp::create(
      rewriter, loc, m.query, key, m.value, mask,
      rewriter.getF64FloatAttr(m.scale), rewriter.getBoolAttr(m.causal),
      m.zeroMaskedRows ? rewriter.getUnitAttr() : UnitAttr());
  rewriter.replaceOp(output, attention.getResult());
  // Consumers before producers: m.ops runs from the output back.
  for (Operation *op : llvm::drop_begin(m.ops))
    if (op->use_empty())
      rewriter.eraseOp(op);
  if (Operation *t = m.keyTransposed.getDefiningOp())
    if (isa<TransposeOp>(t) && t->use_empty())
      rewriter.eraseOp(t);
  return attention;
}
