//===- ContractionWriter.cpp - Contraction match, loads and stores -------===//
#include "backends/gpu/ContractionKernels.h"
#include "backends/gpu/KernelBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::gpu_kernels;

namespace {
/// A ranked tensor of f32, f16 or bf16 (matchContraction checks which of
/// its dims may be run-time extents).
bool isMmaElementType(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor &&
         isa<Float32Type, Float16Type, BFloat16Type>(tensor.getElementType());
}

bool isProjectedPermutationOrConstant(AffineMap map) {
  return llvm::all_of(map.getResults(), [](AffineExpr e) {
    return isa<AffineDimExpr>(e) ||
           (isa<AffineConstantExpr>(e) &&
            cast<AffineConstantExpr>(e).getValue() == 0);
  });
}

/// Sums of dims times non-negative constants (a convolution's input map).
bool isSumOfScaledDims(AffineExpr e) {
  if (isa<AffineDimExpr>(e))
    return true;
  if (auto constant = dyn_cast<AffineConstantExpr>(e))
    return constant.getValue() >= 0;
  auto binary = dyn_cast<AffineBinaryOpExpr>(e);
  if (!binary)
    return false;
  if (binary.getKind() == AffineExprKind::Add)
    return isSumOfScaledDims(binary.getLHS()) &&
           isSumOfScaledDims(binary.getRHS());
  if (binary.getKind() == AffineExprKind::Mul) {
    auto constant = dyn_cast<AffineConstantExpr>(binary.getRHS());
    return constant && constant.getValue() >= 0 &&
           isSumOfScaledDims(binary.getLHS());
  }
  return false;
}

bool isSumOfScaledDims(AffineMap map) {
  return llvm::all_of(map.getResults(),
                      [](AffineExpr e) { return isSumOfScaledDims(e); });
}

/// The elementwise consumer of `value` (through single-use reshapes) that
/// reads it with an identity map as one of its inputs, if any.
linalg::GenericOp matchEpilogue(Value value, int64_t &operand) {
  while (value.hasOneUse()) {
    Operation *user = *value.getUsers().begin();
    if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(user)) {
      value = user->getResult(0);
      continue;
    }
    auto generic = dyn_cast<linalg::GenericOp>(user);
    // A body that reads its iteration indices (linalg.index) has none in
    // the kernel's tiles.
    if (!generic || generic.getNumDpsInits() != 1 ||
        generic.hasIndexSemantics() ||
        generic.getNumParallelLoops() != generic.getNumLoops() ||
        !generic.getIndexingMapsArray().back().isIdentity() ||
        !isMmaElementType(generic.getResult(0).getType()) ||
        generic.getRegionOutputArgs()[0].use_empty() == false)
      return {};
    for (OpOperand *input : generic.getDpsInputOperands()) {
      AffineMap map = generic.getMatchingIndexingMap(input);
      if (input->get() == value) {
        if (!map.isIdentity() || operand >= 0)
          return {};
        operand = input->getOperandNumber();
      } else if (!isProjectedPermutationOrConstant(map)) {
        return {};
      }
    }
    return operand >= 0 ? generic : linalg::GenericOp();
  }
  return {};
}

/// The dims of `op` by role: a contraction's batch/m/n/k, or a
/// convolution's (batch and output image rows, output channels columns,
/// filter window and input channels reduced). Fails for depthwise
/// convolutions (their channels are neither rows nor columns).
LogicalResult classifyDims(linalg::LinalgOp op, Contraction &c) {
  auto sorted = [](ArrayRef<unsigned> dims) {
    SmallVector<unsigned> result(dims.begin(), dims.end());
    llvm::sort(result);
    return result;
  };
  if (linalg::isaContractionOpInterface(op)) {
    FailureOr<linalg::ContractionDimensions> dims =
        linalg::inferContractionDims(op);
    if (failed(dims) || dims->m.empty() || dims->n.empty() || dims->k.empty())
      return failure();
    c.batch = sorted(dims->batch);
    c.m = sorted(dims->m);
    c.n = sorted(dims->n);
    c.k = sorted(dims->k);
    return success();
  }
  if (linalg::isaConvolutionOpInterface(op)) {
    FailureOr<linalg::ConvolutionDimensions> dims =
        linalg::inferConvolutionDims(op);
    if (failed(dims) || !dims->depth.empty() || dims->outputChannel.empty() ||
        dims->inputChannel.empty())
      return failure();
    SmallVector<unsigned> rows(dims->batch.begin(), dims->batch.end());
    SmallVector<unsigned> reduced(dims->filterLoop.begin(),
                                  dims->filterLoop.end());
    rows.append(dims->outputImage.begin(), dims->outputImage.end());
    reduced.append(dims->inputChannel.begin(), dims->inputChannel.end());
    c.m = sorted(rows);
    c.n = sorted(dims->outputChannel);
    c.k = sorted(reduced);
    return success();
  }
  return failure();
}

} // namespace

