//===- WinogradNhwc.cpp - 3x3 NHWC convolutions by Winograd F(m, 3) -------===//
//
// A 3x3, stride-1 convolution computes each m x m block of outputs from the
// (m+2) x (m+2) input tile d under it. Winograd's minimal filtering
// (Lavin & Gray's F(m x m, 3 x 3), alpha = m + 2) writes that block as
//
//   Y = A^T [ (G g G^T) .* (B^T d B) ] A
//
// so the 9 m^2 products per channel and filter become alpha^2 (F(4x4, 3x3):
// 36 instead of 144, F(2x2, 3x3): 16 instead of 36). Summed over the
// channels, the alpha^2 element-wise products are alpha^2 independent
// matmuls over T = N * ceil(OH/m) * ceil(OW/m) tiles:
//
//   U[ab] = G g G^T                   [alpha^2, C, F]  at compile time
//   V[ab][t][c] = (B^T d_t,c B)[ab]   [alpha^2, T, C]  input transform
//   M[ab] = V[ab] x U[ab]             [alpha^2, T, F]  linalg.batch_matmul
//   out[tile t] = A^T M[.., t, f] A   (+ init, epilogue)  output transform
//
// The two transforms are scf.forall loops over the tiles with the channels
// (filters) in vector lanes, their sparse matrices unrolled into adds,
// subtracts and FMAs by constants; the batch matmul is left to
// kiln-tile-contractions' register tiles. The input is read through a zero
// tensor.pad grown (or added) so that the last tiles' rows and columns exist;
// output positions past OH x OW are not written. A fill or bias init seeds
// the output transform (NhwcInit.cpp), and a matched epilogue is applied to
// each output vector before its store, as in the direct kernel.
//
//===----------------------------------------------------------------------===//
#include "backends/cpu/NhwcCodegen.h"

#include "compiler/logging/Report.h"
#include "passes/graph/ConstantBytes.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::kiln;

