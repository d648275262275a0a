//===- SliceRunTimeRows.cpp - Static kernels over a run-time leading dim --===//
//
// The register-tiled kernels (kiln-tile-nhwc-convolutions,
// kiln-tile-contractions) take static shapes. A model with a symbolic batch
// or sequence length gives convolutions a run-time batch and matmuls a
// run-time row count, and only those. This pass runs the op on static
// slices of that dim inside an scf.for, so the tilers see static ops:
//
//   - NHWC poolings and 3x3 stride-1 convolutions (Winograd's), one image
//     at a time ([1, H, W, C]); the direct and depthwise kernels take the
//     other convolutions with their run-time batch;
//   - matmuls [M, K] x [K, N], in whole blocks of kRowBlocks rows (largest
//     first: a large block reads each weight panel once for more rows),
//     then blocks of kTailBlock rows, the last one zero-padded to
//     kTailBlock (at most kTailBlock - 1 rows of padding).
//
// Each slice of the result is inserted into the op's init; the loops are
// sequential, the kernels inside parallel, except the whole row blocks of a
// matmul at most one column tile wide (an im2col convolution of 64
// filters): those blocks are an scf.forall, one task each.
//
//===----------------------------------------------------------------------===//
#include "backends/cpu/Passes.h"

#include "compiler/logging/Logging.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_SLICERUNTIMEROWS
#include "backends/cpu/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;

