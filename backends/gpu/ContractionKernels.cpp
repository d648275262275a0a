//===- ContractionKernels.cpp - Tiled f32 matmul kernels with epilogues ---===//
//
// A static f32 contraction (matmul, batch matmul, a Linear on [B, S, H], a
// transposed operand) or convolution (implicit GEMM: rows are the batch and
// output pixels, columns the output channels, the filter window and input
// channels are reduced; each group of dims linearized, operands read
// through their indexing maps) becomes one kernel that stages tiles of both
// operands through shared memory:
//
//   grid (ceil(N/64), ceil(M/64), batch), 16x16 threads, a 64x64 block tile;
//   per 16-deep K step each thread loads 4 elements of A and 4 of B into
//   shared memory (A transposed, its rows padded against bank conflicts),
//   the block synchronizes, and each thread accumulates a 4x4 register tile
//   (rows ty + 16 i, columns tx + 16 j, so neighbouring threads store
//   neighbouring columns) with 16 FMAs per loaded pair of 4-vectors.
//
// The accumulator starts from a linalg.fill's value (or reads the init
// tensor). When the contraction's only use is an all-parallel
// linalg.generic (through reshapes) that reads it elementwise, that generic
// is the epilogue: each thread applies its body to its accumulators (bias,
// activation, residual add) and stores the generic's result, so the
// contraction's result never goes to memory.
//
// The kernel is written on buffers (bufferization.to_buffer of the operands,
// a memref.alloc for the result and to_tensor back), so bufferization sees
// it as one opaque launch and kiln-gpu-form-kernels keeps it.
//
//===----------------------------------------------------------------------===//
#include "backends/gpu/KernelBuilder.h"
#include "backends/gpu/Passes.h"

#include "compiler/logging/Logging.h"
#include "compiler/logging/Report.h"
#include "dialects/kiln/NodeLocation.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::kiln {
#define GEN_PASS_DEF_CONTRACTIONKERNELS
#include "backends/gpu/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::gpu_kernels;

namespace {
// Block tile, K step, threads per side and the register tile they imply.
constexpr int64_t kTileM = 64, kTileN = 64, kTileK = 16, kThreads = 16;
constexpr int64_t kRegM = kTileM / kThreads, kRegN = kTileN / kThreads;
constexpr int64_t kAPad = 1; // As[k][m] rows of 65 floats

struct Contraction {
  linalg::LinalgOp op;
  /// Loop dims by role, each group linearized (last dim fastest): batch is
  /// grid z, m the rows and n the columns of the result tile, k reduced.
  SmallVector<unsigned> batch, m, n, k;
  SmallVector<int64_t> loopSizes;
  AffineMap mapA, mapB, mapC;
  /// The accumulator's start: a fill's scalar, else the init tensor.
  Value fillValue, init;
  /// The elementwise consumer applied in the store, and the reshapes
  /// between it and the contraction.
  linalg::GenericOp epilogue;
  int64_t epilogueOperand = -1;

  SmallVector<int64_t> sizes(ArrayRef<unsigned> dims) const {
    SmallVector<int64_t> result;
    for (unsigned d : dims)
      result.push_back(loopSizes[d]);
    return result;
  }
  int64_t size(ArrayRef<unsigned> dims) const {
    int64_t total = 1;
    for (unsigned d : dims)
      total *= loopSizes[d];
    return total;
  }
};

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
    if (!generic || generic.getNumDpsInits() != 1 ||
        generic.getNumParallelLoops() != generic.getNumLoops() ||
        !generic.getIndexingMapsArray().back().isIdentity() ||
        !isStaticF32Tensor(generic.getResult(0)) ||
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

FailureOr<Contraction> matchContraction(linalg::LinalgOp op) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      !op.hasPureTensorSemantics())
    return failure();
  for (Value value : op->getOperands())
    if (!isStaticF32Tensor(value))
      return failure();
  // The body must be a multiply-accumulate (what both interfaces check).
  Contraction c;
  c.op = op;
  if (failed(classifyDims(op, c)))
    return failure();
  c.loopSizes = op.getStaticLoopRanges();
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

class KernelWriter {
public:
  KernelWriter(OpBuilder &b, Contraction &c) : b(b), c(c) {}