namespace {
// Cook-Toom matrices. F(4x4, 3x3) interpolates at 0, -1, 1, 2, -1/2 and
// infinity rather than Lavin & Gray's 0, +-1, +-2 ("Fast Algorithms for
// Convolutional Neural Networks", 2016): in f32 over 96 channels that cuts
// the largest error about 4x (2.2e-4 -> 5.2e-5 on outputs of up to 29), for
// 4 more terms in B^T (Barabasz et al., "Error Analysis and Improving the
// Accuracy of Winograd Convolution", 2020, on the choice of points).
// F(2x2, 3x3) is Lavin's, at 0, +-1. Row-major: B^T alpha x alpha, G
// alpha x 3, A^T m x alpha.
constexpr double kBT4[] = {1, 1.5,  -2,   -1.5, 1,    0, //
                           0, 1,    0.5,  -2.5, 1,    0, //
                           0, -1,   -2.5, -0.5, 1,    0, //
                           0, -0.5, -1,   0.5,  1,    0, //
                           0, 2,    -1,   -2,   1,    0, //
                           0, 1,    1.5,  -2,   -1.5, 1};
constexpr double kG4[] = {1,          0,        0,         //
                          1.0 / 3,    -1.0 / 3, 1.0 / 3,   //
                          -1.0 / 3,   -1.0 / 3, -1.0 / 3,  //
                          1.0 / 15,   2.0 / 15, 4.0 / 15,  //
                          -16.0 / 15, 8.0 / 15, -4.0 / 15, //
                          0,          0,        1};
constexpr double kAT4[] = {1, 1,  1, 1, 1,      0, //
                           0, -1, 1, 2, -0.5,   0, //
                           0, 1,  1, 4, 0.25,   0, //
                           0, -1, 1, 8, -0.125, 1};
constexpr double kBT2[] = {1, 0, -1, 0, 0, 1, 1, 0, 0, -1, 1, 0, 0, 1, 0, -1};
constexpr double kG2[] = {1, 0, 0, 0.5, 0.5, 0.5, 0.5, -0.5, 0.5, 0, 0, 1};
constexpr double kAT2[] = {1, 1, 1, 0, 0, 1, -1, -1};

struct Matrices {
  int64_t m, alpha;
  ArrayRef<double> bt, g, at;
};

Matrices matrices(int64_t m) {
  if (m == 4)
    return {4, 6, kBT4, kG4, kAT4};
  return {2, 4, kBT2, kG2, kAT2};
}

/// Batch, channels, filters, output rows and columns, tile rows and columns.
struct Shape {
  int64_t n, c, f, oh, ow, th, tw;
  int64_t tiles() const { return n * th * tw; }
};

/// sum_i coeffs[i] * values[i] over the nonzero coefficients: +-1 as adds and
/// subtracts, others as FMAs with a splat constant.
Value combine(OpBuilder &b, Location loc, ArrayRef<double> coeffs,
              ArrayRef<Value> values, VectorType type) {
  auto splat = [&](double c) -> Value {
    return arith::ConstantOp::create(
        b, loc, type,
        DenseElementsAttr::get(type, b.getF32FloatAttr(static_cast<float>(c))));
  };
  // Start from a +1 term when there is one (no negation).
  size_t first = llvm::find(coeffs, 1.0) - coeffs.begin();
  Value acc = first < coeffs.size() ? values[first] : Value();
  for (size_t i = 0; i < coeffs.size(); ++i) {
    double c = coeffs[i];
    Value v = values[i];
    if (c == 0 || i == first)
      continue;
    if (!acc) {
      acc = c == -1 ? Value(arith::NegFOp::create(b, loc, v))
                    : Value(arith::MulFOp::create(b, loc, splat(c), v));
      continue;
    }
    if (c == 1)
      acc = arith::AddFOp::create(b, loc, acc, v);
    else if (c == -1)
      acc = arith::SubFOp::create(b, loc, acc, v);
    else
      acc = vector::FMAOp::create(b, loc, splat(c), v, acc);
  }
  return acc ? acc : splat(0);
}

/// mat (rows x k) * tile (k x k) * mat^T, on vectors: rows x rows values.
SmallVector<Value> sandwich(OpBuilder &b, Location loc, ArrayRef<double> mat,
                            int64_t rows, int64_t k, ArrayRef<Value> tile,
                            VectorType type) {
  SmallVector<Value> left(rows * k), out(rows * rows);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < k; ++j) {
      SmallVector<Value> column;
      for (int64_t i = 0; i < k; ++i)
        column.push_back(tile[i * k + j]);
      left[r * k + j] = combine(b, loc, mat.slice(r * k, k), column, type);
    }
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < rows; ++c)
      out[r * rows + c] = combine(b, loc, mat.slice(c * k, k),
                                  ArrayRef<Value>(left).slice(r * k, k), type);
  return out;
}

/// U = G g G^T for every (channel, filter) of the HWCF filter, as
/// [alpha^2, C, F] (computed in double).
Value transformFilter(OpBuilder &b, Location loc, arith::ConstantOp filter,
                      const Shape &s, const Matrices &w) {
  std::optional<std::vector<char>> bytes =
      constantBytes(cast<ElementsAttr>(filter.getValue()));
  if (!bytes)
    return Value();
  const auto *g = reinterpret_cast<const float *>(bytes->data());
  int64_t alpha = w.alpha, cf = s.c * s.f;
  std::vector<char> out(alpha * alpha * cf * sizeof(float));
  auto *u = reinterpret_cast<float *>(out.data());
  std::vector<double> left(alpha * 3);
  for (int64_t x = 0; x < cf; ++x) {
    for (int64_t a = 0; a < alpha; ++a)
      for (int64_t l = 0; l < 3; ++l) {
        double sum = 0;
        for (int64_t k = 0; k < 3; ++k)
          sum += w.g[a * 3 + k] * g[(k * 3 + l) * cf + x];
        left[a * 3 + l] = sum;
      }
    for (int64_t a = 0; a < alpha; ++a)
      for (int64_t c = 0; c < alpha; ++c) {
        double sum = 0;
        for (int64_t l = 0; l < 3; ++l)
          sum += left[a * 3 + l] * w.g[c * 3 + l];
        u[(a * alpha + c) * cf + x] = static_cast<float>(sum);
      }
  }
  auto type = RankedTensorType::get({alpha * alpha, s.c, s.f}, b.getF32Type());
  return arith::ConstantOp::create(
      b, loc, type,
      cast<TypedAttr>(bytesToConstant(type, "winograd_filter", out)));
}

