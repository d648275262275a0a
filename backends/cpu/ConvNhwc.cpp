//===- ConvNhwc.cpp - conv_2d_nhwc_hwcf as a direct convolution -----------===//
//
// An NHWC convolution is the contraction
//
//   out[b, p, f] += sum_{kh, kw, c} in[b, y(p)*sh + kh*dh, x(p)*sw + kw*dw, c]
//                                   * W[kh, kw, c, f]
//
// with M = output pixels p = (y, x), N = filters, K = KH*KW*C in (kh, kw, c)
// order. The filter is the B operand: packed at compile time into nr-lane
// panels [ceil(F/nr)][K][nr], like any constant B of kiln-tile-contractions.
// The input is A, read in place (viewed as [N, H, W*C]): for a tap (kh, kw)
// the K block is the C contiguous floats of one input pixel, and with unit
// horizontal dilation the KW taps of a filter row are one run of KW*C
// contiguous floats, so row r of a register tile only needs the address of
// its pixel for the current filter row (no im2col). Padding comes from a
// tensor.pad producer, read like any other input.
//
//   scf.forall (b, M/MC, panels/NCP)               -> thread pool
//     scf.for K blocks                              TB runs or 1/split run ~ KC
//       scf.for m step mr                           register-tile rows
//         pixel (y_r, x_r) of each row r
//         scf.for panel                             register-tile columns
//           %c_r = vector.transfer_read out[r, panel*nr]
//           scf.for run in block: row iy_r = y_r*sh + kh*dh,
//                                 column ix_r = (x_r*sw + kw*dw) * C
//             scf.for j < run: %b = vector.transfer_read Wp[panel, k0 + j]
//                              %c_r = fma(bcast(in[b, iy_r, ix_r + j]), %b)
//           vector.transfer_write %c_r
//
// Rows past the last pixel repeat the last valid row (as in MicroKernel.cpp);
// columns past F are masked. The batch, height and width may be run-time
// extents (an image of any size): the pixel tasks are then cut at run time
// (MC from the pixel count), the packed filter is the same. A fill or bias init
// seeds the first K block (NhwcInit.cpp); a fused epilogue is applied to the
// rows on the last K block before their store (EpilogueTiles.cpp).
//
//===----------------------------------------------------------------------===//
#include "backends/cpu/NhwcCodegen.h"

#include "passes/graph/ConstantBytes.h"

#include "dialects/kiln/QuantizedContraction.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::kiln;