  /// Replaces the contraction (and its epilogue) with the kernel.
  void write();

private:
  /// Loop values for the loads of a (batch, m, k) or (batch, k, n) element
  /// (each of m, n, k linearized over its dims).
  SmallVector<Value> loops(ValueRange batch, Value mLinear, Value nLinear,
                           Value kLinear);
  Value loadTile(Value buffer, AffineMap map, ValueRange loopValues,
                 Value inBounds);
  void storeResult(ValueRange batch, Value mLinear, Value n, Value acc);

  OpBuilder &b;
  Contraction &c;
  Location loc = c.op.getLoc();
  Value bufA, bufB, bufInit, out;
  SmallVector<Value> epilogueBuffers;
  Value zero;
  int64_t sizeM = 0, sizeN = 0, sizeK = 0;
};

SmallVector<Value> KernelWriter::loops(ValueRange batch, Value mLinear,
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
         llvm::zip(dims, delinearize(b, loc, linear, c.sizes(dims))))
      values[dim] = value;
  };
  place(c.m, mLinear);
  place(c.n, nLinear);
  place(c.k, kLinear);
  return values;
}

Value KernelWriter::loadTile(Value buffer, AffineMap map, ValueRange loopValues,
                             Value inBounds) {
  return guardedLoad(b, loc, buffer, applyMap(b, loc, map, loopValues),
                     inBounds, zero);
}

