//===- MicroKernel.cpp - A register tile as rows of vector FMAs ----------===//
//
// The innermost tile of a contraction, C[mr x nr] += A[mr x K] * B[K x nr],
// becomes mr row accumulators carried through a k loop:
//
//   %c_r = vector.transfer_read %C[r, 0] : vector<nr>        (r < mr)
//   scf.for %k = 0 to K step 1 iter_args(%c_0, ..., %c_{mr-1}) {
//     %b = vector.transfer_read %B[%k, 0] : vector<nr>       (a row of B)
//     %a_r = tensor.extract %A[r, %k] ; vector.broadcast     (r < mr)
//     %c_r' = vector.fma %a_r, %b, %c_r
//   }
//   vector.transfer_write %c_r, %C[r, 0]
//
// so the accumulators stay in registers for the whole reduction, and only
// 1-D vectors exist (no n-D vector lowering). When the accumulator tensor
// started as a fill, the first K block seeds %c_r with the fill value instead
// of reading it (kiln-tile-contractions removed the fill). Edge tiles: columns
// past the matrix are masked (out-of-bounds transfers); rows past it read and
// write the last valid row, computing and storing its values a second time.
//
// bf16 weights (--precision=bf16): panels of bf16 are extended to f32 as
// they are loaded; k-pair panels (ContractionLoops::pair) take the AVX512-BF16
// form, per k-pair step
//
//   %b_h = vector.transfer_read %B[%kp, 32 h] : vector<32xbf16>  (16 lanes)
//   %a_r = the bf16 pair A[r, 2kp .. 2kp+1] as i32, broadcast to 16 lanes
//   %c_rh' = x86vector.avx512.dot %c_rh, %a_r, %b_h   (vdpbf16ps)
//
// with each row's accumulator carried as nr/16 vector<16xf32> halves. int8
// k-quads (kiln.quantized_matmul, AVX512-VNNI) take the same form with 4
// bytes of A per broadcast and vpdpbusd (an LLVM intrinsic call) on
// vector<16xi32> halves that start at zero; after the k loop the i32 sums
// are converted and added to the f32 rows.
//
//===----------------------------------------------------------------------===//
#include "backends/cpu/ContractionCodegen.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"

using namespace mlir;
using namespace mlir::kiln;

namespace {
/// Indices into `operand` of the tile: `m` and `k` at the given values when
/// the operand has those loops, 0 everywhere else.
SmallVector<Value> indicesFor(linalg::LinalgOp tile, OpOperand *operand,
                              const ContractionLoops &loops, Value zero,
                              Value m, Value k) {
  SmallVector<Value> indices;
  for (AffineExpr expr : tile.getMatchingIndexingMap(operand).getResults()) {
    unsigned dim = cast<AffineDimExpr>(expr).getPosition();
    indices.push_back(dim == loops.m ? m : dim == loops.k ? k : zero);
  }
  return indices;
}

/// The 1-D map reading along the N loop of `operand`.
AffineMap rowMap(linalg::LinalgOp tile, OpOperand *operand, unsigned n) {
  AffineMap map = tile.getMatchingIndexingMap(operand);
  std::optional<unsigned> pos =
      map.getResultPosition(getAffineDimExpr(n, tile.getContext()));
  return AffineMap::get(map.getNumResults(), 0,
                        getAffineDimExpr(*pos, tile.getContext()));
}

/// The row of B at step `k`: a vector<nr> of f32, extended from bf16
/// weights.
Value readRow(OpBuilder &b, Location loc, Value rhs, ValueRange indices,
              AffineMap map, int64_t nr, bool inBounds) {
  Type element = cast<ShapedType>(rhs.getType()).getElementType();
  Value padding =
      arith::ConstantOp::create(b, loc, element, b.getZeroAttr(element));
  Value row = vector::TransferReadOp::create(
      b, loc, VectorType::get({nr}, element), rhs, indices, padding, map,
      ArrayRef<bool>{inBounds});
  if (element.isF32())
    return row;
  return arith::ExtFOp::create(b, loc, VectorType::get({nr}, b.getF32Type()),
                               row);
}

/// One k-group step of the dot-product micro-kernels: bf16 pairs with
/// vdpbf16ps (f32 sums) or int8 quads with vpdpbusd (uint8 A, int8 B, i32
/// sums). `accs` holds nr/16 halves per row; `rhs` is B's tile as
/// [1, KC/group, group * nr] and `lhs` A's [.., K] rows.
SmallVector<Value> groupStep(OpBuilder &b, Location loc, Value lhs, Value rhs,
                             ArrayRef<Value> rows, Value kg, ValueRange accs,
                             int64_t nr) {
  Type element = cast<ShapedType>(rhs.getType()).getElementType();
  bool int8 = element.isInteger(8);
  int64_t group = int8 ? 4 : 2, width = 16 * group; // one zmm of B
  Value c0 = arith::ConstantIndexOp::create(b, loc, 0);
  Value zero =
      arith::ConstantOp::create(b, loc, element, b.getZeroAttr(element));
  auto groupsType = VectorType::get({width}, element);
  Value bRow = vector::TransferReadOp::create(
      b, loc, VectorType::get({group * nr}, element), rhs,
      ValueRange{c0, kg, c0}, zero, ArrayRef<bool>{true});
  SmallVector<Value> bHalves;
  for (int64_t h = 0; h < nr / 16; ++h)
    bHalves.push_back(vector::ExtractStridedSliceOp::create(
        b, loc, bRow, ArrayRef<int64_t>{width * h}, ArrayRef<int64_t>{width},
        ArrayRef<int64_t>{1}));
  Value k = arith::MulIOp::create(
      b, loc, kg, arith::ConstantIndexOp::create(b, loc, group));
  auto i32x16 = VectorType::get({16}, b.getI32Type());
  SmallVector<Value> next;
  for (auto [r, row] : llvm::enumerate(rows)) {
    // The row's `group` elements at k as one i32, in every lane.
    Value elements = vector::TransferReadOp::create(
        b, loc, VectorType::get({group}, element), lhs, ValueRange{row, k},
        zero, ArrayRef<bool>{true});
    Value bits = vector::BitCastOp::create(
        b, loc, VectorType::get({1}, b.getI32Type()), elements);
    Value splat = vector::BroadcastOp::create(b, loc, i32x16, bits);
    Value a = vector::BitCastOp::create(b, loc, groupsType, splat);
    for (int64_t h = 0; h < nr / 16; ++h) {
      Value acc = accs[r * (nr / 16) + h];
      if (int8)
        next.push_back(LLVM::CallIntrinsicOp::create(
                           b, loc, i32x16,
                           b.getStringAttr("llvm.x86.avx512.vpdpbusd.512"),
                           ValueRange{acc, a, bHalves[h]})
                           ->getResult(0));
      else
        next.push_back(
            x86vector::DotBF16Op::create(b, loc, acc, a, bHalves[h]));
    }
  }
  return next;
}
} // namespace