namespace {
/// How an NHWC convolution's work is cut: register tiles of `mr` pixels,
/// thread-pool tasks of `mc` pixels (a multiple of mr) by `pc` filter panels.
struct NhwcSplit {
  int64_t mr, mc, pc;
};

/// Tasks of one image the work is cut into, at least (see splitNhwcWork).
constexpr int64_t kMinTasks = 8;

/// The pool runs a task range as equal contiguous runs, one per thread, so
/// tasks should cost the same and be many (about kMinTasks: with 4 tasks
/// on 2 threads one late thread doubles the time). The register tile takes
/// the height in [mr - 2, mr] that costs least counting the rows computed
/// twice past the last pixel (7x7 = 49 pixels: 7 tiles of 7, not 7 of 8
/// with 7 rows computed twice). Pixel tiles are as
/// many as MC asks for, rounded up to a divisor of the row-tile count, so
/// all have the same height (unless that divisor is far more tiles). Below
/// kMinTasks the filter panels are split first (every task still reads each
/// weight once per pixel tile), then the pixels. Panel groups divide the panel
/// count, so they are equal too.
NhwcSplit splitNhwcWork(int64_t m, int64_t panels, int64_t batch,
                        const ContractionTileSizes &tiles) {
  // A k step of an h-row tile issues h broadcasts, 2 B loads and 2h FMAs,
  // and rows past the last pixel repeat it: cost ~ rows computed x (h+2)/h.
  auto cost = [&](int64_t h) {
    return static_cast<double>(llvm::alignTo(m, h)) * (h + 2) / h;
  };
  int64_t mr = std::min(tiles.mr, m);
  for (int64_t h = mr - 1; h >= std::max<int64_t>(1, tiles.mr - 2); --h)
    if (cost(h) < cost(mr))
      mr = h;
  int64_t rowTiles = llvm::divideCeil(m, mr);
  // The smallest divisor of rowTiles that is at least `want`; `want` itself
  // (tiles one row tile apart in height) when that divisor is more than
  // twice as many tiles and 8 more (2813 = 29 x 97 row tiles must not become
  // 2813 tasks of one row tile, each streaming all the filters; 25 row tiles
  // still become 5 tiles rather than 2).
  auto divisorAtLeast = [&](int64_t want) {
    want = std::clamp<int64_t>(want, 1, rowTiles);
    int64_t d = want;
    while (rowTiles % d)
      ++d;
    return d > std::max(2 * want, want + 8) ? want : d;
  };
  int64_t mTiles = divisorAtLeast(llvm::divideCeil(m, std::max(tiles.mc, mr)));
  // Panel groups of equal size too: pc divides the panel count.
  auto divisorAtMost = [&](int64_t want) {
    int64_t d = std::clamp<int64_t>(want, 1, panels);
    while (panels % d)
      --d;
    return d;
  };
  int64_t pc = divisorAtMost(tiles.nc / tiles.nr);
  auto tasks = [&] { return batch * mTiles * (panels / pc); };
  while (tasks() < kMinTasks && pc > 1)
    pc = divisorAtMost(pc - 1);
  while (tasks() < kMinTasks && mTiles < rowTiles)
    mTiles = divisorAtLeast(mTiles + 1);
  return {mr, (int64_t)llvm::divideCeil(rowTiles, mTiles) * mr, pc};
}

/// The filter [KH, KW, C, F] as panels [ceil(F/nr)][KH*KW*C][nr], zero past F;
/// an int8 one as k-quads [ceil(F/nr)][KH*KW*C/4][nr*4] for vpdpbusd (lane
/// l of quad q holds k = 4q .. 4q+3 of filter l).
Value packFilter(OpBuilder &b, Location loc, arith::ConstantOp filter,
                 int64_t nr) {
  std::optional<std::vector<char>> bytes =
      constantBytes(cast<ElementsAttr>(filter.getValue()));
  if (!bytes)
    return Value();
  ArrayRef<int64_t> shape = cast<RankedTensorType>(filter.getType()).getShape();
  int64_t k = shape[0] * shape[1] * shape[2], f = shape[3];
  int64_t panels = llvm::divideCeil(f, nr);
  if (cast<RankedTensorType>(filter.getType()).getElementType().isInteger(8)) {
    std::vector<char> packed(panels * k * nr, 0);
    for (int64_t p = 0; p < panels; ++p)
      for (int64_t kk = 0; kk < k; ++kk)
        for (int64_t lane = 0; lane < nr && p * nr + lane < f; ++lane)
          packed[((p * (k / 4) + kk / 4) * nr + lane) * 4 + kk % 4] =
              (*bytes)[kk * f + p * nr + lane];
    auto type = RankedTensorType::get({panels, k / 4, nr * 4}, b.getI8Type());
    return arith::ConstantOp::create(
        b, loc, type,
        cast<TypedAttr>(bytesToConstant(type, "packed_filter", packed)));
  }
  std::vector<char> packed(panels * k * nr * sizeof(float), 0);
  const auto *src = reinterpret_cast<const float *>(bytes->data());
  auto *dst = reinterpret_cast<float *>(packed.data());
  for (int64_t p = 0; p < panels; ++p)
    for (int64_t kk = 0; kk < k; ++kk)
      for (int64_t lane = 0; lane < nr && p * nr + lane < f; ++lane)
        dst[(p * k + kk) * nr + lane] = src[kk * f + p * nr + lane];
  auto type = RankedTensorType::get({panels, k, nr}, b.getF32Type());
  return arith::ConstantOp::create(
      b, loc, type,
      cast<TypedAttr>(bytesToConstant(type, "packed_filter", packed)));
}

/// The pixel count the work is split for when it is known only at run
/// time (56 x 56: register tiles of full height, panel groups as for a
/// large image; the pixel tasks are then cut from the real count).
constexpr int64_t kNominalPixels = 56 * 56;

/// Extents of the convolution; batch, h, w, oh and ow may be dynamic.
struct ConvShape {
  int64_t batch, h, w, c, kh, kw, f, oh, ow;
  int64_t sh, sw, dh, dw;
};

ConvShape convShape(Value input, arith::ConstantOp filter, Value init,
                    ArrayRef<int64_t> strides, ArrayRef<int64_t> dilations) {
  ArrayRef<int64_t> in = cast<RankedTensorType>(input.getType()).getShape();
  ArrayRef<int64_t> fs = cast<RankedTensorType>(filter.getType()).getShape();
  ArrayRef<int64_t> out = cast<RankedTensorType>(init.getType()).getShape();
  return {in[0],      in[1],        in[2],       in[3],  fs[0],
          fs[1],      fs[3],        out[1],      out[2], strides[0],
          strides[1], dilations[0], dilations[1]};
}

LogicalResult tileDirect(RewriterBase &rewriter, Operation *conv, Value input,
                         arith::ConstantOp filter, Value init,
                         const ConvShape &s, const ContractionTileSizes &tiles,
                         const Epilogue *epilogue);
} // namespace

