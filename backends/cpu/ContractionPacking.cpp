//===- ContractionPacking.cpp - B operands as nr-wide column panels -------===//
//
// The micro-kernel reads one nr-wide row of B per k step. In a row-major
// [K, N] matrix consecutive rows are N floats apart, so a K block of them
// maps to a handful of cache sets and misses (N = 2048: every row in the
// same L1 set). Panels [ceil(N/nr)][K][nr] make the k steps of one register
// tile contiguous. The N loop of the contraction splits into the panel index
// and the lane; the result is viewed as [.., M, ceil(N/nr), nr] (padded when
// nr does not divide N).
//
//   * constant B (weights): packed at compile time, the artifact holds the
//     panels; with --precision=bf16 in bf16, either [N/nr][K][nr] (converted
//     to f32 as loaded) or, for CPUs with AVX512-BF16, as k-pairs
//     [N/nr][K/2][nr][2] that vdpbf16ps multiplies with pairs of A (A is then
//     converted to a bf16 [M, K] first); the int8 weights of
//     kiln.quantized_matmul as k-quads [N/nr][K/4][nr][4] for vpdpbusd;
//   * convolutions: an im2col that writes panels directly (the column matrix
//     is B, the filter A), so NCHW results come out row-major per channel;
//     1x1 stride-1 convolutions read their input in place instead (its rows
//     of H*W pixels are B, no panels).
//
//===----------------------------------------------------------------------===//
#include "backends/cpu/ContractionCodegen.h"

#include "dialects/kiln/QuantizedContraction.h"
#include "passes/graph/ConstantBytes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

#include <cstring>

using namespace mlir;
using namespace mlir::kiln;

namespace {
using utils::IteratorType;

/// The value `init` is filled with, if it is a (reshaped) linalg.fill.
Value fillValue(Value init) {
  if (auto reshape = init.getDefiningOp<tensor::CollapseShapeOp>())
    init = reshape.getSrc();
  auto fill = init.getDefiningOp<linalg::FillOp>();
  return fill ? fill.getInputs()[0] : Value();
}

/// `init` [.., M, N] as [.., M, ceil(N/nr), nr] (a padded copy when nr does
/// not divide N; just a fill of the padded shape when `init` is a fill).
Value panelView(OpBuilder &b, Location loc, Value init, int64_t nr) {
  auto type = cast<RankedTensorType>(init.getType());
  SmallVector<int64_t> shape(type.getShape());
  int64_t n = shape.back(), panels = llvm::divideCeil(n, nr);
  if (n % nr != 0) {
    shape.back() = panels * nr;
    Value empty = tensor::EmptyOp::create(b, loc, shape, type.getElementType());
    Value value = fillValue(init);
    Value padding = value ? value
                          : arith::ConstantOp::create(
                                b, loc, b.getZeroAttr(type.getElementType()))
                                .getResult();
    Value filled = linalg::FillOp::create(b, loc, padding, empty).getResult(0);
    if (value) {
      init = filled;
    } else {
      SmallVector<OpFoldResult> offsets(shape.size(), b.getIndexAttr(0));
      SmallVector<OpFoldResult> sizes, strides(shape.size(), b.getIndexAttr(1));
      for (int64_t d : type.getShape())
        sizes.push_back(b.getIndexAttr(d));
      init = tensor::InsertSliceOp::create(b, loc, init, filled, offsets, sizes,
                                           strides);
    }
  }
  SmallVector<ReassociationIndices> groups;
  for (unsigned d = 0; d + 1 < shape.size(); ++d)
    groups.push_back({d});
  groups.push_back({unsigned(shape.size() - 1), unsigned(shape.size())});
  SmallVector<int64_t> panelShape(shape.begin(), shape.end() - 1);
  panelShape.append({panels, nr});
  return tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get(panelShape, type.getElementType()), init,
      groups);
}

