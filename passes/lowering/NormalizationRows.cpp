//===- NormalizationRows.cpp - layer_norm and softmax as one row kernel ---===//
//
// For static f32 inputs normalized over their trailing dims, layer_norm,
// softmax and log_softmax become one kernel: an scf.forall over the rows
// (the runtime's thread pool after bufferization) whose body makes two or
// three passes over its row with vector<16xf32> loads and loop-carried
// accumulators:
//   layer_norm   sum -> mean; sum of squared deviations -> rstd;
//                write (x - mean) * rstd * scale + bias
//   softmax      max; write e = exp(x - max) and sum it; scale by 1 / sum
//   log_softmax  max; sum exp(x - max); write x - max - log(sum)
// Nothing is allocated per row and the row stays in L1 between its passes,
// where the generic chains of Normalization.cpp write a statistics tensor
// and read the input once per chain link. A tail shorter than the vector
// runs as scalars.
//
// Before (layer_norm over the last dim of tensor<128x768xf32>): a
// reduction generic for the sum, one for the squared deviations, two small
// parallel generics and the normalizing generic. After:
//   %r = scf.forall (%i) in (128) shared_outs(%o = %empty) {
//     %row = tensor.extract_slice %x[%i, 0] [1, 768] [1, 1]
//     %s = scf.for ... iter_args(vector<16xf32>) { vector.transfer_read }
//     ...
//     scf.forall.in_parallel { tensor.parallel_insert_slice ... }
//   }
//
//===----------------------------------------------------------------------===//
#include "passes/lowering/NormalizationRows.h"
#include "passes/lowering/LoweringUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <limits>

using namespace mlir;
using namespace mlir::kiln;

namespace {
constexpr int64_t kLanes = 16;

/// Maps the element(s) `x` at position `j` of the row (a vector<16xf32> in
/// the vector loop, an f32 in the tail).
using MapFn = function_ref<Value(OpBuilder &, Location, Value j, Value x)>;

enum class Combine { None, Add, Max };

/// Emits the passes over one row of `cols` f32 values.
struct RowBuilder {
  OpBuilder &b;
  Location loc;
  int64_t cols;

  Type f32() { return b.getF32Type(); }
  VectorType vec() { return VectorType::get({kLanes}, f32()); }
  Value index(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value scalar(double v) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
  }

  /// The result of one pass: the written row and/or the folded scalar.
  struct Pass {
    Value out;
    Value folded;
  };

  /// Reads every element of `source` (or of the row being written, when
  /// `source` is null), applies `map`, writes the result into `out` if given
  /// and folds it with `combine` from `init`.
  Pass run(Value source, Value out, Combine combine, double init, MapFn map) {
    int64_t mainCols = cols / kLanes * kLanes;
    auto fold = [&](OpBuilder &nb, Location nl, Value acc, Value x) -> Value {
      if (combine == Combine::Add)
        return arith::AddFOp::create(nb, nl, acc, x);
      return arith::MaximumFOp::create(nb, nl, acc, x);
    };
    SmallVector<Value> inits;
    if (out)
      inits.push_back(out);
    if (combine != Combine::None)
      inits.push_back(vector::BroadcastOp::create(b, loc, vec(), scalar(init)));
    Value pad = scalar(0.0);
    auto vectorLoop = scf::ForOp::create(
        b, loc, index(0), index(mainCols), index(kLanes), inits,
        [&](OpBuilder &nb, Location nl, Value j, ValueRange iter) {
          Value from = source ? source : iter[0];
          Value x = vector::TransferReadOp::create(
              nb, nl, vec(), from, ValueRange{j}, pad, ArrayRef<bool>{true});
          Value y = map(nb, nl, j, x);
          SmallVector<Value> next;
          if (out)
            next.push_back(vector::TransferWriteOp::create(nb, nl, y, iter[0],
                                                           ValueRange{j},
                                                           ArrayRef<bool>{true})
                               .getResult());
          if (combine != Combine::None)
            next.push_back(fold(nb, nl, iter.back(), y));
          scf::YieldOp::create(nb, nl, next);
        });
    SmallVector<Value> tailInits;
    if (out)
      tailInits.push_back(vectorLoop.getResult(0));
    if (combine != Combine::None) {
      auto kind = combine == Combine::Add ? vector::CombiningKind::ADD
                                          : vector::CombiningKind::MAXIMUMF;
      tailInits.push_back(vector::ReductionOp::create(
          b, loc, kind, vectorLoop.getResults().back()));
    }
    auto tailLoop = scf::ForOp::create(
        b, loc, index(mainCols), index(cols), index(1), tailInits,
        [&](OpBuilder &nb, Location nl, Value j, ValueRange iter) {
          Value from = source ? source : iter[0];
          Value x = tensor::ExtractOp::create(nb, nl, from, ValueRange{j});
          Value y = map(nb, nl, j, x);
          SmallVector<Value> next;
          if (out)
            next.push_back(
                tensor::InsertOp::create(nb, nl, y, iter[0], ValueRange{j}));
          if (combine != Combine::None)
            next.push_back(fold(nb, nl, iter.back(), y));
          scf::YieldOp::create(nb, nl, next);
        });
    Pass pass;
    if (out)
      pass.out = tailLoop.getResult(0);
    if (combine != Combine::None)
      pass.folded = tailLoop.getResults().back();
    return pass;
  }
};

/// `scalar` as a value of `like`'s type (broadcast when `like` is a vector).
Value like(OpBuilder &b, Location loc, Value like, Value scalar) {
  if (auto type = dyn_cast<VectorType>(like.getType()))
    return vector::BroadcastOp::create(b, loc, type, scalar);
  return scalar;
}

/// The element(s) of the 1-D tensor `t` at `j`, shaped like `like`.
Value readLike(OpBuilder &b, Location loc, Value t, Value j, Value like) {
  if (auto type = dyn_cast<VectorType>(like.getType())) {
    Value pad = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0));
    return vector::TransferReadOp::create(b, loc, type, t, ValueRange{j}, pad,
                                          ArrayRef<bool>{true});
  }
  return tensor::ExtractOp::create(b, loc, t, ValueRange{j});
}