namespace {
constexpr int64_t kRowBlocks[] = {128, 64};
constexpr int64_t kTailBlock = 8;
/// The column tile of kiln-tile-contractions (TileSizes.h's nc): a matmul
/// no wider runs each row block as one task of the pool.
constexpr int64_t kParallelColumns = 128;

/// The one user of `v` that is not a tensor.dim (the extents a later op
/// reads from it do not stop a rewrite), or null.
Operation *onlyRealUser(Value v) {
  Operation *found = nullptr;
  for (Operation *user : v.getUsers()) {
    if (isa<tensor::DimOp>(user))
      continue;
    if (found && found != user)
      return nullptr;
    found = user;
  }
  return found;
}

/// Whether `type` is static except for its dim 0.
bool onlyLeadingDimDynamic(Type type) {
  auto ranked = dyn_cast<RankedTensorType>(type);
  if (!ranked || ranked.getRank() == 0 || !ranked.isDynamicDim(0))
    return false;
  for (int64_t d = 1; d < ranked.getRank(); ++d)
    if (ranked.isDynamicDim(d))
      return false;
  return true;
}

/// The elementwise consumer (bias, activation, residual add) a tiler would
/// apply in `op`'s kernel, if it can be sliced with it: the only user of the
/// result, an all-parallel generic of the same shape whose other inputs are
/// static (broadcast along the rows) or run-time rows read with an
/// identity map.
linalg::GenericOp sliceableConsumer(linalg::LinalgOp op) {
  Value result = op->getResult(0);
  auto consumer = dyn_cast_or_null<linalg::GenericOp>(onlyRealUser(result));
  if (!consumer || consumer.getNumResults() != 1 ||
      consumer.getNumLoops() != consumer.getNumParallelLoops() ||
      consumer.getResult(0).getType() != result.getType() ||
      !consumer.hasPureTensorSemantics())
    return {};
  for (OpOperand *input : consumer.getDpsInputOperands()) {
    AffineMap map = consumer.getMatchingIndexingMap(input);
    Type type = input->get().getType();
    if (input->get() == result || onlyLeadingDimDynamic(type)) {
      if (!map.isIdentity())
        return {};
      continue;
    }
    auto shaped = dyn_cast<ShapedType>(type);
    if (!shaped || !shaped.hasStaticShape() ||
        llvm::any_of(map.getResults(),
                     [](AffineExpr e) { return e.isFunctionOfDim(0); }))
      return {};
  }
  return consumer;
}

/// The rows of `input` that `slice` (rows of a tensor -> static slice)
/// gives; a zero padding of the spatial dims (tensor.pad with nothing added
/// to the rows, used only here) is applied to the slice instead of to the
/// whole tensor, so the loop reads the unpadded input.
Value sliceInput(OpBuilder &b, Location loc, Value input,
                 function_ref<Value(Value)> slice) {
  auto pad = input.getDefiningOp<tensor::PadOp>();
  if (!pad || !input.hasOneUse() || !pad.getConstantPaddingValue() ||
      !isConstantIntValue(pad.getMixedLowPad()[0], 0) ||
      !isConstantIntValue(pad.getMixedHighPad()[0], 0) ||
      !pad.getStaticLow().drop_front().size() ||
      llvm::any_of(pad.getStaticLow(), ShapedType::isDynamic) ||
      llvm::any_of(pad.getStaticHigh(), ShapedType::isDynamic))
    return slice(input);
  Value rows = slice(pad.getSource());
  return tensor::PadOp::create(b, loc, RankedTensorType(), rows,
                               pad.getMixedLowPad(), pad.getMixedHighPad(),
                               pad.getConstantPaddingValue())
      .getResult();
}

/// The empty tensor `init` fills when it is a fill or a broadcast of static
/// values into one (a contraction's zeros or bias, which each row block can
/// make afresh, however many ops share it); null otherwise.
tensor::EmptyOp emptyOfStaticFill(Value init) {
  Operation *def = init.getDefiningOp();
  if (!def || !isa<linalg::FillOp, linalg::BroadcastOp>(def))
    return {};
  auto dps = cast<DestinationStyleOpInterface>(def);
  for (Value v : dps.getDpsInputs())
    if (auto shaped = dyn_cast<ShapedType>(v.getType());
        shaped && !shaped.hasStaticShape())
      return {};
  return dps.getDpsInits()[0].getDefiningOp<tensor::EmptyOp>();
}

/// A fresh init of `staticRows` rows when `init` is such a fill; null
/// otherwise.
Value initOfRows(OpBuilder &b, Location loc, Value init, int64_t staticRows) {
  if (!emptyOfStaticFill(init))
    return {};
  Operation *def = init.getDefiningOp();
  auto dps = cast<DestinationStyleOpInterface>(def);
  auto type = cast<RankedTensorType>(init.getType());
  SmallVector<int64_t> shape(type.getShape());
  shape[0] = staticRows;
  auto staticType = type.clone(shape);
  IRMapping mapping;
  mapping.map(dps.getDpsInits()[0],
              tensor::EmptyOp::create(b, loc, shape, type.getElementType())
                  .getResult());
  Operation *clone = b.clone(*def, mapping);
  clone->getResult(0).setType(staticType);
  return clone->getResult(0);
}

/// `op` (then its sliceable `consumer`, if any) on rows [start, start +
/// size): slices of its first input and init and of the consumer's
/// run-time inputs, the consumer's init read from `into`. Computed as
/// `staticRows` rows: when `size` is less, the slices are zero-padded and
/// only `size` rows of the result are kept. Returns `into` with those rows
/// written.
Value sliceRows(OpBuilder &b, Location loc, linalg::LinalgOp op,
                linalg::GenericOp consumer, Value into, Value start,
                OpFoldResult size, int64_t staticRows) {
  auto sliceOf = [&](Value source, OpFoldResult rows) {
    auto type = cast<RankedTensorType>(source.getType());
    SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0)), sizes,
        strides(type.getRank(), b.getIndexAttr(1));
    offsets[0] = start;
    sizes.push_back(rows);
    for (int64_t d = 1; d < type.getRank(); ++d)
      sizes.push_back(b.getIndexAttr(type.getDimSize(d)));
    return tensor::ExtractSliceOp::create(b, loc, source, offsets, sizes,
                                          strides)
        .getResult();
  };
  // Rows beyond `size` (padding) are zeros in the input and dropped from
  // the result.
  auto padded = [&](Value slice) -> Value {
    auto type = cast<RankedTensorType>(slice.getType());
    SmallVector<int64_t> shape(type.getShape());
    shape[0] = staticRows;
    auto staticType = type.clone(shape);
    if (type == staticType)
      return slice;
    if (!type.isDynamicDim(0))
      return tensor::CastOp::create(b, loc, staticType, slice).getResult();
    SmallVector<OpFoldResult> low(type.getRank(), b.getIndexAttr(0)),
        high(type.getRank(), b.getIndexAttr(0));
    Value dim = tensor::DimOp::create(b, loc, slice, 0);
    high[0] =
        arith::SubIOp::create(
            b, loc, arith::ConstantIndexOp::create(b, loc, staticRows), dim)
            .getResult();
    Value zero =
        arith::ConstantOp::create(b, loc, b.getZeroAttr(type.getElementType()));
    Value pad = tensor::PadOp::create(b, loc, RankedTensorType(), slice, low,
                                      high, zero);
    return tensor::CastOp::create(b, loc, staticType, pad).getResult();
  };
  auto cloneStatic = [&](Operation *source, IRMapping &mapping) {
    Operation *clone = b.clone(*source, mapping);
    auto type = cast<RankedTensorType>(clone->getResult(0).getType());
    SmallVector<int64_t> shape(type.getShape());
    shape[0] = staticRows;
    clone->getResult(0).setType(type.clone(shape));
    return clone->getResult(0);
  };
  Value input = op.getDpsInputs()[0];
  Value init = op.getDpsInits()[0];
  // The consumer's slices first: epilogue fusion needs the operands of the
  // epilogue defined before the contraction.
  IRMapping next;
  if (consumer) {
    for (Value v : consumer.getDpsInputs())
      if (v != op->getResult(0) && onlyLeadingDimDynamic(v.getType()))
        next.map(v, padded(sliceOf(v, size)));
    next.map(consumer.getDpsInits()[0], padded(sliceOf(into, size)));
  }
  IRMapping mapping;
  mapping.map(input, sliceInput(b, loc, input, [&](Value source) {
                return padded(sliceOf(source, size));
              }));
  if (Value fresh = initOfRows(b, loc, init, staticRows))
    mapping.map(init, fresh);
  else
    mapping.map(init, padded(sliceOf(consumer ? init : into, size)));
  Value result = cloneStatic(op, mapping);
  if (consumer) {
    next.map(op->getResult(0), result);
    result = cloneStatic(consumer, next);
  }
  // Keep the valid rows.
  auto resultTy = cast<RankedTensorType>(result.getType());
  SmallVector<OpFoldResult> zeros(resultTy.getRank(), b.getIndexAttr(0)), sizes,
      strides(resultTy.getRank(), b.getIndexAttr(1));
  sizes.push_back(size);
  for (int64_t d = 1; d < resultTy.getRank(); ++d)
    sizes.push_back(b.getIndexAttr(resultTy.getDimSize(d)));
  if (!isConstantIntValue(size, staticRows))
    result =
        tensor::ExtractSliceOp::create(b, loc, result, zeros, sizes, strides);
  SmallVector<OpFoldResult> offsets(resultTy.getRank(), b.getIndexAttr(0));
  offsets[0] = start;
  return tensor::InsertSliceOp::create(b, loc, result, into, offsets, sizes,
                                       strides);
}

