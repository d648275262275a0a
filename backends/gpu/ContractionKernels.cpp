//===- ContractionKernels.cpp - Tiled f32 matmul kernels with epilogues ---===//
//
// A static f32 contraction (matmul, batch matmul, a Linear on [B, S, H], a
// transposed operand) or convolution (implicit GEMM: rows are the batch and
// output pixels, columns the output channels, the filter window and input
// channels are reduced; each group of dims linearized, operands read
// through their indexing maps) becomes one kernel that stages tiles of both
// operands through shared memory:
//
//   grid (ceil(N/64), ceil(M/64), batch x K slices), 16x16 threads, a
//   64x64 block tile;
//   per 16-deep K step each thread loads 4 elements of A and 4 of B into
//   shared memory (A transposed, its rows padded against bank conflicts),
//   the block synchronizes, and each thread accumulates a 4x4 register tile
//   (rows ty + 16 i, columns tx + 16 j, so neighbouring threads store
//   neighbouring columns) with 16 FMAs per loaded pair of 4-vectors.
//
// Split K (ContractionWriter::planSplits): a problem with fewer than 64
// output tiles (a 7x7 convolution at batch 1, a Linear on 128 tokens) and a
// deep K also cuts K into slices, one block per tile and slice; each block
// stores its partial product to a workspace and a second kernel sums the
// slices and applies the fill, init and epilogue. The tensor-core kernels
// do the same.
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
#include "backends/gpu/ContractionKernels.h"
#include "backends/gpu/KernelBuilder.h"
#include "backends/gpu/Passes.h"

#include "compiler/logging/Logging.h"
#include "compiler/logging/Report.h"
#include "dialects/kiln/NodeLocation.h"
#include "passes/graph/ConstantBytes.h"
#include "passes/lowering/LoweringUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

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
constexpr int64_t kAPad = 1;          // As[k][m] rows of 65 floats
constexpr int64_t kMaxGridYZ = 65535; // CUDA's limit for grid y and z

/// The SIMT kernel: a 64x64 block tile, 4x4 FMAs per thread.
void writeSimtKernel(OpBuilder &b, Contraction &c) {
  ContractionWriter w(b, c);
  w.planSplits(kTileM, kTileN, kTileK);
  Location loc = w.loc;
  int64_t sizeN = w.sizeN;
  Type f32 = b.getF32Type();
  MemRefType tileA = workgroupMemRef({kTileK, kTileM + kAPad}, f32);
  MemRefType tileB = workgroupMemRef({kTileK, kTileN}, f32);
  gpu::LaunchOp launch = createLaunch(b, loc, w.grid(kTileM, kTileN),
                                      {kThreads, kThreads}, {tileA, tileB});
  Value sharedA = launch.getWorkgroupAttributions()[0];
  Value sharedB = launch.getWorkgroupAttributions()[1];

  Value tx = launch.getThreadIds().x, ty = launch.getThreadIds().y;
  Value tid = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, ty, index(b, loc, kThreads)), tx);
  Value m0 = arith::MulIOp::create(b, loc, launch.getBlockIds().y,
                                   index(b, loc, kTileM));
  Value n0 = arith::MulIOp::create(b, loc, launch.getBlockIds().x,
                                   index(b, loc, kTileN));
  Value blockZ = launch.getBlockIds().z;
  SmallVector<Value> batch = w.batchIndices(blockZ);
  auto [kBegin, kBound] = w.kRange(blockZ);
  Value mBound = w.extentM, nBound = index(b, loc, sizeN);
  auto add = [&](Value x, int64_t y) -> Value {
    return y == 0 ? x : arith::AddIOp::create(b, loc, x, index(b, loc, y));
  };
  auto both = [&](Value p, Value q) -> Value {
    return arith::AndIOp::create(b, loc, p, q);
  };

  SmallVector<Value> initAcc(kRegM * kRegN, w.initialAccumulator());
  auto kLoop = scf::ForOp::create(b, loc, kBegin, kBound, index(b, loc, kTileK),
                                  initAcc);
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
      Value v = w.loadA(batch, m, aK, ok);
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
      Value v = w.loadB(batch, kk, bN, ok);
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
      w.storeAccumulator(blockZ, batch, m, n, kLoop.getResult(i * kRegN + j));
    }

  w.finish(launch);
}