bool isStaticF32(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return type && type.hasStaticShape() && type.getElementType().isF32() &&
         type.getNumElements() > 0;
}

/// f32 with static, non-empty dims from `axis` on (the rows' length); the
/// dims before it (the row count) may be run-time extents.
bool hasStaticRowsF32(Value v, int64_t axis) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || !type.getElementType().isF32())
    return false;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (type.isDynamicDim(d) ? d >= axis : type.getDimSize(d) == 0)
      return false;
  return true;
}

/// `x` viewed as [rows, cols] with cols the product of the dims from `axis`.
Value collapseRows(OpBuilder &b, Location loc, Value x, int64_t axis) {
  auto type = cast<RankedTensorType>(x.getType());
  int64_t rank = type.getRank();
  if (axis == 0) {
    // [d0..] -> [1, d0..] first, so both groups below are non-empty.
    SmallVector<int64_t> shape = {1};
    llvm::append_range(shape, type.getShape());
    SmallVector<ReassociationIndices> expand = {{0, 1}};
    for (int64_t d = 1; d < rank; ++d)
      expand.push_back({d + 1});
    x = tensor::ExpandShapeOp::create(b, loc, type.clone(shape), x, expand);
    type = cast<RankedTensorType>(x.getType());
    axis = 1;
    rank += 1;
  }
  ReassociationIndices outer, inner;
  for (int64_t d = 0; d < rank; ++d)
    (d < axis ? outer : inner).push_back(d);
  return tensor::CollapseShapeOp::create(
      b, loc, x, SmallVector<ReassociationIndices>{outer, inner});
}

/// `v` (whose elements are one row's worth, in row order) as a 1-D tensor.
Value flatten(OpBuilder &b, Location loc, Value v) {
  auto type = cast<RankedTensorType>(v.getType());
  if (type.getRank() == 1)
    return v;
  ReassociationIndices all;
  for (int64_t d = 0; d < type.getRank(); ++d)
    all.push_back(d);
  return tensor::CollapseShapeOp::create(
      b, loc, v, SmallVector<ReassociationIndices>{all});
}