LogicalResult mlir::kiln::buildMicroKernel(RewriterBase &rewriter,
                                           linalg::LinalgOp tile,
                                           const ContractionLoops &loops,
                                           int64_t mr, int64_t nr,
                                           const Epilogue *epilogue, Value seed,
                                           Value firstBlock) {
  Location loc = tile.getLoc();
  rewriter.setInsertionPoint(tile);
  SmallVector<int64_t> extents = tile.getStaticLoopRanges();
  for (unsigned d = 0; d < extents.size(); ++d)
    if (d != loops.m && d != loops.n && d != loops.k && d != loops.pair &&
        extents[d] != 1)
      return tile.emitError("micro-kernel tile has a non-unit loop ") << d;
  if (loops.pair && nr % 16 != 0)
    return tile.emitError("the dot-product micro-kernels need lanes in 16s");
  OpOperand *lhs = tile.getDpsInputOperand(0),
            *rhs = tile.getDpsInputOperand(1);
  OpOperand *acc = tile.getDpsInitOperand(0);
  // A is the input that does not index N.
  if (tile.getMatchingIndexingMap(lhs).isFunctionOfDim(loops.n))
    std::swap(lhs, rhs);

  SmallVector<Range> ranges = tile.createLoopRanges(rewriter, loc);
  auto extent = [&](unsigned loop) {
    return getValueOrCreateConstantIndexOp(rewriter, loc, ranges[loop].size);
  };
  Value mExtent = extent(loops.m), kExtent = extent(loops.k);
  bool fullRows = extents[loops.m] == mr;
  bool fullColumns = extents[loops.n] == nr;

  Type f32 = rewriter.getF32Type();
  auto rowType = VectorType::get({nr}, f32);
  Value zero = arith::ConstantOp::create(rewriter, loc, f32,
                                         rewriter.getF32FloatAttr(0));
  Value c0 = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value c1 = arith::ConstantIndexOp::create(rewriter, loc, 1);
  // Row r of the tile, or the last valid row past the edge.
  SmallVector<Value> rows;
  Value lastRow = arith::SubIOp::create(rewriter, loc, mExtent, c1);
  for (int64_t r = 0; r < mr; ++r) {
    Value row = arith::ConstantIndexOp::create(rewriter, loc, r);
    rows.push_back(
        fullRows
            ? row
            : arith::MinUIOp::create(rewriter, loc, row, lastRow).getResult());
  }

  AffineMap accMap = rowMap(tile, acc, loops.n);
  auto load = [&](OpBuilder &b, Location loc) {
    SmallVector<Value> values;
    for (Value row : rows)
      values.push_back(vector::TransferReadOp::create(
          b, loc, rowType, acc->get(),
          indicesFor(tile, acc, loops, c0, row, c0), zero, accMap,
          ArrayRef<bool>{fullColumns}));
    return values;
  };
  auto splat = [&](OpBuilder &b, Location loc) {
    return SmallVector<Value>(
        mr, vector::BroadcastOp::create(b, loc, rowType, seed).getResult());
  };
  SmallVector<Value> inits;
  if (!seed) {
    inits = load(rewriter, loc);
  } else if (!firstBlock) {
    inits = splat(rewriter, loc);
  } else {
    inits = scf::IfOp::create(
                rewriter, loc, firstBlock,
                [&](OpBuilder &b, Location loc) {
                  scf::YieldOp::create(b, loc, splat(b, loc));
                },
                [&](OpBuilder &b, Location loc) {
                  scf::YieldOp::create(b, loc, load(b, loc));
                })
                .getResults();
  }

  // Rows past the edge computed exactly what the last valid row did (same
  // A row, same C row, same order), so writing them back to that row stores
  // the same values again: no branch, and the tile stays in place.
  auto store = [&](OpBuilder &b, Location loc, ArrayRef<Value> values) {
    Value result = acc->get();
    for (auto [row, c] : llvm::zip_equal(rows, values))
      result = vector::TransferWriteOp::create(
                   b, loc, c, result, indicesFor(tile, acc, loops, c0, row, c0),
                   accMap, ArrayRef<bool>{fullColumns})
                   .getResult();
    return result;
  };
  if (loops.pair) {
    // Each row as nr/16 halves of 16 lanes, the width of vdpbf16ps and
    // vpdpbusd: bf16 pairs accumulate onto the f32 rows; int8 quads sum in
    // i32 from zero, added to the f32 rows after the K block.
    bool int8 =
        cast<ShapedType>(rhs->get().getType()).getElementType().isInteger(8);
    auto i32x16 = VectorType::get({16}, rewriter.getI32Type());
    Value zeros = arith::ConstantOp::create(rewriter, loc, i32x16,
                                            rewriter.getZeroAttr(i32x16));
    SmallVector<Value> halves;
    for (Value row : inits)
      for (int64_t h = 0; h < nr / 16; ++h)
        halves.push_back(int8 ? zeros
                              : vector::ExtractStridedSliceOp::create(
                                    rewriter, loc, row,
                                    ArrayRef<int64_t>{16 * h},
                                    ArrayRef<int64_t>{16}, ArrayRef<int64_t>{1})
                                    .getResult());
    // B's tile [1, KC/g, nr, g] read as [1, KC/g, g nr]: one load per group.
    Value groups = tensor::CollapseShapeOp::create(
        rewriter, loc, rhs->get(),
        SmallVector<ReassociationIndices>{{0}, {1}, {2, 3}});
    auto kLoop = scf::ForOp::create(
        rewriter, loc, c0, kExtent, c1, halves,
        [&](OpBuilder &b, Location loc, Value kg, ValueRange accs) {
          scf::YieldOp::create(
              b, loc,
              groupStep(b, loc, lhs->get(), groups, rows, kg, accs, nr));
        });
    SmallVector<Value> accs;
    auto f32x16 = VectorType::get({16}, rewriter.getF32Type());
    for (int64_t r = 0; r < mr; ++r) {
      Value row = int8
                      ? inits[r]
                      : arith::ConstantOp::create(rewriter, loc, rowType,
                                                  rewriter.getZeroAttr(rowType))
                            .getResult();
      for (int64_t h = 0; h < nr / 16; ++h) {
        Value half = kLoop.getResult(r * (nr / 16) + h);
        if (int8) {
          Value before = vector::ExtractStridedSliceOp::create(
              rewriter, loc, row, ArrayRef<int64_t>{16 * h},
              ArrayRef<int64_t>{16}, ArrayRef<int64_t>{1});
          half = arith::AddFOp::create(
              rewriter, loc, before,
              arith::SIToFPOp::create(rewriter, loc, f32x16, half));
        }
        row = vector::InsertStridedSliceOp::create(rewriter, loc, half, row,
                                                   ArrayRef<int64_t>{16 * h},
                                                   ArrayRef<int64_t>{1});
      }
      accs.push_back(row);
    }
    rewriter.replaceOp(tile, storeTile(rewriter, loc, tile, loops, epilogue,
                                       rows, accs, nr, kExtent, store));
    return success();
  }

  AffineMap rhsMap = rowMap(tile, rhs, loops.n);
  auto kLoop = scf::ForOp::create(
      rewriter, loc, c0, kExtent, c1, inits,
      [&](OpBuilder &b, Location loc, Value k, ValueRange accs) {
        Value bRow =
            readRow(b, loc, rhs->get(), indicesFor(tile, rhs, loops, c0, c0, k),
                    rhsMap, nr, fullColumns);
        SmallVector<Value> next;
        for (auto [row, c] : llvm::zip_equal(rows, accs)) {
          Value a = tensor::ExtractOp::create(
              b, loc, lhs->get(), indicesFor(tile, lhs, loops, c0, row, k));
          Value splat = vector::BroadcastOp::create(b, loc, rowType, a);
          next.push_back(vector::FMAOp::create(b, loc, splat, bRow, c));
        }
        scf::YieldOp::create(b, loc, next);
      });

  SmallVector<Value> accs(kLoop.getResults());
  Value result = storeTile(rewriter, loc, tile, loops, epilogue, rows, accs, nr,
                           kExtent, store);
  rewriter.replaceOp(tile, result);
  return success();
}