FailureOr<Contraction> gpu_kernels::matchContraction(linalg::LinalgOp op) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      !op.hasPureTensorSemantics())
    return failure();
  // f32, f16 or bf16 operands of one type (computed with f32
  // accumulators); the result in that type or f32 (the lowering
  // accumulates half-precision products in f32).
  for (Value value : op->getOperands())
    if (!isMmaElementType(value.getType()))
      return failure();
  auto elementOf = [](Value v) {
    return cast<ShapedType>(v.getType()).getElementType();
  };
  Type operands = elementOf(op.getDpsInputs()[0]);
  Type result = elementOf(op.getDpsInits()[0]);
  if (elementOf(op.getDpsInputs()[1]) != operands ||
      (result != operands && !result.isF32()))
    return failure();
  // The body must be a multiply-accumulate (what both interfaces check).
  Contraction c;
  c.op = op;
  if (failed(classifyDims(op, c)))
    return failure();
  c.loopSizes = op.getStaticLoopRanges();
  // An empty problem is no kernel (the generic path writes nothing).
  if (llvm::is_contained(c.loopSizes, 0))
    return failure();
  // Run-time extents only along the rows (a symbolic batch or sequence of
  // a Linear or convolution); a run-time K, N or batch keeps the generic
  // kernels.
  for (auto [d, size] : llvm::enumerate(c.loopSizes))
    if (ShapedType::isDynamic(size) && !llvm::is_contained(c.m, d))
      return failure();
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  c.mapA = maps[0];
  c.mapB = maps[1];
  c.mapC = maps[2];
  if (!isSumOfScaledDims(c.mapA) || !isSumOfScaledDims(c.mapB) ||
      !c.mapC.isProjectedPermutation())
    return failure();
  Value init = op.getDpsInits()[0];
  if (auto fill = init.getDefiningOp<linalg::FillOp>())
    c.fillValue = fill.getInputs()[0];
  else
    c.init = init;
  c.epilogue = matchEpilogue(op->getResult(0), c.epilogueOperand);
  return c;
}

ContractionWriter::ContractionWriter(OpBuilder &b, Contraction &c)
    : b(b), c(c), loc(c.op.getLoc()) {
  Operation *root =
      c.epilogue ? c.epilogue.getOperation() : c.op.getOperation();
  b.setInsertionPoint(root);
  zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0f));
  sizeM = c.size(c.m);
  sizeN = c.size(c.n);
  sizeK = c.size(c.k);
  bufA = readOnlyBuffer(b, loc,
                        c.narrowedA ? c.narrowedA : c.op.getDpsInputs()[0]);
  bufB = readOnlyBuffer(b, loc,
                        c.narrowedB ? c.narrowedB : c.op.getDpsInputs()[1]);
  if (c.init)
    bufInit = readOnlyBuffer(b, loc, c.init);
  if (c.epilogue)
    for (OpOperand *operand : c.epilogue.getDpsInputOperands())
      epilogueBuffers.push_back(int64_t(operand->getOperandNumber()) ==
                                        c.epilogueOperand
                                    ? Value()
                                    : readOnlyBuffer(b, loc, operand->get()));
  if (!c.runTimeRows())
    extentM = index(b, loc, sizeM);
  else {
    for (Range range : c.op.createLoopRanges(b, loc))
      loopExtents.push_back(
          getValueOrCreateConstantIndexOp(b, loc, range.size));
    extentM = index(b, loc, 1);
    for (unsigned d : c.m)
      extentM = arith::MulIOp::create(b, loc, extentM, loopExtents[d]);
    if (c.epilogue) {
      resultExtents = tensorExtents(b, loc, c.op.getDpsInits()[0]);
      epilogueExtents = tensorExtents(b, loc, c.epilogue.getDpsInits()[0]);
    }
  }
  // The root's init holds the result's run-time dims.
  out = newBufferLike(b, loc,
                      cast<DestinationStyleOpInterface>(root).getDpsInits()[0]);
}

SmallVector<Value> ContractionWriter::extents(ArrayRef<unsigned> dims) {
  SmallVector<Value> values;
  for (unsigned d : dims)
    values.push_back(loopExtents.empty() ? index(b, loc, c.loopSizes[d])
                                         : loopExtents[d]);
  return values;
}

Type ContractionWriter::elementType(Value shaped) {
  return cast<ShapedType>(shaped.getType()).getElementType();
}