bool mlir::kiln::isDirectNhwcConvolution(linalg::Conv2DNhwcHwcfOp conv) {
  return hasNhwcKernelOperands(conv) &&
         conv.getInputs()[1].getDefiningOp<arith::ConstantOp>();
}

LogicalResult mlir::kiln::tileNhwcConvolution(RewriterBase &rewriter,
                                              linalg::Conv2DNhwcHwcfOp conv,
                                              const ContractionTileSizes &tiles,
                                              const Epilogue *epilogue) {
  if (!isDirectNhwcConvolution(conv))
    return failure();
  Value input = conv.getInputs()[0], init = conv.getOutputs()[0];
  auto filter = conv.getInputs()[1].getDefiningOp<arith::ConstantOp>();
  SmallVector<int64_t> strides(conv.getStrides().getValues<int64_t>());
  SmallVector<int64_t> dilations(conv.getDilations().getValues<int64_t>());
  return tileDirect(rewriter, conv, input, filter, init,
                    convShape(input, filter, init, strides, dilations), tiles,
                    epilogue);
}

bool mlir::kiln::isInt8NhwcConvolution(Operation *op) {
  auto generic = dyn_cast<linalg::GenericOp>(op);
  if (!generic || !generic.hasPureTensorSemantics() ||
      !generic->hasAttr(kInt8ConvAttr))
    return false;
  auto unsignedInput = generic->getAttrOfType<BoolAttr>(kInt8ContractionAttr);
  auto shaped = [](Value v) { return cast<RankedTensorType>(v.getType()); };
  Value input = generic.getDpsInputs()[0];
  auto filter = generic.getDpsInputs()[1].getDefiningOp<arith::ConstantOp>();
  return unsignedInput && unsignedInput.getValue() && filter &&
         shaped(input).hasStaticShape() &&
         shaped(generic.getDpsInits()[0]).hasStaticShape() &&
         shaped(input).getDimSize(3) % 4 == 0;
}