/// The input with at least `rows` x `cols` pixels: a zero tensor.pad
/// producer grown at its high end, else a new pad (nothing when it is large
/// enough already).
Value padForTiles(OpBuilder &b, Location loc, Value input, int64_t rows,
                  int64_t cols) {
  auto type = cast<RankedTensorType>(input.getType());
  int64_t moreRows = std::max<int64_t>(0, rows - type.getDimSize(1));
  int64_t moreCols = std::max<int64_t>(0, cols - type.getDimSize(2));
  if (!moreRows && !moreCols)
    return input;
  Value source = input;
  SmallVector<int64_t> low(4, 0), high(4, 0);
  auto pad = input.getDefiningOp<tensor::PadOp>();
  Value padValue = pad ? pad.getConstantPaddingValue() : Value();
  if (pad && padValue && matchPattern(padValue, m_PosZeroFloat()) &&
      !ShapedType::isDynamicShape(pad.getStaticLow()) &&
      !ShapedType::isDynamicShape(pad.getStaticHigh())) {
    source = pad.getSource();
    low.assign(pad.getStaticLow().begin(), pad.getStaticLow().end());
    high.assign(pad.getStaticHigh().begin(), pad.getStaticHigh().end());
  }
  high[1] += moreRows;
  high[2] += moreCols;
  SmallVector<int64_t> shape(type.getShape());
  shape[1] += moreRows;
  shape[2] += moreCols;
  auto indexAttrs = [&](ArrayRef<int64_t> v) {
    return llvm::map_to_vector(
        v, [&](int64_t x) -> OpFoldResult { return b.getIndexAttr(x); });
  };
  Value zero =
      arith::ConstantOp::create(b, loc, b.getF32Type(), b.getF32FloatAttr(0));
  return tensor::PadOp::create(
      b, loc, RankedTensorType::get(shape, type.getElementType()), source,
      indexAttrs(low), indexAttrs(high), zero);
}

/// An scf.forall over (batch, tile row, tile column) with one shared output.
struct TileLoop {
  scf::ForallOp forall;
  Value n, th, tw, tile; ///< tile = (n * TH + th) * TW + tw
};

TileLoop tileLoop(OpBuilder &b, Location loc, const Shape &s, Value shared) {
  SmallVector<OpFoldResult> bounds = {b.getIndexAttr(s.n), b.getIndexAttr(s.th),
                                      b.getIndexAttr(s.tw)};
  auto forall =
      scf::ForallOp::create(b, loc, bounds, ValueRange{shared}, std::nullopt);
  b.setInsertionPoint(forall.getTerminator());
  IndexMath im{b, loc};
  Value n = forall.getInductionVar(0), th = forall.getInductionVar(1),
        tw = forall.getInductionVar(2);
  Value tile = im.add(im.mul(im.add(im.mul(n, s.th), th), s.tw), tw);
  return {forall, n, th, tw, tile};
}

/// V[ab][t][c] = (B^T d B)[ab] for each tile t and channel vector c.
Value transformInput(OpBuilder &b, Location loc, Value input, const Shape &s,
                     const Matrices &w, int64_t lanes) {
  Type f32 = b.getF32Type();
  int64_t alpha = w.alpha, a2 = alpha * alpha;
  Value empty = tensor::EmptyOp::create(
      b, loc, ArrayRef<int64_t>{a2, s.tiles(), s.c}, f32);
  OpBuilder::InsertionGuard guard(b);
  TileLoop loop = tileLoop(b, loc, s, empty);
  IndexMath im{b, loc};
  Value shared = loop.forall.getRegionIterArgs()[0];
  SmallVector<OpFoldResult> offsets = {b.getIndexAttr(0), loop.tile,
                                       b.getIndexAttr(0)};
  SmallVector<OpFoldResult> sizes = {b.getIndexAttr(a2), b.getIndexAttr(1),
                                     b.getIndexAttr(s.c)};
  SmallVector<OpFoldResult> unit(3, b.getIndexAttr(1));
  auto sliceType = RankedTensorType::get({a2, s.c}, f32);
  Value slice = tensor::ExtractSliceOp::create(b, loc, sliceType, shared,
                                               offsets, sizes, unit);
  Value y0 = im.mul(loop.th, w.m), x0 = im.mul(loop.tw, w.m);
  auto type = VectorType::get({lanes}, f32);
  bool inBounds = s.c % lanes == 0;
  Value zero = arith::ConstantOp::create(b, loc, f32, b.getF32FloatAttr(0));
  auto channels = scf::ForOp::create(
      b, loc, im.cst(0), im.cst(s.c), im.cst(lanes), ValueRange{slice},
      [&](OpBuilder &b, Location loc, Value c, ValueRange acc) {
        IndexMath im{b, loc};
        SmallVector<Value> d;
        for (int64_t i = 0; i < alpha; ++i)
          for (int64_t j = 0; j < alpha; ++j)
            d.push_back(vector::TransferReadOp::create(
                b, loc, type, input,
                ValueRange{loop.n, im.add(y0, im.cst(i)), im.add(x0, im.cst(j)),
                           c},
                zero, ArrayRef<bool>{inBounds}));
        SmallVector<Value> v = sandwich(b, loc, w.bt, alpha, alpha, d, type);
        Value out = acc[0];
        for (int64_t ab = 0; ab < a2; ++ab)
          out = vector::TransferWriteOp::create(b, loc, v[ab], out,
                                                ValueRange{im.cst(ab), c},
                                                ArrayRef<bool>{inBounds})
                    .getResult();
        scf::YieldOp::create(b, loc, out);
      });
  b.setInsertionPointToStart(loop.forall.getTerminator().getBody());
  tensor::ParallelInsertSliceOp::create(b, loc, channels.getResult(0), shared,
                                        offsets, sizes, unit);
  return loop.forall.getResult(0);
}