void KernelWriter::storeResult(ValueRange batch, Value mLinear, Value n,
                               Value acc) {
  SmallVector<Value> loopValues = loops(batch, mLinear, n, index(b, loc, 0));
  SmallVector<Value> cIndices = applyMap(b, loc, c.mapC, loopValues);
  if (bufInit)
    acc = arith::AddFOp::create(
        b, loc, acc, memref::LoadOp::create(b, loc, bufInit, cIndices));
  if (!c.epilogue) {
    memref::StoreOp::create(b, loc, acc, out, cIndices);
    return;
  }
  // The element's place in the epilogue's space: the same row-major
  // position (reshapes keep it).
  auto cType = cast<RankedTensorType>(c.op->getResult(0).getType());
  auto eType = cast<RankedTensorType>(c.epilogue.getResult(0).getType());
  Value flat = linearize(b, loc, cIndices, cType.getShape());
  SmallVector<Value> coords = delinearize(b, loc, flat, eType.getShape());
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

void KernelWriter::write() {
  Operation *root =
      c.epilogue ? c.epilogue.getOperation() : c.op.getOperation();
  b.setInsertionPoint(root);
  zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0f));
  sizeM = c.size(c.m);
  sizeN = c.size(c.n);
  sizeK = c.size(c.k);
  bufA = readOnlyBuffer(b, loc, c.op.getDpsInputs()[0]);
  bufB = readOnlyBuffer(b, loc, c.op.getDpsInputs()[1]);
  if (c.init)
    bufInit = readOnlyBuffer(b, loc, c.init);
  if (c.epilogue)
    for (OpOperand *operand : c.epilogue.getDpsInputOperands())
      epilogueBuffers.push_back(int64_t(operand->getOperandNumber()) ==
                                        c.epilogueOperand
                                    ? Value()
                                    : readOnlyBuffer(b, loc, operand->get()));
  auto resultType = cast<RankedTensorType>(root->getResult(0).getType());
  out = newBuffer(b, loc, resultType.getShape(), b.getF32Type());

  SmallVector<int64_t> batchSizes;
  for (unsigned d : c.batch)
    batchSizes.push_back(c.loopSizes[d]);
  int64_t batchTotal = c.size(c.batch);
  SmallVector<Value> grid = {index(b, loc, llvm::divideCeil(sizeN, kTileN)),
                             index(b, loc, llvm::divideCeil(sizeM, kTileM)),
                             index(b, loc, batchTotal)};
  Type f32 = b.getF32Type();
  MemRefType tileA = workgroupMemRef({kTileK, kTileM + kAPad}, f32);
  MemRefType tileB = workgroupMemRef({kTileK, kTileN}, f32);
  gpu::LaunchOp launch =
      createLaunch(b, loc, grid, {kThreads, kThreads}, {tileA, tileB});
  Value sharedA = launch.getWorkgroupAttributions()[0];
  Value sharedB = launch.getWorkgroupAttributions()[1];

  Value tx = launch.getThreadIds().x, ty = launch.getThreadIds().y;
  Value tid = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, ty, index(b, loc, kThreads)), tx);
  Value m0 = arith::MulIOp::create(b, loc, launch.getBlockIds().y,
                                   index(b, loc, kTileM));
  Value n0 = arith::MulIOp::create(b, loc, launch.getBlockIds().x,
                                   index(b, loc, kTileN));
  SmallVector<Value> batch =
      batchSizes.empty()
          ? SmallVector<Value>()
          : delinearize(b, loc, launch.getBlockIds().z, batchSizes);
  Value mBound = index(b, loc, sizeM), nBound = index(b, loc, sizeN),
        kBound = index(b, loc, sizeK);
  auto add = [&](Value x, int64_t y) -> Value {
    return y == 0 ? x : arith::AddIOp::create(b, loc, x, index(b, loc, y));
  };
  auto both = [&](Value p, Value q) -> Value {
    return arith::AndIOp::create(b, loc, p, q);
  };

  SmallVector<Value> initAcc(kRegM * kRegN, c.fillValue ? c.fillValue : zero);
  auto kLoop = scf::ForOp::create(b, loc, index(b, loc, 0), kBound,
                                  index(b, loc, kTileK), initAcc);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(kLoop.getBody());
    Value k0 = kLoop.getInductionVar();
    // A: element (row, col) of the 64x16 tile; 16 threads read one row's
    // 16 consecutive k.
    Value aRow = arith::DivUIOp::create(b, loc, tid, index(b, loc, kTileK));
    Value aCol = arith::RemUIOp::create(b, loc, tid, index(b, loc, kTileK));
    Value aK = arith::AddIOp::create(b, loc, k0, aCol);
    for (int64_t r = 0; r < kTileM * kTileK / (kThreads * kThreads); ++r) {
      Value row = add(aRow, r * (kThreads * kThreads / kTileK));
      Value m = arith::AddIOp::create(b, loc, m0, row);
      Value ok =
          both(lessThan(b, loc, m, mBound), lessThan(b, loc, aK, kBound));
      Value v =
          loadTile(bufA, c.mapA, loops(batch, m, index(b, loc, 0), aK), ok);
      memref::StoreOp::create(b, loc, v, sharedA, ValueRange{aCol, row});
    }
    // B: element (krow, ncol) of the 16x64 tile; 64 threads read one
    // row's 64 consecutive n.
    Value bRow = arith::DivUIOp::create(b, loc, tid, index(b, loc, kTileN));
    Value bCol = arith::RemUIOp::create(b, loc, tid, index(b, loc, kTileN));
    Value bN = arith::AddIOp::create(b, loc, n0, bCol);
    for (int64_t r = 0; r < kTileK * kTileN / (kThreads * kThreads); ++r) {
      Value krow = add(bRow, r * (kThreads * kThreads / kTileN));
      Value kk = arith::AddIOp::create(b, loc, k0, krow);
      Value ok =
          both(lessThan(b, loc, kk, kBound), lessThan(b, loc, bN, nBound));
      Value v =
          loadTile(bufB, c.mapB, loops(batch, index(b, loc, 0), bN, kk), ok);
      memref::StoreOp::create(b, loc, v, sharedB, ValueRange{krow, bCol});
    }
    gpu::BarrierOp::create(b, loc);

    auto inner =
        scf::ForOp::create(b, loc, index(b, loc, 0), index(b, loc, kTileK),
                           index(b, loc, 1), kLoop.getRegionIterArgs());
    {
      OpBuilder::InsertionGuard innerGuard(b);
      b.setInsertionPointToStart(inner.getBody());
      Value kk = inner.getInductionVar();
      SmallVector<Value> a, bv;
      for (int64_t i = 0; i < kRegM; ++i)
        a.push_back(memref::LoadOp::create(
            b, loc, sharedA, ValueRange{kk, add(ty, i * kThreads)}));
      for (int64_t j = 0; j < kRegN; ++j)
        bv.push_back(memref::LoadOp::create(
            b, loc, sharedB, ValueRange{kk, add(tx, j * kThreads)}));
      SmallVector<Value> next;
      for (int64_t i = 0; i < kRegM; ++i)
        for (int64_t j = 0; j < kRegN; ++j)
          next.push_back(math::FmaOp::create(
              b, loc, a[i], bv[j], inner.getRegionIterArgs()[i * kRegN + j]));
      scf::YieldOp::create(b, loc, next);
    }
    gpu::BarrierOp::create(b, loc);
    scf::YieldOp::create(b, loc, inner.getResults());
  }

  for (int64_t i = 0; i < kRegM; ++i)
    for (int64_t j = 0; j < kRegN; ++j) {
      Value m = arith::AddIOp::create(b, loc, m0, add(ty, i * kThreads));
      Value n = arith::AddIOp::create(b, loc, n0, add(tx, j * kThreads));
      auto guard = scf::IfOp::create(
          b, loc,
          both(lessThan(b, loc, m, mBound), lessThan(b, loc, n, nBound)),
          /*withElseRegion=*/false);
      OpBuilder::InsertionGuard insideGuard(b);
      b.setInsertionPointToStart(&guard.getThenRegion().front());
      storeResult(batch, m, n, kLoop.getResult(i * kRegN + j));
    }

  b.setInsertionPointAfter(launch);
  Value result = asTensor(b, loc, out);
  root->getResult(0).replaceAllUsesWith(result);
}