/// The inverse of panelView for the contraction's result.
Value fromPanels(OpBuilder &b, Location loc, Value panels,
                 RankedTensorType resultType) {
  auto type = cast<RankedTensorType>(panels.getType());
  unsigned rank = type.getRank();
  SmallVector<ReassociationIndices> groups;
  for (unsigned d = 0; d + 2 < rank; ++d)
    groups.push_back({d});
  groups.push_back({rank - 2, rank - 1});
  SmallVector<int64_t> flat(type.getShape().drop_back(2));
  flat.push_back(type.getShape()[rank - 2] * type.getShape()[rank - 1]);
  Value result = tensor::CollapseShapeOp::create(
      b, loc, RankedTensorType::get(flat, type.getElementType()), panels,
      groups);
  if (flat.back() == resultType.getShape().back())
    return result;
  SmallVector<OpFoldResult> offsets(flat.size(), b.getIndexAttr(0));
  SmallVector<OpFoldResult> sizes, strides(flat.size(), b.getIndexAttr(1));
  for (int64_t d : resultType.getShape())
    sizes.push_back(b.getIndexAttr(d));
  return tensor::ExtractSliceOp::create(b, loc, resultType, result, offsets,
                                        sizes, strides);
}

/// acc += lhs * rhs over the given maps (f32 accumulator; bf16 operands are
/// extended; 8-bit ones multiplied in i32, `lhs` unsigned if `lhsUnsigned`).
linalg::GenericOp buildPackedGeneric(OpBuilder &b, Location loc, Value lhs,
                                     Value rhs, Value acc,
                                     ArrayRef<AffineMap> maps,
                                     ArrayRef<IteratorType> iterators,
                                     bool lhsUnsigned = false) {
  return linalg::GenericOp::create(
      b, loc, acc.getType(), ValueRange{lhs, rhs}, ValueRange{acc}, maps,
      iterators, [&](OpBuilder &b, Location loc, ValueRange args) {
        if (args[1].getType().isInteger(8)) {
          linalg::YieldOp::create(
              b, loc,
              ValueRange{int8MultiplyAdd(b, loc, args[0], args[1], args[2],
                                         lhsUnsigned)});
          return;
        }
        auto f32 = [&](Value x) {
          return x.getType().isF32()
                     ? x
                     : arith::ExtFOp::create(b, loc, b.getF32Type(), x)
                           .getResult();
        };
        Value product =
            arith::MulFOp::create(b, loc, f32(args[0]), f32(args[1]));
        linalg::YieldOp::create(
            b, loc,
            ValueRange{arith::AddFOp::create(b, loc, args[2], product)});
      });
}
/// `a` [M, K] or [K, M] (`map` says which, over loops (m, .., k)) as a bf16
/// [M, K]: the A operand of the k-pair contraction, whose pairs are then
/// adjacent.
Value bf16Rows(OpBuilder &b, Location loc, Value a, AffineMap map,
               unsigned mLoop) {
  auto type = cast<RankedTensorType>(a.getType());
  bool transposed = map.getResult(0) != getAffineDimExpr(mLoop, b.getContext());
  SmallVector<int64_t> shape(type.getShape());
  if (transposed)
    std::swap(shape[0], shape[1]);
  Value empty = tensor::EmptyOp::create(b, loc, shape, b.getBF16Type());
  MLIRContext *ctx = b.getContext();
  AffineMap id = AffineMap::getMultiDimIdentityMap(2, ctx);
  AffineMap in =
      transposed ? AffineMap::getPermutationMap(ArrayRef<unsigned>{1, 0}, ctx)
                 : id;
  return linalg::GenericOp::create(
             b, loc, empty.getType(), ValueRange{a}, ValueRange{empty},
             ArrayRef<AffineMap>{in, id},
             ArrayRef<IteratorType>{IteratorType::parallel,
                                    IteratorType::parallel},
             [](OpBuilder &b, Location loc, ValueRange args) {
               linalg::YieldOp::create(b, loc,
                                       ValueRange{arith::TruncFOp::create(
                                           b, loc, b.getBF16Type(), args[0])});
             })
      .getResult(0);
}
} // namespace