Value ContractionWriter::widen(Value v) {
  return v.getType().isF32()
             ? v
             : arith::ExtFOp::create(b, loc, b.getF32Type(), v).getResult();
}

Value ContractionWriter::narrow(Value v, Type type) {
  return type == v.getType()
             ? v
             : arith::TruncFOp::create(b, loc, type, v).getResult();
}

SmallVector<Value> ContractionWriter::loops(ValueRange batch, Value mLinear,
                                            Value nLinear, Value kLinear) {
  SmallVector<Value> values(c.loopSizes.size(), index(b, loc, 0));
  for (auto [dim, value] : llvm::zip(c.batch, batch))
    values[dim] = value;
  auto place = [&](ArrayRef<unsigned> dims, Value linear) {
    if (dims.size() == 1) {
      values[dims[0]] = linear;
      return;
    }
    for (auto [dim, value] :
         llvm::zip(dims, delinearize(b, loc, linear, extents(dims))))
      values[dim] = value;
  };
  place(c.m, mLinear);
  place(c.n, nLinear);
  place(c.k, kLinear);
  return values;
}

SmallVector<Value> ContractionWriter::indicesA(ValueRange batch, Value m,
                                               Value k) {
  return applyMap(b, loc, c.mapA, loops(batch, m, index(b, loc, 0), k));
}

SmallVector<Value> ContractionWriter::indicesB(ValueRange batch, Value k,
                                               Value n) {
  return applyMap(b, loc, c.mapB, loops(batch, index(b, loc, 0), n, k));
}

Value ContractionWriter::loadA(ValueRange batch, Value m, Value k,
                               Value inBounds) {
  return widen(guardedLoad(b, loc, bufA, indicesA(batch, m, k), inBounds,
                           narrow(zero, elementType(bufA))));
}

Value ContractionWriter::loadB(ValueRange batch, Value k, Value n,
                               Value inBounds) {
  return widen(guardedLoad(b, loc, bufB, indicesB(batch, k, n), inBounds,
                           narrow(zero, elementType(bufB))));
}

void ContractionWriter::storeResult(ValueRange batch, Value mLinear, Value n,
                                    Value acc) {
  SmallVector<Value> loopValues = loops(batch, mLinear, n, index(b, loc, 0));
  SmallVector<Value> cIndices = applyMap(b, loc, c.mapC, loopValues);
  if (bufInit)
    acc = arith::AddFOp::create(
        b, loc, acc, widen(memref::LoadOp::create(b, loc, bufInit, cIndices)));
  // The accumulator in the contraction's own type (f16/bf16 models).
  acc = narrow(acc, elementType(c.op->getResult(0)));
  if (!c.epilogue) {
    memref::StoreOp::create(b, loc, acc, out, cIndices);
    return;
  }
  // The element's place in the epilogue's space: the same row-major
  // position (reshapes keep it).
  auto cType = cast<RankedTensorType>(c.op->getResult(0).getType());
  auto eType = cast<RankedTensorType>(c.epilogue.getResult(0).getType());
  Value flat = resultExtents.empty()
                   ? linearize(b, loc, cIndices, cType.getShape())
                   : linearize(b, loc, cIndices, resultExtents);
  SmallVector<Value> coords =
      epilogueExtents.empty()
          ? delinearize(b, loc, flat, eType.getShape())
          : delinearize(b, loc, flat, ValueRange(epilogueExtents));
  IRMapping mapping;
  Block *body = c.epilogue.getBody();
  for (auto [i, operand] : llvm::enumerate(c.epilogue.getDpsInputOperands())) {
    Value arg = body->getArgument(i);
    if (int64_t(operand->getOperandNumber()) == c.epilogueOperand) {
      mapping.map(arg, acc);
      continue;
    }
    AffineMap map = c.epilogue.getMatchingIndexingMap(operand);
    mapping.map(arg, memref::LoadOp::create(b, loc, epilogueBuffers[i],
                                            applyMap(b, loc, map, coords)));
  }
  for (Operation &op : body->without_terminator())
    b.clone(op, mapping);
  Value result = mapping.lookup(body->getTerminator()->getOperand(0));
  memref::StoreOp::create(b, loc, result, out, coords);
}

SmallVector<Value> ContractionWriter::batchIndices(Value blockZ) {
  if (c.batch.empty())
    return {};
  if (splits > 1)
    blockZ = arith::DivUIOp::create(b, loc, blockZ, index(b, loc, splits));
  return delinearize(b, loc, blockZ, c.sizes(c.batch));
}