/// `input` converted elementwise to `element` (convertTensor: arith.truncf
/// or arith.extf), right after its definition.
Value castElements(Value input, Type element) {
  OpBuilder b(input.getContext());
  if (Operation *producer = input.getDefiningOp())
    b.setInsertionPointAfter(producer);
  else
    b.setInsertionPointToStart(cast<BlockArgument>(input).getOwner());
  return convertTensor(b, input.getLoc(), input,
                       getElementTypeOrSelf(input.getType()), element);
}

/// The `narrow` tensor that `value` is an exact widening of (an
/// elementwise arith.extf), if it is one.
Value widenedFrom(Value value, Type narrow) {
  auto widen = value.getDefiningOp<linalg::GenericOp>();
  if (!widen || widen.getNumDpsInputs() != 1 ||
      getElementTypeOrSelf(widen.getDpsInputs()[0].getType()) != narrow ||
      !llvm::all_of(widen.getIndexingMapsArray(),
                    [](AffineMap m) { return m.isIdentity(); }))
    return Value();
  Block &body = widen.getRegion().front();
  auto extend = dyn_cast<arith::ExtFOp>(&body.front());
  if (!extend || extend.getIn() != body.getArgument(0) ||
      body.getTerminator()->getOperand(0) != extend.getResult())
    return Value();
  return widen.getDpsInputs()[0];
}

/// Whether grid y (row tiles) or z (batch) of `c`'s kernel would pass
/// CUDA's 65535 blocks.
/// (Run-time rows past that, 4M rows, fail at launch with the kernel
/// named.)
bool tooLargeForGrid(const Contraction &c) {
  return (!c.runTimeRows() &&
          llvm::divideCeil(c.size(c.m), kTileM) > kMaxGridYZ) ||
         c.size(c.batch) > kMaxGridYZ;
}