/// Rows [from, to) of `op` in whole static blocks of `block` rows, the
/// blocks in parallel: an scf.forall whose iterations write their rows of
/// `into` (for kernels too narrow to spread over the pool themselves).
Value forallRows(OpBuilder &b, Location loc, linalg::LinalgOp op,
                 linalg::GenericOp consumer, Value into, Value from, Value to,
                 int64_t block) {
  Value step = arith::ConstantIndexOp::create(b, loc, block);
  auto loop = scf::ForallOp::create(
      b, loc, ArrayRef<OpFoldResult>{from}, ArrayRef<OpFoldResult>{to},
      ArrayRef<OpFoldResult>{step}, ValueRange{into},
      /*mapping=*/std::nullopt);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  Value row = loop.getInductionVars()[0];
  Value next = sliceRows(b, loc, op, consumer, loop.getRegionIterArgs()[0], row,
                         b.getIndexAttr(block), block);
  // sliceRows ends with an insert_slice into the shared result: each
  // iteration inserts its rows in parallel instead.
  auto insert = next.getDefiningOp<tensor::InsertSliceOp>();
  b.setInsertionPointToStart(loop.getTerminator().getBody());
  tensor::ParallelInsertSliceOp::create(
      b, loc, insert.getSource(), insert.getDest(), insert.getMixedOffsets(),
      insert.getMixedSizes(), insert.getMixedStrides());
  insert->erase();
  return loop.getResult(0);
}

/// Rows [from, to) of `op` in static blocks of `block` rows (a partial last
/// block is padded to `block`, unless `exact` says there is none).
Value loopRows(OpBuilder &b, Location loc, linalg::LinalgOp op,
               linalg::GenericOp consumer, Value into, Value from, Value to,
               int64_t block, bool exact) {
  Value step = arith::ConstantIndexOp::create(b, loc, block);
  auto loop = scf::ForOp::create(b, loc, from, to, step, ValueRange{into});
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  Value row = loop.getInductionVar();
  Value left = arith::SubIOp::create(b, loc, to, row);
  Value rows = arith::MinSIOp::create(b, loc, left, step);
  // `exact`: every block is whole (to - from is a multiple of block).
  OpFoldResult size = block == 1 || exact ? OpFoldResult(b.getIndexAttr(block))
                                          : OpFoldResult(rows);
  Value next = sliceRows(b, loc, op, consumer, loop.getRegionIterArgs()[0], row,
                         size, block);
  scf::YieldOp::create(b, loc, next);
  return loop.getResult(0);
}