FailureOr<std::pair<linalg::GenericOp, ContractionLoops>>
mlir::kiln::packConstantRhs(RewriterBase &rewriter, linalg::LinalgOp op,
                            const ContractionLoops &loops, int64_t nr,
                            bool releaseWeights, WeightPacking packing) {
  if (!loops.batch.empty() || loops.nOuter)
    return failure();
  MLIRContext *ctx = op.getContext();
  OpOperand *lhs = op.getDpsInputOperand(0), *rhs = op.getDpsInputOperand(1);
  if (op.getMatchingIndexingMap(lhs).isFunctionOfDim(loops.n))
    std::swap(lhs, rhs);
  AffineExpr m = getAffineDimExpr(loops.m, ctx),
             n = getAffineDimExpr(loops.n, ctx),
             k = getAffineDimExpr(loops.k, ctx);
  AffineMap rhsMap = op.getMatchingIndexingMap(rhs);
  AffineMap accMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  if (rhsMap.getResults() != ArrayRef<AffineExpr>{k, n} ||
      accMap.getResults() != ArrayRef<AffineExpr>{m, n})
    return failure();
  auto constant = rhs->get().getDefiningOp<arith::ConstantOp>();
  if (!constant)
    return failure();
  auto rhsType = cast<RankedTensorType>(rhs->get().getType());
  int64_t kSize = rhsType.getShape()[0], nSize = rhsType.getShape()[1];
  int64_t panels = llvm::divideCeil(nSize, nr);
  // Groups of `group` consecutive k interleaved per lane (bf16 pairs, int8
  // quads), or plain panels.
  bool int8 = packing == WeightPacking::Int8Quads;
  int64_t group = int8 ? 4 : packing == WeightPacking::Bf16Pairs ? 2 : 1;
  bool pairs = group > 1;
  if (kSize % group != 0 || int8 != rhsType.getElementType().isInteger(8))
    return failure();
  // int8 A is read in place: its rows must be along M.
  if (int8 && op.getMatchingIndexingMap(lhs).getResult(0) != m)
    return failure();
  Type storage = packing == WeightPacking::F32 ? rewriter.getF32Type()
                 : int8                        ? Type(rewriter.getI8Type())
                                               : rewriter.getBF16Type();
  auto packedType =
      pairs ? RankedTensorType::get({panels, kSize / group, nr, group}, storage)
            : RankedTensorType::get({panels, kSize, nr}, storage);

  // The same weight packed before in this function (the static row blocks
  // of a run-time row count clone one matmul per block size): its packed
  // constant again, so the artifact holds the panels once. A dense_resource
  // weight is named by its key, so the marker keeps no reference to data
  // that may be freed.
  constexpr llvm::StringLiteral kPackedOf = "kiln.packed_of";
  auto resource = dyn_cast<DenseResourceElementsAttr>(constant.getValue());
  Attribute source = constant.getValue();
  if (resource)
    source = rewriter.getStringAttr(resource.getRawHandle().getKey());
  auto func = op->getParentOfType<FunctionOpInterface>();
  TypedAttr packedValue;
  if (func)
    func->walk([&](arith::ConstantOp c) {
      if (!packedValue && c.getType() == packedType &&
          c->getAttr(kPackedOf) == source)
        packedValue = c.getValue();
    });
  if (!packedValue) {
    std::optional<std::vector<char>> bytes =
        constantBytes(cast<ElementsAttr>(constant.getValue()));
    if (!bytes)
      return failure();
    size_t width = storage.getIntOrFloatBitWidth() / 8;
    std::vector<char> packed(panels * kSize * nr * width, 0);
    const auto *src = reinterpret_cast<const float *>(bytes->data());
    auto *f32 = reinterpret_cast<float *>(packed.data());
    auto *bf16 = reinterpret_cast<uint16_t *>(packed.data());
    // Element (k, lane) of panel p: groups of k interleave `group` rows of B.
    auto at = [&](int64_t p, int64_t kk, int64_t lane) -> int64_t {
      return ((p * (kSize / group) + kk / group) * nr + lane) * group +
             kk % group;
    };
    for (int64_t p = 0; p < panels; ++p)
      for (int64_t kk = 0; kk < kSize; ++kk)
        for (int64_t lane = 0; lane < nr && p * nr + lane < nSize; ++lane) {
          int64_t from = kk * nSize + p * nr + lane;
          if (int8)
            packed[at(p, kk, lane)] = (*bytes)[from];
          else if (width == 4)
            f32[at(p, kk, lane)] = src[from];
          else
            bf16[at(p, kk, lane)] = toBf16(src[from]);
        }
    packedValue =
        cast<TypedAttr>(bytesToConstant(packedType, "packed_rhs", packed));
  }

  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  auto packedOp =
      arith::ConstantOp::create(rewriter, loc, packedType, packedValue);
  packedOp->setAttr(kPackedOf, source);
  Value packedRhs = packedOp;
  Value acc = panelView(rewriter, loc, op.getDpsInitOperand(0)->get(), nr);

  linalg::GenericOp generic;
  ContractionLoops packedLoops{{}, 0, 3, 2, 1};
  if (!pairs) {
    // Loops (m, panel, k, lane).
    AffineExpr d0, d1, d2, d3;
    bindDims(ctx, d0, d1, d2, d3);
    SmallVector<AffineExpr> lhsResults;
    for (AffineExpr e : op.getMatchingIndexingMap(lhs).getResults())
      lhsResults.push_back(e == m ? d0 : d2);
    SmallVector<AffineMap> maps = {AffineMap::get(4, 0, lhsResults, ctx),
                                   AffineMap::get(4, 0, {d1, d2, d3}, ctx),
                                   AffineMap::get(4, 0, {d0, d1, d3}, ctx)};
    generic =
        buildPackedGeneric(rewriter, loc, lhs->get(), packedRhs, acc, maps,
                           {IteratorType::parallel, IteratorType::parallel,
                            IteratorType::reduction, IteratorType::parallel});
  } else {
    // Loops (m, panel, k-group, lane, group element): A as [M, K] (bf16:
    // converted; int8: as it is, row-major), element k of a row at
    // group * (k-group) + element.
    AffineMap lhsMap = op.getMatchingIndexingMap(lhs);
    Value a = lhs->get();
    if (!int8)
      a = bf16Rows(rewriter, loc, a, lhsMap, loops.m);
    AffineExpr d0, d1, d2, d3, d4;
    bindDims(ctx, d0, d1, d2, d3, d4);
    SmallVector<AffineMap> maps = {
        AffineMap::get(5, 0, {d0, d2 * group + d4}, ctx),
        AffineMap::get(5, 0, {d1, d2, d3, d4}, ctx),
        AffineMap::get(5, 0, {d0, d1, d3}, ctx)};
    auto unsignedLhs = op->getAttrOfType<BoolAttr>(kInt8ContractionAttr);
    generic =
        buildPackedGeneric(rewriter, loc, a, packedRhs, acc, maps,
                           {IteratorType::parallel, IteratorType::parallel,
                            IteratorType::reduction, IteratorType::parallel,
                            IteratorType::reduction},
                           unsignedLhs && unsignedLhs.getValue());
    packedLoops.pair = 4;
  }
  rewriter.replaceOp(
      op, fromPanels(rewriter, loc, generic.getResult(0),
                     cast<RankedTensorType>(op->getResult(0).getType())));
  if (releaseWeights && func && constant->use_empty()) {
    rewriter.eraseOp(constant);
    if (resource)
      releaseIfUnreferenced(func, resource);
  }
  return std::make_pair(generic, packedLoops);
}