struct ContractionKernelsPass
    : public kiln::impl::ContractionKernelsBase<ContractionKernelsPass> {
  using Base::Base;

  /// `operand` as a `narrow` constant when it is an f32 constant, made once
  /// per constant (weights shared by several contractions stay shared).
  Value narrowedWeight(Value operand, Type narrow) {
    auto constant = operand.getDefiningOp<arith::ConstantOp>();
    auto value =
        constant ? dyn_cast<ElementsAttr>(constant.getValue()) : ElementsAttr();
    if (!value)
      return Value();
    auto key = std::make_pair(operand, narrow);
    if (Value known = narrowed.lookup(key))
      return known;
    std::optional<ElementsAttr> attr =
        narrowConstant(value, narrow, "narrowed_weight");
    if (!attr)
      return Value();
    OpBuilder b(constant);
    b.setInsertionPointAfter(constant);
    Value copy =
        arith::ConstantOp::create(b, constant.getLoc(), cast<TypedAttr>(*attr));
    narrowed[key] = copy;
    report::count("gpu_weights_narrowed");
    return copy;
  }
  DenseMap<std::pair<Value, Type>, Value> narrowed;

  /// A run-time f32 operand A (`isA`) or B of a contraction that fills the
  /// GPU with large tiles, rounded to `narrow` by an elementwise op of its
  /// own (one per operand, shared by its contractions): the tensor-core
  /// kernel then copies it to shared memory as it is (cp.async) instead of
  /// converting it in registers, and reads half the bytes. The kernel
  /// rounded the same way while staging, so the results do not change.
  /// Small problems, and operands whose layout keeps element loads, keep
  /// the conversion in the kernel (a launch more would cost them more). An
  /// operand that narrowInProducer rounded is read narrow in any case.
  Value narrowedActivation(const Contraction &c, Value operand, bool isA,
                           Type narrow) {
    auto type = dyn_cast<RankedTensorType>(operand.getType());
    if (!type || !type.hasStaticShape() || !type.getElementType().isF32() ||
        !fillsGpuWithLargeTiles(c))
      return Value();
    if (Value source = widenedFrom(operand, narrow))
      return source;
    if (!takesCpAsync(c, isA))
      return Value();
    auto key = std::make_pair(operand, narrow);
    if (Value known = narrowed.lookup(key))
      return known;
    Value copy = castElements(operand, narrow);
    narrowed[key] = copy;
    report::count("gpu_activations_narrowed");
    return copy;
  }

  /// Before any kernel is written: an f32 operand of a large contraction
  /// that only it reads, made by an elementwise op (a GELU, a bias add,
  /// another contraction's epilogue), is rounded in that op instead of in
  /// an op of its own: the op yields `narrow`, and an extf op stands in
  /// for the f32 value until the contraction's kernel, which reads the
  /// narrow one (narrowedActivation looks through the extf: the rounding
  /// op may become another kernel's epilogue, replaced by its result),
  /// replaces it.
  ///
  ///   %g = linalg.generic ... -> tensor<BxSxKxf32>     (GELU)
  ///   %c = tensor.collapse_shape %g [[0, 1], [2]]
  ///   linalg.matmul ins(%c, %w ...)
  /// becomes
  ///   %g = linalg.generic ... -> tensor<BxSxKxbf16>    (GELU, truncf)
  ///   %c = tensor.collapse_shape %g [[0, 1], [2]]    (bf16)
  ///   %e = linalg.generic ins(%c) ... -> tensor<MxKxf32>   (extf)
  ///   linalg.matmul ins(%e, %w ...)
  void narrowInProducer(OpOperand &use, Type narrow) {
    // Through reshapes that only this use reads (a [B, S, K] GELU read as
    // [B*S, K]): they are remade on the narrow tensor.
    SmallVector<Operation *> reshapes;
    Value operand = use.get();
    while (Operation *def = operand.getDefiningOp()) {
      if (!isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(def) ||
          !operand.hasOneUse())
        break;
      reshapes.push_back(def);
      operand = def->getOperand(0);
    }
    auto producer = operand.getDefiningOp<linalg::GenericOp>();
    auto type = dyn_cast<RankedTensorType>(operand.getType());
    if (!producer || !operand.hasOneUse() || producer->getNumResults() != 1 ||
        producer.getNumDpsInits() != 1 || !type || !type.hasStaticShape() ||
        !type.getElementType().isF32() ||
        producer.getNumParallelLoops() != producer.getNumLoops() ||
        producer.payloadUsesValueFromOperand(producer.getDpsInitOperand(0)))
      return;
    OpBuilder b(producer);
    Location loc = producer.getLoc();
    Value init =
        tensor::EmptyOp::create(b, loc, type.getShape(), narrow).getResult();
    auto rounded = linalg::GenericOp::create(
        b, loc, TypeRange{init.getType()}, producer.getDpsInputs(),
        ValueRange{init}, producer.getIndexingMapsArray(),
        producer.getIteratorTypesArray());
    rounded.getRegion().takeBody(producer.getRegion());
    Block &body = rounded.getRegion().front();
    body.getArguments().back().setType(narrow);
    Operation *yield = body.getTerminator();
    OpBuilder atYield(yield);
    yield->setOperand(
        0, arith::TruncFOp::create(atYield, loc, narrow, yield->getOperand(0)));
    Value result = rounded.getResult(0);
    for (Operation *reshape : llvm::reverse(reshapes)) {
      auto wideType = cast<RankedTensorType>(reshape->getResult(0).getType());
      OpBuilder beside(reshape);
      Operation *copy = beside.clone(*reshape);
      copy->setOperand(0, result);
      copy->getResult(0).setType(wideType.clone(narrow));
      result = copy->getResult(0);
    }
    Value wide = castElements(result, b.getF32Type());
    use.set(wide);
    for (Operation *reshape : reshapes)
      reshape->erase();
    producer.erase();
    report::count("gpu_activations_narrowed");
  }

  /// The operand type a bf16/fp16 precision narrows f32 operands to.
  Type narrowType() {
    return precision == "bf16" ? Type(BFloat16Type::get(&getContext()))
                               : Type(Float16Type::get(&getContext()));
  }

  /// The function's linalg ops outside tiled loops, in order.
  SmallVector<linalg::LinalgOp> topLevelLinalgOps() {
    SmallVector<linalg::LinalgOp> ops;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (!op->getParentOfType<scf::ForallOp>())
        ops.push_back(op);
    });
    return ops;
  }

  void runOnOperation() override {
    if (!llvm::is_contained({"fp32", "tf32", "bf16", "fp16"}, precision)) {
      getOperation().emitError("kiln-gpu-contraction-kernels: unknown "
                               "precision '")
          << precision << "' (fp32, tf32, bf16, fp16)";
      return signalPassFailure();
    }
    if (!llvm::is_contained({"mma.sync", "mfma", "none"}, matrixUnit)) {
      getOperation().emitError("kiln-gpu-contraction-kernels: unknown "
                               "matrix unit '")
          << matrixUnit << "' (mma.sync, mfma, none)";
      return signalPassFailure();
    }
    if (matrixUnit == "none" && precision != "fp32") {
      getOperation().emitError("kiln-gpu-contraction-kernels: precision '")
          << precision
          << "' needs a matrix unit (matrix-unit=mma.sync or "
             "mfma)";
      return signalPassFailure();
    }
    narrowed.clear();
    // Operands of large tensor-core contractions rounded where they are
    // made, before the kernels are written (an epilogue that rounds must
    // be so when its contraction's kernel takes it).
    if (matrixUnit == "mma.sync" &&
        (precision == "bf16" || precision == "fp16")) {
      Type narrow = narrowType();
      // (A producer comes before its contraction in the walk: an op this
      // erases has been visited already.)
      for (linalg::LinalgOp op : topLevelLinalgOps()) {
        FailureOr<Contraction> match = matchContraction(op);
        if (failed(match) || tooLargeForGrid(*match) ||
            !getElementTypeOrSelf(op.getDpsInputs()[0].getType()).isF32() ||
            !fillsGpuWithLargeTiles(*match))
          continue;
        for (OpOperand *use : op.getDpsInputOperands())
          if (use->getOperandNumber() < 2 &&
              !use->get().getDefiningOp<arith::ConstantOp>())
            narrowInProducer(*use, narrow);
      }
    }

    SmallVector<linalg::LinalgOp> candidates = topLevelLinalgOps();
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
      // Grid y (row tiles) and z (batch) hold at most 65535 blocks; bigger
      // problems keep the generic kernels, linearized over grid x.
      if (tooLargeForGrid(c)) {
        KILN_LOG("gpu", Info)
            << "contraction at '" << onnxNodeName(c.op->getLoc())
            << "' is too large for a tiled grid; it keeps "
               "the generic kernels\n";
        continue;
      }
      OpBuilder b(c.op);
      // f16/bf16 models run on tensor cores natively where there are
      // some; f32 ones when the precision allows.
      Type element =
          cast<ShapedType>(c.op.getDpsInputs()[0].getType()).getElementType();
      if (matrixUnit == "none")
        writeSimtKernel(b, c);
      else if (matrixUnit == "mfma")
        writeMfmaKernel(b, c, mfmaOperandFor(element, precision));
      else if (element.isF16())
        writeMmaKernel(b, c, MmaOperand::F16);
      else if (element.isBF16())
        writeMmaKernel(b, c, MmaOperand::BF16);
      else if (precision == "fp32")
        writeSimtKernel(b, c);
      else if (precision != "tf32") {
        // f32 weights are read as bf16/f16 rounded once, here: half the
        // bytes of the weights, and no conversion in the staging loop.
        Type narrow = narrowType();
        for (bool isA : {true, false}) {
          Value operand = c.op.getDpsInputs()[isA ? 0 : 1];
          Value &copy = isA ? c.narrowedA : c.narrowedB;
          copy = narrowedWeight(operand, narrow);
          if (!copy)
            copy = narrowedActivation(c, operand, isA, narrow);
        }
        writeMmaKernel(
            b, c, precision == "fp16" ? MmaOperand::F16 : MmaOperand::BF16);
      } else
        writeMmaKernel(b, c,
                       precision == "fp16"   ? MmaOperand::F16
                       : precision == "bf16" ? MmaOperand::BF16
                                             : MmaOperand::TF32);
      KILN_LOG("gpu", Info)
          << "tiled contraction kernel for " << onnxNodeName(c.op->getLoc())
          << " (" << c.size(c.batch) << " x "
          << (c.runTimeRows() ? std::string("?") : std::to_string(c.size(c.m)))
          << "x" << c.size(c.n) << "x" << c.size(c.k)
          << (c.epilogue ? ", epilogue " + onnxNodeName(c.epilogue->getLoc())
                         : std::string())
          << ")\n";
      // The replaced op goes; what only fed it (the contraction, its fill,
      // reshapes) is left dead for the cleanup after this pass.
      if (c.epilogue)
        report::count("epilogues_fused");
      // Tiled kernels, and those of them whose row tiles are counted at
      // run time (symbolic dims): none of these is a generic loop nest.
      report::count("gpu_contraction_kernels");
      if (c.runTimeRows())
        report::count("gpu_contraction_kernels_run_time_rows");
      Operation *root =
          c.epilogue ? c.epilogue.getOperation() : c.op.getOperation();
      erased.insert(root);
      root->erase();
    }
  }
};
} // namespace