/// out[n, y0 + i, x0 + j, f] = init + (A^T M[.., t, f] A)[i][j], through the
/// epilogue; positions past the output are skipped.
Value transformOutput(OpBuilder &b, Location loc, Value product, Value dest,
                      const std::optional<SeededInit> &seeded,
                      const Epilogue *epilogue, const Shape &s,
                      const Matrices &w, int64_t lanes) {
  Type f32 = b.getF32Type();
  int64_t alpha = w.alpha, m = w.m;
  OpBuilder::InsertionGuard guard(b);
  TileLoop loop = tileLoop(b, loc, s, dest);
  IndexMath im{b, loc};
  Value shared = loop.forall.getRegionIterArgs()[0];
  Value y0 = im.mul(loop.th, m), x0 = im.mul(loop.tw, m);
  // This tile's rows and columns of the output.
  auto extent = [&](Value start, int64_t size) -> OpFoldResult {
    if (size % m == 0)
      return b.getIndexAttr(m);
    return im.min(
        im.cst(m),
        arith::SubIOp::create(b, loc, im.cst(size), start).getResult());
  };
  OpFoldResult rows = extent(y0, s.oh), cols = extent(x0, s.ow);
  SmallVector<OpFoldResult> offsets = {loop.n, y0, x0, b.getIndexAttr(0)};
  SmallVector<OpFoldResult> sizes = {b.getIndexAttr(1), rows, cols,
                                     b.getIndexAttr(s.f)};
  SmallVector<OpFoldResult> unit(4, b.getIndexAttr(1));
  SmallVector<int64_t> sliceShape = {s.oh % m ? ShapedType::kDynamic : m,
                                     s.ow % m ? ShapedType::kDynamic : m, s.f};
  Value slice = tensor::ExtractSliceOp::create(
      b, loc, RankedTensorType::get(sliceShape, f32), shared, offsets, sizes,
      unit);
  auto type = VectorType::get({lanes}, f32);
  bool inBounds = s.f % lanes == 0;
  Value zero = arith::ConstantOp::create(b, loc, f32, b.getF32FloatAttr(0));
  // A zero fill adds nothing.
  bool addSeed = seeded && !(seeded->fillValue &&
                             matchPattern(seeded->fillValue, m_PosZeroFloat()));
  auto filters = scf::ForOp::create(
      b, loc, im.cst(0), im.cst(s.f), im.cst(lanes), ValueRange{slice},
      [&](OpBuilder &b, Location loc, Value f, ValueRange acc) {
        IndexMath im{b, loc};
        SmallVector<Value> prod;
        for (int64_t ab = 0; ab < alpha * alpha; ++ab)
          prod.push_back(vector::TransferReadOp::create(
              b, loc, type, product, ValueRange{im.cst(ab), loop.tile, f}, zero,
              ArrayRef<bool>{inBounds}));
        SmallVector<Value> y = sandwich(b, loc, w.at, m, alpha, prod, type);
        Value seed =
            addSeed ? seeded->seed(b, loc, type, f, inBounds) : Value();
        Value out = acc[0];
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < m; ++j) {
            auto store = [&](OpBuilder &b, Location loc) -> Value {
              IndexMath im{b, loc};
              Value at[] = {im.cst(i), im.cst(j), f};
              Value value = y[i * m + j];
              if (seed)
                value = arith::AddFOp::create(b, loc, value, seed);
              else if (!seeded)
                value = arith::AddFOp::create(
                    b, loc, value,
                    vector::TransferReadOp::create(b, loc, type, out, at, zero,
                                                   ArrayRef<bool>{inBounds}));
              if (epilogue) {
                Value coords[] = {loop.n, im.add(y0, im.cst(i)),
                                  im.add(x0, im.cst(j)), f};
                value = applyEpilogue(b, loc, *epilogue, value, coords, lanes);
              }
              return vector::TransferWriteOp::create(b, loc, value, out, at,
                                                     ArrayRef<bool>{inBounds})
                  .getResult();
            };
            // Positions that are past the output in the last tiles.
            Value inside;
            auto within = [&](int64_t pos, int64_t size, OpFoldResult count) {
              if (size % m == 0 || pos < size % m)
                return;
              Value ok =
                  arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                        im.cst(pos), cast<Value>(count));
              inside = inside ? arith::AndIOp::create(b, loc, inside, ok) : ok;
            };
            within(i, s.oh, rows);
            within(j, s.ow, cols);
            if (!inside) {
              out = store(b, loc);
              continue;
            }
            Value before = out;
            out = scf::IfOp::create(
                      b, loc, inside,
                      [&](OpBuilder &b, Location loc) {
                        scf::YieldOp::create(b, loc, store(b, loc));
                      },
                      [&](OpBuilder &b, Location loc) {
                        scf::YieldOp::create(b, loc, before);
                      })
                      .getResult(0);
          }
        scf::YieldOp::create(b, loc, out);
      });
  b.setInsertionPointToStart(loop.forall.getTerminator().getBody());
  tensor::ParallelInsertSliceOp::create(b, loc, filters.getResult(0), shared,
                                        offsets, sizes, unit);
  return loop.forall.getResult(0);
}