bool mlir::kiln::hasNhwcKernelOperands(linalg::LinalgOp op) {
  return op.hasPureTensorSemantics() &&
         cast<RankedTensorType>(op.getDpsInputs()[1].getType())
             .hasStaticShape() &&
         llvm::all_of(op->getOperandTypes(), [](Type t) {
           auto type = dyn_cast<RankedTensorType>(t);
           return type && type.getElementType().isF32() &&
                  !type.isDynamicDim(type.getRank() - 1);
         });
}

bool mlir::kiln::hasStaticF32Operands(Operation *op) {
  return llvm::all_of(op->getOperandTypes(), [](Type t) {
    auto type = dyn_cast<RankedTensorType>(t);
    return type && type.hasStaticShape() && type.getElementType().isF32();
  });
}

FailureOr<std::pair<linalg::GenericOp, ContractionLoops>>
mlir::kiln::pointwiseConvToContraction(RewriterBase &rewriter,
                                       linalg::Conv2DNchwFchwOp conv) {
  Value input = conv.getInputs()[0], filter = conv.getInputs()[1];
  Value init = conv.getOutputs()[0];
  auto inType = cast<RankedTensorType>(input.getType());
  auto filterType = cast<RankedTensorType>(filter.getType());
  auto outType = cast<RankedTensorType>(init.getType());
  if (!hasStaticF32Operands(conv) || filterType.getShape()[2] != 1 ||
      filterType.getShape()[3] != 1 ||
      !llvm::all_of(conv.getStrides().getValues<int64_t>(),
                    [](int64_t s) { return s == 1; }) ||
      inType.getShape()[2] != outType.getShape()[2] ||
      inType.getShape()[3] != outType.getShape()[3])
    return failure();
  Location loc = conv.getLoc();
  MLIRContext *ctx = conv.getContext();
  rewriter.setInsertionPoint(conv);
  // [F, C, 1, 1] -> [F, C]; [N, C, H, W] -> [N, C, H*W]; result likewise.
  Value lhs = tensor::CollapseShapeOp::create(
      rewriter, loc, filter, SmallVector<ReassociationIndices>{{0}, {1, 2, 3}});
  SmallVector<ReassociationIndices> spatial = {{0}, {1}, {2, 3}};
  Value rhs = tensor::CollapseShapeOp::create(rewriter, loc, input, spatial);
  Value acc = tensor::CollapseShapeOp::create(rewriter, loc, init, spatial);
  // Loops (b, m = F, n = pixel, k = C).
  AffineExpr d0, d1, d2, d3;
  bindDims(ctx, d0, d1, d2, d3);
  SmallVector<AffineMap> maps = {AffineMap::get(4, 0, {d1, d3}, ctx),
                                 AffineMap::get(4, 0, {d0, d3, d2}, ctx),
                                 AffineMap::get(4, 0, {d0, d1, d2}, ctx)};
  linalg::GenericOp generic =
      buildPackedGeneric(rewriter, loc, lhs, rhs, acc, maps,
                         {IteratorType::parallel, IteratorType::parallel,
                          IteratorType::parallel, IteratorType::reduction});
  rewriter.replaceOp(conv, tensor::ExpandShapeOp::create(rewriter, loc, outType,
                                                         generic.getResult(0),
                                                         spatial));
  return std::make_pair(generic, ContractionLoops{{0}, 1, 2, 3, std::nullopt});
}