LogicalResult mlir::kiln::tileInt8NhwcConvolution(
    RewriterBase &rewriter, linalg::GenericOp conv,
    const ContractionTileSizes &tiles, const Epilogue *epilogue) {
  if (!isInt8NhwcConvolution(conv) || tiles.nr % 16 != 0)
    return failure();
  ArrayRef<int64_t> window =
      conv->getAttrOfType<DenseI64ArrayAttr>(kInt8ConvAttr).asArrayRef();
  Value input = conv.getDpsInputs()[0], init = conv.getDpsInits()[0];
  auto filter = conv.getDpsInputs()[1].getDefiningOp<arith::ConstantOp>();
  // Blocks of 4x the f32 K: the same filter bytes per block, i32 sums of
  // at most 4096 products of 255 x 128 by default; at most 32768 bytes
  // whatever `tile-k` asks (32768 x 32640 < 2^31).
  ContractionTileSizes quads = tiles;
  quads.kc = std::min<int64_t>(4 * tiles.kc, 32768);
  return tileDirect(rewriter, conv, input, filter, init,
                    convShape(input, filter, init, window.take_front(2),
                              window.drop_front(2)),
                    quads, epilogue);
}

namespace {
/// One k-quad step of the int8 kernel: for each row r, the 4 input bytes at
/// (batch, iy[r], ix[r]) as one i32 in every lane, times the panel's quad
/// `kq` (nr lanes of 4 bytes) with vpdpbusd into the row's nr/16 i32 halves.
SmallVector<Value> quadStep(OpBuilder &b, Location loc, Value packed,
                            Value panel, Value kq, Value imageRows, Value batch,
                            ArrayRef<Value> iy, ArrayRef<Value> ix,
                            ValueRange sums, int64_t nr) {
  Type i8 = b.getI8Type(), i32 = b.getI32Type();
  Value c0 = arith::ConstantIndexOp::create(b, loc, 0);
  Value zero = arith::ConstantOp::create(b, loc, i8, b.getZeroAttr(i8));
  auto bytes64 = VectorType::get({64}, i8);
  auto i32x16 = VectorType::get({16}, i32);
  Value bRow = vector::TransferReadOp::create(
      b, loc, VectorType::get({4 * nr}, i8), packed, ValueRange{panel, kq, c0},
      zero, ArrayRef<bool>{true});
  SmallVector<Value> bHalves;
  for (int64_t h = 0; h < nr / 16; ++h)
    bHalves.push_back(vector::ExtractStridedSliceOp::create(
        b, loc, bRow, ArrayRef<int64_t>{64 * h}, ArrayRef<int64_t>{64},
        ArrayRef<int64_t>{1}));
  SmallVector<Value> next;
  for (size_t r = 0; r < iy.size(); ++r) {
    Value quad = vector::TransferReadOp::create(
        b, loc, VectorType::get({4}, i8), imageRows,
        ValueRange{batch, iy[r], ix[r]}, zero, ArrayRef<bool>{true});
    Value bits =
        vector::BitCastOp::create(b, loc, VectorType::get({1}, i32), quad);
    Value a = vector::BitCastOp::create(
        b, loc, bytes64, vector::BroadcastOp::create(b, loc, i32x16, bits));
    for (int64_t h = 0; h < nr / 16; ++h)
      next.push_back(LLVM::CallIntrinsicOp::create(
                         b, loc, i32x16,
                         b.getStringAttr("llvm.x86.avx512.vpdpbusd.512"),
                         ValueRange{sums[r * (nr / 16) + h], a, bHalves[h]})
                         ->getResult(0));
  }
  return next;
}

/// The f32 rows plus their i32 sums (nr/16 halves of 16 lanes per row).
SmallVector<Value> addSums(OpBuilder &b, Location loc, ValueRange rows,
                           ValueRange sums, int64_t nr) {
  auto f32x16 = VectorType::get({16}, b.getF32Type());
  SmallVector<Value> out;
  for (auto [r, row] : llvm::enumerate(rows)) {
    Value acc = row;
    for (int64_t h = 0; h < nr / 16; ++h) {
      Value before = vector::ExtractStridedSliceOp::create(
          b, loc, acc, ArrayRef<int64_t>{16 * h}, ArrayRef<int64_t>{16},
          ArrayRef<int64_t>{1});
      Value sum = arith::AddFOp::create(
          b, loc, before,
          arith::SIToFPOp::create(b, loc, f32x16, sums[r * (nr / 16) + h]));
      acc = vector::InsertStridedSliceOp::create(
          b, loc, sum, acc, ArrayRef<int64_t>{16 * h}, ArrayRef<int64_t>{1});
    }
    out.push_back(acc);
  }
  return out;
}

/// The direct convolution of ConvNhwc.cpp's header: f32 FMAs, or for an
/// int8 filter (uint8 input) vpdpbusd over k-quads into i32 sums that are
/// added to the f32 rows after each K block.
LogicalResult tileDirect(RewriterBase &rewriter, Operation *conv, Value input,
                         arith::ConstantOp filter, Value init,
                         const ConvShape &s, const ContractionTileSizes &tiles,
                         const Epilogue *epilogue) {
  auto outType = cast<RankedTensorType>(init.getType());
  bool int8 =
      cast<RankedTensorType>(filter.getType()).getElementType().isInteger(8);
  Location loc = conv->getLoc();
  rewriter.setInsertionPoint(conv);
  int64_t nr = tiles.nr;
  Value packed = packFilter(rewriter, loc, filter, nr);
  if (!packed)
    return failure();

  // The input as [N, H, W*C]: with unit horizontal dilation the KW taps of
  // one filter row are KW*C contiguous floats, one K run; else each tap is
  // a run of C.
  bool rowRuns = s.dw == 1;
  int64_t run = rowRuns ? s.kw * s.c : s.c;
  int64_t taps = rowRuns ? s.kh : s.kh * s.kw;
  int64_t panels = llvm::divideCeil(s.f, nr);
  bool staticPixels =
      !ShapedType::isDynamic(s.oh) && !ShapedType::isDynamic(s.ow);
  int64_t batchCost = ShapedType::isDynamic(s.batch) ? 1 : s.batch;
  NhwcSplit work = splitNhwcWork(staticPixels ? s.oh * s.ow : kNominalPixels,
                                 panels, batchCost, tiles);
  int64_t mr = work.mr, pc = work.pc;
  // K blocks of about KC: several whole runs, or one run split in `split`
  // chunks (KC = 1024, a 3x3 filter over 512 channels: runs of 1536 in 2
  // chunks).
  int64_t tapBlock = std::clamp<int64_t>(tiles.kc / run, 1, taps);
  int64_t split = llvm::divideCeil(run, tiles.kc);
  int64_t chunk = llvm::alignTo(llvm::divideCeil(run, split), int8 ? 4 : 1);
  int64_t numBlocks =
      split > 1 ? taps * split : llvm::divideCeil(taps, tapBlock);
  bool fullColumns = s.f % nr == 0;

  Type f32 = rewriter.getF32Type();
  auto rowType = VectorType::get({nr}, f32);
  SmallVector<ReassociationIndices> pixels = {{0}, {1, 2}, {3}};
  Value imageRows = tensor::CollapseShapeOp::create(
      rewriter, loc, input,
      SmallVector<ReassociationIndices>{{0}, {1}, {2, 3}});
  // A fill or bias init: the first K block starts from its values instead.
  std::optional<SeededInit> seeded = seededInit(init);
  Value dest = seeded ? seeded->dest : init;
  Value flatInit = tensor::CollapseShapeOp::create(rewriter, loc, dest, pixels);

  // The batch and the output's height and width, run-time ones read from
  // the destination; pixel tasks of mc pixels.
  IndexMath top{rewriter, loc};
  auto extent = [&](int64_t d) {
    return tensor::getMixedSize(rewriter, loc, dest, d);
  };
  OpFoldResult batches = extent(0), outH = extent(1), outW = extent(2);
  Value ow = getValueOrCreateConstantIndexOp(rewriter, loc, outW);
  Value m, mc = top.cst(work.mc);
  OpFoldResult mTasks;
  if (staticPixels) {
    m = top.cst(s.oh * s.ow);
    mTasks = rewriter.getIndexAttr(llvm::divideCeil(s.oh * s.ow, work.mc));
  } else {
    // About kMinTasks tasks (one image), whole register tiles, at most the
    // nominal image's MC pixels each.
    m = arith::MulIOp::create(
        rewriter, loc, getValueOrCreateConstantIndexOp(rewriter, loc, outH),
        ow);
    int64_t want = std::max<int64_t>(
        1, llvm::divideCeil(kMinTasks, llvm::divideCeil(panels, pc)));
    Value perTask = arith::CeilDivUIOp::create(rewriter, loc, m, top.cst(want));
    Value tiled = top.mul(
        arith::CeilDivUIOp::create(rewriter, loc, perTask, top.cst(mr)), mr);
    mc = arith::MaxUIOp::create(rewriter, loc, top.min(tiled, mc), top.cst(mr));
    mTasks = arith::CeilDivUIOp::create(rewriter, loc, m, mc).getResult();
  }
  int64_t groups = llvm::divideCeil(panels, pc);
  // Over a run-time image the pixel tasks and panel groups are one forall
  // dim (task = pixel task * groups + group): the thread pool splits the
  // leading dims of a run-time size, and a third dim would run serially in
  // each of them.
  SmallVector<OpFoldResult> bounds = {batches, mTasks,
                                      rewriter.getIndexAttr(groups)};
  if (!staticPixels)
    bounds = {batches,
              top.mul(getValueOrCreateConstantIndexOp(rewriter, loc, mTasks),
                      groups)};
  auto forall = scf::ForallOp::create(rewriter, loc, bounds,
                                      ValueRange{flatInit}, std::nullopt);
  rewriter.setInsertionPoint(forall.getTerminator());
  IndexMath im{rewriter, loc};
  Value batch = forall.getInductionVar(0);
  Value mIndex = forall.getInductionVar(1), group;
  if (staticPixels) {
    group = forall.getInductionVar(2);
  } else {
    group = im.rem(mIndex, groups);
    mIndex = im.div(mIndex, groups);
  }
  Value m0 = arith::MulIOp::create(rewriter, loc, mIndex, mc);
  Value p0 = im.mul(group, pc);
  Value mSize = im.min(mc, arith::SubIOp::create(rewriter, loc, m, m0));
  Value pSize = im.min(
      im.cst(pc), arith::SubIOp::create(rewriter, loc, im.cst(panels), p0));
  Value col0 = im.mul(p0, nr);
  Value colSize =
      im.min(im.mul(pSize, nr),
             arith::SubIOp::create(rewriter, loc, im.cst(s.f), col0));
  Value shared = forall.getRegionIterArgs()[0];
  Value c0 = im.cst(0), c1 = im.cst(1);
  SmallVector<OpFoldResult> offsets = {batch, m0, col0};
  SmallVector<OpFoldResult> sizes = {rewriter.getIndexAttr(1), mSize, colSize};
  SmallVector<OpFoldResult> unit(3, rewriter.getIndexAttr(1));
  auto tileType =
      RankedTensorType::get({ShapedType::kDynamic, ShapedType::kDynamic}, f32);
  Value tile = tensor::ExtractSliceOp::create(rewriter, loc, tileType, shared,
                                              offsets, sizes, unit);
  Value zero = arith::ConstantOp::create(rewriter, loc, f32,
                                         rewriter.getF32FloatAttr(0));
  auto i32x16 = VectorType::get({16}, rewriter.getI32Type());
  Value zeroSums = arith::ConstantOp::create(rewriter, loc, i32x16,
                                             rewriter.getZeroAttr(i32x16));
  Value lastRow = arith::SubIOp::create(rewriter, loc, mSize, c1);

  auto blocks = scf::ForOp::create(
      rewriter, loc, c0, im.cst(numBlocks), c1, ValueRange{tile},
      [&](OpBuilder &b, Location loc, Value block, ValueRange blockAcc) {
        IndexMath im{b, loc};
        // Runs [tap0, tapEnd), each from jBegin to jEnd.
        Value tap0, tapEnd, jBegin = c0, jEnd = im.cst(run);
        if (split > 1) {
          tap0 = im.div(block, split);
          tapEnd = im.add(tap0, c1);
          jBegin = im.mul(im.rem(block, split), chunk);
          jEnd = im.min(im.add(jBegin, im.cst(chunk)), jEnd);
        } else {
          tap0 = im.mul(block, tapBlock);
          tapEnd = im.min(im.add(tap0, im.cst(tapBlock)), im.cst(taps));
        }
        auto rowLoop = scf::ForOp::create(
            b, loc, c0, mSize, im.cst(mr), blockAcc,
            [&](OpBuilder &b, Location loc, Value r0, ValueRange rowAcc) {
              IndexMath im{b, loc};
              // Row r: the r-th pixel of the tile, or the last valid one.
              SmallVector<Value> rows, ys, xs;
              for (int64_t r = 0; r < mr; ++r) {
                Value row = im.min(im.add(r0, im.cst(r)), lastRow);
                Value pixel = im.add(m0, row);
                rows.push_back(row);
                ys.push_back(
                    im.mul(arith::DivUIOp::create(b, loc, pixel, ow), s.sh));
                xs.push_back(im.mul(arith::RemUIOp::create(b, loc, pixel, ow),
                                    s.sw * s.c));
              }
              auto panelLoop = scf::ForOp::create(
                  b, loc, c0, pSize, c1, rowAcc,
                  [&](OpBuilder &b, Location loc, Value pp,
                      ValueRange panelAcc) {
                    IndexMath im{b, loc};
                    Value col = im.mul(pp, nr);
                    Value panel = im.add(p0, pp);
                    auto readAccs = [&](OpBuilder &b, Location loc) {
                      SmallVector<Value> accs;
                      for (Value row : rows)
                        accs.push_back(vector::TransferReadOp::create(
                            b, loc, rowType, panelAcc[0], ValueRange{row, col},
                            zero, ArrayRef<bool>{fullColumns}));
                      return accs;
                    };
                    SmallVector<Value> accs;
                    if (seeded) {
                      // The first K block starts from the fill value or bias.
                      Value first = arith::CmpIOp::create(
                          b, loc, arith::CmpIPredicate::eq, block, c0);
                      auto init = scf::IfOp::create(
                          b, loc, first,
                          [&](OpBuilder &b, Location loc) {
                            Value channel =
                                arith::AddIOp::create(b, loc, col0, col);
                            Value seed = seeded->seed(b, loc, rowType, channel,
                                                      fullColumns);
                            scf::YieldOp::create(b, loc,
                                                 SmallVector<Value>(mr, seed));
                          },
                          [&](OpBuilder &b, Location loc) {
                            scf::YieldOp::create(b, loc, readAccs(b, loc));
                          });
                      accs.append(init.getResults().begin(),
                                  init.getResults().end());
                    } else {
                      accs = readAccs(b, loc);
                    }
                    // int8: i32 sums from zero, added to the rows below.
                    SmallVector<Value> sums =
                        int8 ? SmallVector<Value>(mr * (nr / 16), zeroSums)
                             : accs;
                    auto tapLoop = scf::ForOp::create(
                        b, loc, tap0, tapEnd, c1, sums,
                        [&](OpBuilder &b, Location loc, Value tap,
                            ValueRange tapAcc) {
                          IndexMath im{b, loc};
                          Value ky = rowRuns ? im.mul(tap, s.dh)
                                             : im.mul(im.div(tap, s.kw), s.dh);
                          Value kx =
                              rowRuns ? c0
                                      : im.mul(im.rem(tap, s.kw), s.dw * s.c);
                          Value k0 = im.mul(tap, run);
                          SmallVector<Value> iy, ix;
                          for (int64_t r = 0; r < mr; ++r) {
                            iy.push_back(im.add(ys[r], ky));
                            ix.push_back(im.add(xs[r], kx));
                          }
                          auto cLoop = scf::ForOp::create(
                              b, loc, jBegin, jEnd, int8 ? im.cst(4) : c1,
                              tapAcc,
                              [&](OpBuilder &b, Location loc, Value ch,
                                  ValueRange acc) {
                                Value k = arith::AddIOp::create(b, loc, k0, ch);
                                if (int8) {
                                  SmallVector<Value> at;
                                  for (int64_t r = 0; r < mr; ++r)
                                    at.push_back(arith::AddIOp::create(
                                        b, loc, ix[r], ch));
                                  scf::YieldOp::create(
                                      b, loc,
                                      quadStep(b, loc, packed, panel,
                                               IndexMath{b, loc}.div(k, 4),
                                               imageRows, batch, iy, at, acc,
                                               nr));
                                  return;
                                }
                                Value bRow = vector::TransferReadOp::create(
                                    b, loc, rowType, packed,
                                    ValueRange{panel, k, c0}, zero,
                                    ArrayRef<bool>{true});
                                SmallVector<Value> next;
                                for (int64_t r = 0; r < mr; ++r) {
                                  Value a = tensor::ExtractOp::create(
                                      b, loc, imageRows,
                                      ValueRange{batch, iy[r],
                                                 arith::AddIOp::create(
                                                     b, loc, ix[r], ch)});
                                  Value splat = vector::BroadcastOp::create(
                                      b, loc, rowType, a);
                                  next.push_back(vector::FMAOp::create(
                                      b, loc, splat, bRow, acc[r]));
                                }
                                scf::YieldOp::create(b, loc, next);
                              });
                          scf::YieldOp::create(b, loc, cLoop.getResults());
                        });
                    SmallVector<Value> results(tapLoop.getResults());
                    if (int8)
                      results = addSums(b, loc, accs, results, nr);
                    // Repeated rows store the same values again.
                    auto store = [&](OpBuilder &b, Location loc,
                                     ValueRange values) {
                      return writeRows(b, loc, panelAcc[0], rows, values, col,
                                       fullColumns);
                    };
                    if (!epilogue) {
                      scf::YieldOp::create(b, loc, store(b, loc, results));
                      return;
                    }
                    // The last K block stores the consumer's values.
                    auto finish = [&](OpBuilder &b, Location loc) {
                      IndexMath im{b, loc};
                      Value channel = im.add(col0, col);
                      SmallVector<Value> values;
                      for (auto [row, acc] : llvm::zip_equal(rows, results)) {
                        Value pixel = im.add(m0, row);
                        Value coords[] = {
                            batch, arith::DivUIOp::create(b, loc, pixel, ow),
                            arith::RemUIOp::create(b, loc, pixel, ow), channel};
                        values.push_back(
                            applyEpilogue(b, loc, *epilogue, acc, coords, nr));
                      }
                      return store(b, loc, values);
                    };
                    if (numBlocks == 1) {
                      scf::YieldOp::create(b, loc, finish(b, loc));
                      return;
                    }
                    Value last =
                        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                              block, im.cst(numBlocks - 1));
                    auto stored = scf::IfOp::create(
                        b, loc, last,
                        [&](OpBuilder &b, Location loc) {
                          scf::YieldOp::create(b, loc, finish(b, loc));
                        },
                        [&](OpBuilder &b, Location loc) {
                          scf::YieldOp::create(b, loc, store(b, loc, results));
                        });
                    scf::YieldOp::create(b, loc, stored.getResults());
                  });
              scf::YieldOp::create(b, loc, panelLoop.getResults());
            });
        scf::YieldOp::create(b, loc, rowLoop.getResults());
      });

  rewriter.setInsertionPointToStart(forall.getTerminator().getBody());
  tensor::ParallelInsertSliceOp::create(rewriter, loc, blocks.getResult(0),
                                        shared, offsets, sizes, unit);
  rewriter.setInsertionPointAfter(forall);
  Value result = tensor::ExpandShapeOp::create(
      rewriter, loc, outType, forall.getResult(0), pixels,
      ArrayRef<OpFoldResult>{batches, outH, outW, rewriter.getIndexAttr(s.f)});
  rewriter.replaceOp(conv, result);
  if (seeded)
    seeded->eraseIfUnused(rewriter, init);
  return success();
}
} // namespace