SmallVector<Value> ContractionWriter::grid(int64_t tileM, int64_t tileN) {
  Value rowTiles =
      ShapedType::isDynamic(sizeM)
          ? arith::CeilDivUIOp::create(b, loc, extentM, index(b, loc, tileM))
                .getResult()
          : index(b, loc, llvm::divideCeil(sizeM, tileM));
  return {index(b, loc, llvm::divideCeil(sizeN, tileN)), rowTiles,
          index(b, loc, c.size(c.batch) * splits)};
}

void ContractionWriter::planSplits(int64_t tileM, int64_t tileN, int64_t step) {
  // About one block per SM of a large GPU (132 on an H100) when the
  // tiles alone give fewer than 64, each slice at least 256 deep.
  constexpr int64_t kWantedBlocks = 128, kFewBlocks = 64, kMinSlice = 256;
  // Run-time rows: how many tiles there are is known only at run time.
  if (ShapedType::isDynamic(sizeM))
    return;
  int64_t batch = c.size(c.batch);
  int64_t blocks =
      llvm::divideCeil(sizeM, tileM) * llvm::divideCeil(sizeN, tileN) * batch;
  if (blocks >= kFewBlocks)
    return;
  int64_t wanted = std::min(kWantedBlocks / blocks, sizeK / kMinSlice);
  if (wanted < 2 || batch * wanted > 65535)
    return;
  sliceK = llvm::alignTo(llvm::divideCeil(sizeK, wanted), step);
  splits = llvm::divideCeil(sizeK, sliceK);
  if (splits < 2) {
    splits = 1;
    return;
  }
  workspace = newBuffer(b, loc, {splits, batch, sizeM, sizeN}, b.getF32Type());
}

Value ContractionWriter::initialAccumulator() {
  return c.fillValue && splits == 1 ? widen(c.fillValue) : zero;
}

std::pair<Value, Value> ContractionWriter::kRange(Value blockZ) {
  if (splits == 1)
    return {index(b, loc, 0), index(b, loc, sizeK)};
  Value slice = arith::RemUIOp::create(b, loc, blockZ, index(b, loc, splits));
  Value begin = arith::MulIOp::create(b, loc, slice, index(b, loc, sliceK));
  Value end = arith::MinUIOp::create(
      b, loc, arith::AddIOp::create(b, loc, begin, index(b, loc, sliceK)),
      index(b, loc, sizeK));
  return {begin, end};
}

void ContractionWriter::storeAccumulator(Value blockZ, ValueRange batch,
                                         Value m, Value n, Value acc) {
  if (splits == 1)
    return storeResult(batch, m, n, acc);
  Value slice = arith::RemUIOp::create(b, loc, blockZ, index(b, loc, splits));
  Value batchLinear =
      arith::DivUIOp::create(b, loc, blockZ, index(b, loc, splits));
  memref::StoreOp::create(b, loc, acc, workspace,
                          ValueRange{slice, batchLinear, m, n});
}

void ContractionWriter::finish(gpu::LaunchOp launch) {
  Operation *root =
      c.epilogue ? c.epilogue.getOperation() : c.op.getOperation();
  b.setInsertionPointAfter(launch);
  if (splits > 1) {
    // One thread per output element: the slices' sum, then the result's
    // store (init, epilogue) as a one-slice kernel would do it.
    constexpr int64_t kThreads = 256;
    int64_t total = c.size(c.batch) * sizeM * sizeN;
    gpu::LaunchOp sum = createLaunch(
        b, loc, {index(b, loc, llvm::divideCeil(total, kThreads))}, {kThreads});
    Value linear =
        arith::AddIOp::create(b, loc,
                              arith::MulIOp::create(b, loc, sum.getBlockIds().x,
                                                    index(b, loc, kThreads)),
                              sum.getThreadIds().x);
    auto inRange = scf::IfOp::create(
        b, loc, lessThan(b, loc, linear, index(b, loc, total)),
        /*withElseRegion=*/false);
    b.setInsertionPointToStart(&inRange.getThenRegion().front());
    SmallVector<Value> at =
        delinearize(b, loc, linear, {c.size(c.batch), sizeM, sizeN});
    Value acc = c.fillValue ? widen(c.fillValue) : zero;
    for (int64_t slice = 0; slice < splits; ++slice)
      acc = arith::AddFOp::create(
          b, loc, acc,
          memref::LoadOp::create(
              b, loc, workspace,
              ValueRange{index(b, loc, slice), at[0], at[1], at[2]}));
    SmallVector<Value> batch;
    if (!c.batch.empty())
      batch = delinearize(b, loc, at[0], c.sizes(c.batch));
    storeResult(batch, at[1], at[2], acc);
    b.setInsertionPointAfter(sum);
  }
  root->getResult(0).replaceAllUsesWith(asTensor(b, loc, out));
}