/// `matmul -> expand_shape [rows] to [B, S] -> elementwise generic` (the
/// bias add after a [B, S, K] x [K, N] matmul over collapsed rows) becomes
/// `matmul -> generic on [rows, N] -> expand_shape`, so the generic is the
/// matmul's direct consumer and is sliced with it. The generic's other
/// inputs are rows read with an identity map (collapsed the same way) or
/// broadcast along the rows (their map reads only the last dim).
void sinkRowExpansion(linalg::MatmulOp matmul) {
  Value result = matmul->getResult(0);
  auto expand = dyn_cast_or_null<tensor::ExpandShapeOp>(onlyRealUser(result));
  if (!expand)
    return;
  auto consumer =
      dyn_cast_or_null<linalg::GenericOp>(onlyRealUser(expand.getResult()));
  auto type = expand.getResultType();
  int64_t rank = type.getRank();
  SmallVector<ReassociationIndices> groups = expand.getReassociationIndices();
  if (!consumer || consumer.getNumResults() != 1 || groups.size() != 2 ||
      groups[1] != ReassociationIndices{rank - 1} ||
      consumer.getNumLoops() != consumer.getNumParallelLoops() ||
      consumer.getNumLoops() != rank ||
      consumer.getResult(0).getType() != type ||
      !consumer.hasPureTensorSemantics())
    return;
  MLIRContext *ctx = matmul.getContext();
  AffineExpr rows = getAffineDimExpr(0, ctx), cols = getAffineDimExpr(1, ctx);
  OpBuilder b(consumer);
  Location loc = consumer.getLoc();
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (OpOperand *input : consumer.getDpsInputOperands()) {
    AffineMap map = consumer.getMatchingIndexingMap(input);
    Value v = input->get();
    if (map.isIdentity()) {
      inputs.push_back(
          v == expand.getResult()
              ? result
              : tensor::CollapseShapeOp::create(b, loc, v, groups).getResult());
      maps.push_back(AffineMap::get(2, 0, {rows, cols}, ctx));
      continue;
    }
    // Broadcast along the rows: reads the last dim or nothing.
    SmallVector<AffineExpr> exprs;
    for (AffineExpr e : map.getResults()) {
      auto dim = dyn_cast<AffineDimExpr>(e);
      if (!dim || dim.getPosition() != unsigned(rank - 1))
        return;
      exprs.push_back(cols);
    }
    inputs.push_back(v);
    maps.push_back(AffineMap::get(2, 0, exprs, ctx));
  }
  Value init = tensor::CollapseShapeOp::create(
      b, loc, consumer.getDpsInits()[0], groups);
  maps.push_back(AffineMap::get(2, 0, {rows, cols}, ctx));
  auto collapsed = linalg::GenericOp::create(
      b, loc, TypeRange{init.getType()}, inputs, ValueRange{init}, maps,
      SmallVector<utils::IteratorType>(2, utils::IteratorType::parallel));
  IRMapping mapping;
  consumer.getRegion().cloneInto(&collapsed.getRegion(), mapping);
  Value expanded =
      tensor::ExpandShapeOp::create(b, loc, type, collapsed.getResult(0),
                                    groups, expand.getMixedOutputShape());
  consumer.getResult(0).replaceAllUsesWith(expanded);
  consumer->erase();
  // What is left of the old expansion are extents read from it: they are
  // its output shape.
  SmallVector<OpFoldResult> extents = expand.getMixedOutputShape();
  for (Operation *user : llvm::make_early_inc_range(expand->getUsers())) {
    auto dim = dyn_cast<tensor::DimOp>(user);
    std::optional<int64_t> index = dim ? dim.getConstantIndex() : std::nullopt;
    if (!index)
      return;
    OpBuilder at(dim);
    dim.getResult().replaceAllUsesWith(
        getValueOrCreateConstantIndexOp(at, dim.getLoc(), extents[*index]));
    dim->erase();
  }
  expand->erase();
}

/// A 3x3, stride-1, undilated convolution: one Winograd may take.
bool winogradShaped(linalg::Conv2DNhwcHwcfOp conv) {
  auto filter = cast<ShapedType>(conv.getInputs()[1].getType());
  auto ones = [](DenseIntElementsAttr attr) {
    return llvm::all_of(attr.getValues<int64_t>(),
                        [](int64_t v) { return v == 1; });
  };
  return filter.getDimSize(0) == 3 && filter.getDimSize(1) == 3 &&
         ones(conv.getStrides()) && ones(conv.getDilations());
}