Shape shapeOf(linalg::Conv2DNhwcHwcfOp conv, int64_t m) {
  auto dims = [](Value v) {
    return cast<RankedTensorType>(v.getType()).getShape();
  };
  ArrayRef<int64_t> in = dims(conv.getInputs()[0]),
                    out = dims(conv.getOutputs()[0]);
  return {in[0],
          in[3],
          out[3],
          out[1],
          out[2],
          (int64_t)llvm::divideCeil(out[1], m),
          (int64_t)llvm::divideCeil(out[2], m)};
}
} // namespace

bool mlir::kiln::isWinogradConvolution(linalg::Conv2DNhwcHwcfOp conv) {
  if (!conv.hasPureTensorSemantics() || !hasStaticF32Operands(conv) ||
      !conv.getInputs()[1].getDefiningOp<arith::ConstantOp>())
    return false;
  ArrayRef<int64_t> filter =
      cast<RankedTensorType>(conv.getInputs()[1].getType()).getShape();
  auto ones = [](DenseIntElementsAttr attr) {
    return llvm::all_of(attr.getValues<int64_t>(),
                        [](int64_t v) { return v == 1; });
  };
  return filter[0] == 3 && filter[1] == 3 && ones(conv.getStrides()) &&
         ones(conv.getDilations());
}