/// Builds the forall over the rows of `x2d` ([rows, cols]); `body` gets the
/// row and the output row and returns the written output row.
Value forEachRow(
    OpBuilder &b, Location loc, Value x2d,
    function_ref<Value(RowBuilder &, Value row, Value outRow)> body) {
  auto type = cast<RankedTensorType>(x2d.getType());
  int64_t cols = type.getDimSize(1);
  OpFoldResult rows = b.getIndexAttr(type.getDimSize(0));
  SmallVector<Value> dynamicRows;
  if (type.isDynamicDim(0)) {
    rows = tensor::DimOp::create(b, loc, x2d, 0).getResult();
    dynamicRows.push_back(cast<Value>(rows));
  }
  Value empty = tensor::EmptyOp::create(b, loc, type.getShape(),
                                        type.getElementType(), dynamicRows);
  auto forall = scf::ForallOp::create(b, loc, ArrayRef<OpFoldResult>{rows},
                                      ValueRange{empty}, std::nullopt);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(forall.getBody());
  Value i = forall.getInductionVars()[0];
  SmallVector<OpFoldResult> offsets = {i, b.getIndexAttr(0)};
  SmallVector<OpFoldResult> sizes = {b.getIndexAttr(1), b.getIndexAttr(cols)};
  SmallVector<OpFoldResult> strides = {b.getIndexAttr(1), b.getIndexAttr(1)};
  auto rowType = RankedTensorType::get({cols}, type.getElementType());
  Value row = tensor::ExtractSliceOp::create(b, loc, rowType, x2d, offsets,
                                             sizes, strides);
  Value outRow = tensor::ExtractSliceOp::create(
      b, loc, rowType, forall.getRegionOutArgs()[0], offsets, sizes, strides);
  RowBuilder rb{b, loc, cols};
  Value written = body(rb, row, outRow);
  b.setInsertionPointToEnd(forall.getTerminator().getBody());
  tensor::ParallelInsertSliceOp::create(
      b, loc, written, forall.getRegionOutArgs()[0], offsets, sizes, strides);
  return forall.getResult(0);
}

Value expandBack(OpBuilder &b, Location loc, Value result2d,
                 RankedTensorType type, int64_t axis, Value original) {
  int64_t rank = type.getRank();
  if (!type.hasStaticShape()) {
    // Run-time extents of the outer dims come from the original input.
    SmallVector<OpFoldResult> sizes;
    for (int64_t d = 0; d < rank; ++d)
      sizes.push_back(
          type.isDynamicDim(d)
              ? OpFoldResult(tensor::DimOp::create(b, loc, original, d))
              : OpFoldResult(b.getIndexAttr(type.getDimSize(d))));
    ReassociationIndices outer, inner;
    for (int64_t d = 0; d < rank; ++d)
      (d < std::max<int64_t>(axis, 1) ? outer : inner).push_back(d);
    SmallVector<ReassociationIndices> groups = {outer};
    if (!inner.empty())
      groups.push_back(inner);
    return tensor::ExpandShapeOp::create(b, loc, type, result2d, groups, sizes);
  }
  if (axis == 0) {
    Value flat = flatten(b, loc, result2d);
    if (rank == 1)
      return flat;
    ReassociationIndices all;
    for (int64_t d = 0; d < rank; ++d)
      all.push_back(d);
    return tensor::ExpandShapeOp::create(
        b, loc, type, flat, SmallVector<ReassociationIndices>{all});
  }
  ReassociationIndices outer, inner;
  for (int64_t d = 0; d < rank; ++d)
    (d < axis ? outer : inner).push_back(d);
  return tensor::ExpandShapeOp::create(
      b, loc, type, result2d, SmallVector<ReassociationIndices>{outer, inner});
}

/// An operand of the normalized dims only (leading 1s allowed), as [cols].
Value rowOperand(OpBuilder &b, Location loc, Value v, int64_t cols) {
  if (!v)
    return v;
  if (!isStaticF32(v) ||
      cast<RankedTensorType>(v.getType()).getNumElements() != cols)
    return {};
  return flatten(b, loc, v);
}

/// True if `v`'s shape, leading 1s dropped, is `dims` with leading 1s
/// dropped: the operand covers the normalized dims without broadcasting.
bool coversRow(Value v, ArrayRef<int64_t> dims) {
  auto strip = [](ArrayRef<int64_t> s) {
    while (!s.empty() && s.front() == 1)
      s = s.drop_front();
    return s;
  };
  auto type = cast<RankedTensorType>(v.getType());
  return strip(type.getShape()) == strip(dims);
}
} // namespace