FailureOr<PackedConvolution>
mlir::kiln::convToPackedContraction(RewriterBase &rewriter,
                                    linalg::Conv2DNchwFchwOp conv, int64_t nr) {
  Value input = conv.getInputs()[0], filter = conv.getInputs()[1];
  Value init = conv.getOutputs()[0];
  auto inType = cast<RankedTensorType>(input.getType());
  auto filterType = cast<RankedTensorType>(filter.getType());
  auto outType = cast<RankedTensorType>(init.getType());
  if (!hasStaticF32Operands(conv))
    return failure();
  SmallVector<int64_t> strides(conv.getStrides().getValues<int64_t>());
  SmallVector<int64_t> dilations(conv.getDilations().getValues<int64_t>());
  int64_t batch = outType.getShape()[0], f = outType.getShape()[1];
  int64_t oh = outType.getShape()[2], ow = outType.getShape()[3];
  int64_t c = filterType.getShape()[1], kh = filterType.getShape()[2],
          kw = filterType.getShape()[3];
  int64_t kSize = c * kh * kw, spatial = oh * ow;
  int64_t panels = llvm::divideCeil(spatial, nr);
  Location loc = conv.getLoc();
  MLIRContext *ctx = conv.getContext();
  rewriter.setInsertionPoint(conv);

  // The im2col is vectorized into gathers whose indices are linear offsets
  // into the input, valid only for a dense row-major buffer. A padded input
  // or an entry argument is one; anything else may be bufferized as a
  // strided view (a slice of a padded panel result, a concat operand), so it
  // is copied into a dense tensor first.
  if (!isa<BlockArgument>(input) && !input.getDefiningOp<tensor::PadOp>()) {
    Value dense = tensor::EmptyOp::create(rewriter, loc, inType.getShape(),
                                          inType.getElementType());
    input = linalg::CopyOp::create(rewriter, loc, input, dense).getResult(0);
  }

  // im2col into panels: col[b, panel, (c, kh, kw), lane] =
  //   input[b, c, oh * sh + kh * dh, ow * sw + kw * dw] with
  //   (oh, ow) = panel * nr + lane, zero past the last output pixel.
  Type f32 = rewriter.getF32Type();
  Value colInit =
      tensor::EmptyOp::create(rewriter, loc, {batch, panels, kSize, nr}, f32);
  AffineMap identity = AffineMap::getMultiDimIdentityMap(4, ctx);
  auto col = linalg::GenericOp::create(
      rewriter, loc, colInit.getType(), ValueRange{}, ValueRange{colInit},
      ArrayRef<AffineMap>{identity},
      SmallVector<IteratorType>(4, IteratorType::parallel),
      [&](OpBuilder &b, Location loc, ValueRange) {
        auto cst = [&](int64_t v) {
          return arith::ConstantIndexOp::create(b, loc, v).getResult();
        };
        auto idx = [&](int64_t d) {
          return linalg::IndexOp::create(b, loc, d).getResult();
        };
        Value pixel = arith::AddIOp::create(
            b, loc, arith::MulIOp::create(b, loc, idx(1), cst(nr)), idx(3));
        Value valid = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                            pixel, cst(spatial));
        Value clamped = arith::MinUIOp::create(b, loc, pixel, cst(spatial - 1));
        Value y = arith::DivUIOp::create(b, loc, clamped, cst(ow));
        Value x = arith::RemUIOp::create(b, loc, clamped, cst(ow));
        Value k = idx(2);
        Value ch = arith::DivUIOp::create(b, loc, k, cst(kh * kw));
        Value r = arith::RemUIOp::create(b, loc, k, cst(kh * kw));
        Value ky = arith::DivUIOp::create(b, loc, r, cst(kw));
        Value kx = arith::RemUIOp::create(b, loc, r, cst(kw));
        auto source = [&](Value out, Value tap, int64_t stride,
                          int64_t dilation) {
          return arith::AddIOp::create(
              b, loc, arith::MulIOp::create(b, loc, out, cst(stride)),
              arith::MulIOp::create(b, loc, tap, cst(dilation)));
        };
        Value iy = source(y, ky, strides[0], dilations[0]);
        Value ix = source(x, kx, strides[1], dilations[1]);
        Value v = tensor::ExtractOp::create(b, loc, input,
                                            ValueRange{idx(0), ch, iy, ix});
        Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0));
        linalg::YieldOp::create(
            b, loc,
            ValueRange{arith::SelectOp::create(b, loc, valid, v, zero)});
      });

  // filter [F, C, KH, KW] -> [F, K]; result [B, F, OH, OW] -> [B, F, OH*OW].
  Value lhs = tensor::CollapseShapeOp::create(
      rewriter, loc, filter, SmallVector<ReassociationIndices>{{0}, {1, 2, 3}});
  Value flatInit = tensor::CollapseShapeOp::create(
      rewriter, loc, init, SmallVector<ReassociationIndices>{{0}, {1}, {2, 3}});
  Value acc = panelView(rewriter, loc, flatInit, nr);

  // Loops (b, m = F, panel, k, lane).
  AffineExpr d0, d1, d2, d3, d4;
  bindDims(ctx, d0, d1, d2, d3, d4);
  SmallVector<AffineMap> maps = {AffineMap::get(5, 0, {d1, d3}, ctx),
                                 AffineMap::get(5, 0, {d0, d2, d3, d4}, ctx),
                                 AffineMap::get(5, 0, {d0, d1, d2, d4}, ctx)};
  linalg::GenericOp generic = buildPackedGeneric(
      rewriter, loc, lhs, col.getResult(0), acc, maps,
      {IteratorType::parallel, IteratorType::parallel, IteratorType::parallel,
       IteratorType::reduction, IteratorType::parallel});
  Value flat = fromPanels(rewriter, loc, generic.getResult(0),
                          cast<RankedTensorType>(flatInit.getType()));
  Value result = tensor::ExpandShapeOp::create(
      rewriter, loc, outType, flat,
      SmallVector<ReassociationIndices>{{0}, {1}, {2, 3}});
  rewriter.replaceOp(conv, result);
  return PackedConvolution{col, generic, ContractionLoops{{0}, 1, 4, 3, 2}};
}