struct ContractionKernelsPass
    : public kiln::impl::ContractionKernelsBase<ContractionKernelsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> candidates;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (!op->getParentOfType<scf::ForallOp>()) // not inside a tiled loop
        candidates.push_back(op);
    });
    // Matched one at a time: an elementwise op reading two contractions
    // (x·W + h·R) is the epilogue of the first only; the second then
    // stores its result for that kernel to read.
    DenseSet<Operation *> erased;
    for (linalg::LinalgOp op : candidates) {
      if (erased.contains(op))
        continue;
      FailureOr<Contraction> match = matchContraction(op);
      if (failed(match))
        continue;
      Contraction &c = *match;
      OpBuilder b(c.op);
      KernelWriter(b, c).write();
      KILN_LOG("gpu", Info)
          << "tiled contraction kernel for " << onnxNodeName(c.op->getLoc())
          << " (" << c.size(c.batch) << " x " << c.size(c.m) << "x"
          << c.size(c.n) << "x" << c.size(c.k)
          << (c.epilogue ? ", epilogue " + onnxNodeName(c.epilogue->getLoc())
                         : std::string())
          << ")\n";
      // The replaced op goes; what only fed it (the contraction, its fill,
      // reshapes) is left dead for the cleanup after this pass.
      if (c.epilogue)
        report::count("epilogues_fused");
      Operation *root =
          c.epilogue ? c.epilogue.getOperation() : c.op.getOperation();
      erased.insert(root);
      root->erase();
    }
  }
};
} // namespace