FailureOr<Value> mlir::kiln::buildLayerNormRows(OpBuilder &b, Location loc,
                                                Value x, Value scale,
                                                Value bias, int64_t axis,
                                                double epsilon) {
  // Run-time dims are rows (axis 0 folds every dim into one row).
  if (!hasStaticRowsF32(x, axis) || (axis == 0 && !isStaticF32(x)))
    return failure();
  auto type = cast<RankedTensorType>(x.getType());
  ArrayRef<int64_t> normalized = type.getShape().drop_front(axis);
  int64_t cols = 1;
  for (int64_t d : normalized)
    cols *= d;
  if (!isStaticF32(scale) || !coversRow(scale, normalized) ||
      (bias && (!isStaticF32(bias) || !coversRow(bias, normalized))))
    return failure();
  Value scaleRow = rowOperand(b, loc, scale, cols);
  Value biasRow = rowOperand(b, loc, bias, cols);
  if (!scaleRow || (bias && !biasRow))
    return failure();

  Value x2d = collapseRows(b, loc, x, axis);
  Value result = forEachRow(
      b, loc, x2d, [&](RowBuilder &rb, Value row, Value outRow) -> Value {
        OpBuilder &nb = rb.b;
        Value count = rb.scalar(double(cols));
        auto identity = [](OpBuilder &, Location, Value, Value v) { return v; };
        Value sum = rb.run(row, {}, Combine::Add, 0.0, identity).folded;
        Value mean = arith::DivFOp::create(nb, loc, sum, count);
        Value squares =
            rb.run(row, {}, Combine::Add, 0.0,
                   [&](OpBuilder &ib, Location il, Value, Value v) -> Value {
                     Value d = arith::SubFOp::create(ib, il, v,
                                                     like(ib, il, v, mean));
                     return arith::MulFOp::create(ib, il, d, d);
                   })
                .folded;
        Value var = arith::DivFOp::create(nb, loc, squares, count);
        Value rstd = math::RsqrtOp::create(
            nb, loc, arith::AddFOp::create(nb, loc, var, rb.scalar(epsilon)));
        return rb
            .run(row, outRow, Combine::None, 0.0,
                 [&](OpBuilder &ib, Location il, Value j, Value v) -> Value {
                   Value d =
                       arith::SubFOp::create(ib, il, v, like(ib, il, v, mean));
                   Value n =
                       arith::MulFOp::create(ib, il, d, like(ib, il, v, rstd));
                   Value r = arith::MulFOp::create(
                       ib, il, n, readLike(ib, il, scaleRow, j, v));
                   if (biasRow)
                     r = arith::AddFOp::create(ib, il, r,
                                               readLike(ib, il, biasRow, j, v));
                   return r;
                 })
            .out;
      });
  return expandBack(b, loc, result, type, axis, x);
}

FailureOr<Value> mlir::kiln::buildSoftmaxRows(OpBuilder &b, Location loc,
                                              Value x, int64_t axis,
                                              bool isLog) {
  if (!hasStaticRowsF32(x, axis) || (axis == 0 && !isStaticF32(x)))
    return failure();
  auto type = cast<RankedTensorType>(x.getType());
  if (axis != type.getRank() - 1)
    return failure();
  Value x2d = collapseRows(b, loc, x, axis);
  Value result = forEachRow(
      b, loc, x2d, [&](RowBuilder &rb, Value row, Value outRow) -> Value {
        OpBuilder &nb = rb.b;
        auto identity = [](OpBuilder &, Location, Value, Value v) { return v; };
        Value max = rb.run(row, {}, Combine::Max,
                           -std::numeric_limits<double>::infinity(), identity)
                        .folded;
        auto exp = [&](OpBuilder &ib, Location il, Value, Value v) -> Value {
          return math::ExpOp::create(
              ib, il, arith::SubFOp::create(ib, il, v, like(ib, il, v, max)));
        };
        if (isLog) {
          Value sum = rb.run(row, {}, Combine::Add, 0.0, exp).folded;
          Value shift = arith::AddFOp::create(
              nb, loc, max, math::LogOp::create(nb, loc, sum));
          return rb
              .run(row, outRow, Combine::None, 0.0,
                   [&](OpBuilder &ib, Location il, Value, Value v) -> Value {
                     return arith::SubFOp::create(ib, il, v,
                                                  like(ib, il, v, shift));
                   })
              .out;
        }
        RowBuilder::Pass exps = rb.run(row, outRow, Combine::Add, 0.0, exp);
        Value inverse =
            arith::DivFOp::create(nb, loc, rb.scalar(1.0), exps.folded);
        return rb
            .run({}, exps.out, Combine::None, 0.0,
                 [&](OpBuilder &ib, Location il, Value, Value v) -> Value {
                   return arith::MulFOp::create(ib, il, v,
                                                like(ib, il, v, inverse));
                 })
            .out;
      });
  return expandBack(b, loc, result, type, axis, x);
}