struct SliceRunTimeRowsPass
    : public kiln::impl::SliceRunTimeRowsBase<SliceRunTimeRowsPass> {
  void runOnOperation() override {
    SmallVector<linalg::MatmulOp> matmuls;
    getOperation().walk([&](linalg::MatmulOp op) {
      if (onlyLeadingDimDynamic(op->getResult(0).getType()))
        matmuls.push_back(op);
    });
    for (linalg::MatmulOp op : matmuls)
      sinkRowExpansion(op);
    SmallVector<linalg::LinalgOp> candidates;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (!isa<linalg::Conv2DNhwcHwcfOp, linalg::DepthwiseConv2DNhwcHwcOp,
               linalg::PoolingNhwcMaxOp, linalg::PoolingNhwcSumOp,
               linalg::MatmulOp>(op))
        return;
      if (!op.hasPureTensorSemantics() || op->getNumResults() != 1 ||
          !onlyLeadingDimDynamic(op.getDpsInputs()[0].getType()) ||
          !onlyLeadingDimDynamic(op->getResult(0).getType()))
        return;
      // The direct and depthwise kernels take a run-time batch themselves
      // (their forall runs over the images): only a convolution Winograd
      // may take (3x3, stride 1, undilated; its kernel is static) goes
      // image by image.
      if (isa<linalg::DepthwiseConv2DNhwcHwcOp>(op))
        return;
      if (auto conv = dyn_cast<linalg::Conv2DNhwcHwcfOp>(op.getOperation());
          conv && !winogradShaped(conv))
        return;
      // A named range: drop_begin of the temporary would outlive it.
      auto inputs = op.getDpsInputs();
      for (Value other : llvm::drop_begin(inputs))
        if (!cast<ShapedType>(other.getType()).hasStaticShape())
          return;
      candidates.push_back(op);
    });
    for (linalg::LinalgOp op : candidates) {
      // The loop goes where the last op it replaces is: everything both
      // ops use is defined by then.
      linalg::GenericOp consumer = sliceableConsumer(op);
      Operation *last = consumer ? consumer.getOperation() : op.getOperation();
      OpBuilder b(last);
      Location loc = op.getLoc();
      Value init = consumer ? consumer.getDpsInits()[0] : op.getDpsInits()[0];
      // Every row block makes its own fill, so the result rows go into a
      // fresh tensor rather than a fill other contractions may share (which
      // bufferization would copy).
      if (tensor::EmptyOp empty = emptyOfStaticFill(init); empty && !consumer)
        init = tensor::EmptyOp::create(b, loc, empty.getType(),
                                       empty.getDynamicSizes());
      Value zero = arith::ConstantIndexOp::create(b, loc, 0);
      // Rows of the input before any padding (padding adds no rows), so
      // that the pad stays used by the op alone.
      Value source = op.getDpsInputs()[0];
      if (auto pad = source.getDefiningOp<tensor::PadOp>())
        source = pad.getSource();
      Value rows = tensor::DimOp::create(b, loc, source, 0);
      Value result;
      if (!isa<linalg::MatmulOp>(op)) {
        result = loopRows(b, loc, op, consumer, init, zero, rows, 1, true);
      } else {
        // Whole blocks of each size (static slices, no padding), then
        // kTailBlock rows at a time. A kernel of one column tile (N <=
        // kParallelColumns) has one task per block for the pool: its
        // whole blocks run in parallel instead.
        auto type = cast<RankedTensorType>(op->getResult(0).getType());
        bool narrow = type.getRank() == 2 && !type.isDynamicDim(1) &&
                      type.getDimSize(1) <= kParallelColumns;
        Value from = zero;
        result = init;
        for (int64_t size : kRowBlocks) {
          Value block = arith::ConstantIndexOp::create(b, loc, size);
          Value left = arith::SubIOp::create(b, loc, rows, from);
          Value full = arith::AddIOp::create(
              b, loc, from,
              arith::MulIOp::create(
                  b, loc, arith::DivUIOp::create(b, loc, left, block), block));
          result = narrow ? forallRows(b, loc, op, consumer, result, from, full,
                                       size)
                          : loopRows(b, loc, op, consumer, result, from, full,
                                     size, /*exact=*/true);
          from = full;
        }
        result = loopRows(b, loc, op, consumer, result, from, rows, kTailBlock,
                          /*exact=*/false);
      }
      KILN_LOG("codegen", Info)
          << "static slices of run-time rows for "
          << op->getName().getStringRef() << " at " << loc << "\n";
      last->getResult(0).replaceAllUsesWith(result);
      if (consumer) {
        consumer->erase();
        // Extents read from the op's result: the loop's result has them.
        op->getResult(0).replaceAllUsesWith(result);
      }
      op->erase();
    }
  }
};
} // namespace