/// The cost model, in units of one flop at the matmul kernels' speed (on the
/// 2-core Zen 4 host: about 200 GFLOP/s for both the direct kernel and the
/// batch matmul, weights streamed at about 18 GB/s, i.e. 11 flops per
/// weight byte). Filters are vector lanes of nr-wide register tiles in
/// both kernels (F' = F rounded up to nr), channels are lanes of the
/// transforms (C' = C rounded up to `lanes`):
///   direct:    18 C F' P                     (P = N OH OW outputs)
///   F(m, 3):   2 a^2 C F' T / eff(T)         the batch matmul, T tiles;
///                                            eff = T / T rounded up to mr
///            + 44 a^2 C F                    the transformed filter, read
///                                            once per run (a^2 / 9 times
///                                            the direct kernel's bytes)
///            + 16 a^2 T (C' + F'')           the two transforms (about 8
///                                            vector ops per point and lane
///                                            group, 32 flops each; F''
///                                            rounded up to `lanes`)
/// Measured per layer (two 3x3 convolutions with bias and ReLU, 2 threads;
/// direct / F(2x2) / F(4x4), ms): 56x56x64 b1 2.22 / 1.39 / 0.92, 28x28x128
/// b1 2.25 / 1.09 / 0.75, 14x14x256 b1 4.16 / 1.17 / 1.13, 7x7x512 b1
/// 2.30 / 3.35 / 4.72 (4 tiles: the 38 MB transformed filter dominates),
/// 7x7x512 b8 16.8 / 11.6 / 9.4. The model picks the fastest in each.
/// Fewer channels than one vector stay direct: their transforms work on
/// mostly empty lanes (and a transposed convolution's zero-inserted input,
/// exactly 0 through the direct kernel, would come out as rounding noise).
int64_t mlir::kiln::winogradTileSize(linalg::Conv2DNhwcHwcfOp conv, int64_t mr,
                                     int64_t nr, int64_t lanes) {
  if (!isWinogradConvolution(conv))
    return 0;
  Shape s = shapeOf(conv, 1);
  if (s.c < lanes || s.f < lanes)
    return 0;
  double c = static_cast<double>(s.c);
  double cLanes = static_cast<double>(llvm::alignTo(s.c, lanes));
  double fLanes = static_cast<double>(llvm::alignTo(s.f, lanes));
  double fPanels = static_cast<double>(llvm::alignTo(s.f, nr));
  double best = 18.0 * c * fPanels * s.n * s.oh * s.ow;
  int64_t choice = 0;
  for (int64_t m : {2, 4}) {
    Shape t = shapeOf(conv, m);
    double a2 = (m + 2) * (m + 2), tiles = static_cast<double>(t.tiles());
    double eff = tiles / static_cast<double>(llvm::alignTo(t.tiles(), mr));
    double cost = 2 * a2 * c * fPanels * tiles / eff + 44 * a2 * c * s.f +
                  16 * a2 * tiles * (cLanes + fLanes);
    if (cost < best)
      best = cost, choice = m;
  }
  return choice;
}

LogicalResult mlir::kiln::winogradNhwcConvolution(RewriterBase &rewriter,
                                                  linalg::Conv2DNhwcHwcfOp conv,
                                                  int64_t m, int64_t lanes,
                                                  const Epilogue *epilogue) {
  if ((m != 2 && m != 4) || !isWinogradConvolution(conv))
    return failure();
  Matrices w = matrices(m);
  Shape s = shapeOf(conv, m);
  Location loc = conv.getLoc();
  rewriter.setInsertionPoint(conv);
  auto filter = conv.getInputs()[1].getDefiningOp<arith::ConstantOp>();
  Value u = transformFilter(rewriter, loc, filter, s, w);
  if (!u)
    return failure();
  Value input = padForTiles(rewriter, loc, conv.getInputs()[0], s.th * m + 2,
                            s.tw * m + 2);
  Value v = transformInput(rewriter, loc, input, s, w, lanes);
  Type f32 = rewriter.getF32Type();
  auto productType =
      RankedTensorType::get({w.alpha * w.alpha, s.tiles(), s.f}, f32);
  Value zero = arith::ConstantOp::create(rewriter, loc, f32,
                                         rewriter.getF32FloatAttr(0));
  Value empty =
      tensor::EmptyOp::create(rewriter, loc, productType.getShape(), f32);
  Value filled = linalg::FillOp::create(rewriter, loc, zero, empty).result();
  Value product =
      linalg::BatchMatmulOp::create(rewriter, loc, TypeRange{productType},
                                    ValueRange{v, u}, ValueRange{filled})
          .getResult(0);
  Value init = conv.getOutputs()[0];
  std::optional<SeededInit> seeded = seededInit(init);
  Value result =
      transformOutput(rewriter, loc, product, seeded ? seeded->dest : init,
                      seeded, epilogue, s, w, lanes);
  rewriter.replaceOp(conv, result);
  if (seeded)
    seeded->eraseIfUnused(rewriter, init);
  report::count("winograd_convolutions");
  return success();
}
