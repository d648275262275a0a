//===- EmulateKernels.cpp - The kernels as host functions -----------------===//
//
// The emulator leaf compiles the very gpu.func bodies the device leaves get
// for the host CPU, so their numerics are checked on machines without a GPU.
// Only the reads of the thread's coordinates, the barriers, the warp
// collectives (calls into the runtime) and cp.async (an immediate copy)
// change: the runtime's emulator runs each block's threads one after
// another and switches between them at barriers
// (runtime/src/gpu_emulator.cpp).
//
//===----------------------------------------------------------------------===//
#include "backends/common/KernelTable.h"
#include "backends/gpu/Passes.h"

#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include "kiln/abi.h"
#include <numeric>

namespace mlir::kiln {
#define GEN_PASS_DEF_EMULATEKERNELS
#include "backends/gpu/Passes.h.inc"
} // namespace mlir::kiln

using namespace mlir;
using namespace mlir::kiln;

namespace {
constexpr StringLiteral kBarrierName = "__kiln_emulator_barrier";
constexpr StringLiteral kMmaName = "__kiln_emulator_mma";
/// A, B and C fragments of one lane as 32-bit words (4 + 2 + 4); D comes
/// back in the last four.
constexpr int64_t kMmaSlots = 10;

/// The emulator's code for an mma shape and operand type (abi.h).
std::optional<int32_t> mmaKind(NVVM::MmaOp mma) {
  auto type = mma.getMultiplicandAPtxType();
  NVVM::MMAShapeAttr shape = mma.getShapeAttr();
  if (!type || shape.getM() != 16 || shape.getN() != 8)
    return std::nullopt;
  if (*type == NVVM::MMATypes::f16 && shape.getK() == 16)
    return KILN_EMULATED_MMA_F16_M16N8K16;
  if (*type == NVVM::MMATypes::bf16 && shape.getK() == 16)
    return KILN_EMULATED_MMA_BF16_M16N8K16;
  if (*type == NVVM::MMATypes::tf32 && shape.getK() == 8)
    return KILN_EMULATED_MMA_TF32_M16N8K8;
  return std::nullopt;
}

/// Each `llvm.extractvalue` of `op`'s struct result as a read of slot
/// kMmaSlots - 4 + position, the word bitcast to `type`.
LogicalResult readFromSlots(Operation *op, Value slots, Type type,
                            StringRef what) {
  OpBuilder b(op);
  Location loc = op->getLoc();
  for (Operation *user : llvm::make_early_inc_range(op->getUsers())) {
    auto extract = dyn_cast<LLVM::ExtractValueOp>(user);
    if (!extract || extract.getPosition().size() != 1)
      return op->emitError("kiln-gpu-emulate-kernels: ")
             << what << " result must be read by llvm.extractvalue";
    b.setInsertionPoint(extract);
    Value word = memref::LoadOp::create(
        b, loc, slots,
        ValueRange{arith::ConstantIndexOp::create(
            b, loc, kMmaSlots - 4 + extract.getPosition()[0])});
    if (word.getType() != type)
      word = arith::BitcastOp::create(b, loc, type, word);
    extract.replaceAllUsesWith(word);
    extract.erase();
  }
  return success();
}

/// `mma` as a call of the emulator's warp-collective mma: the lane's
/// fragments go through a slot array, the accumulators' users read D.
LogicalResult emulateMma(NVVM::MmaOp mma, Value state, func::FuncOp mmaFn) {
  std::optional<int32_t> kind = mmaKind(mma);
  if (!kind)
    return mma.emitError("kiln-gpu-emulate-kernels: the emulator runs "
                         "m16n8k16 f16/bf16 and m16n8k8 tf32 mma only");
  OpBuilder b(mma);
  Location loc = mma.getLoc();
  Type i32 = b.getI32Type();
  Value slots =
      memref::AllocaOp::create(b, loc, MemRefType::get({kMmaSlots}, i32));
  auto toWord = [&](Value v) -> Value {
    if (isa<VectorType>(v.getType())) {
      Value word =
          vector::BitCastOp::create(b, loc, VectorType::get({1}, i32), v);
      return vector::ExtractOp::create(b, loc, word, ArrayRef<int64_t>{0});
    }
    if (v.getType().isF32())
      return arith::BitcastOp::create(b, loc, i32, v);
    return v;
  };
  int64_t slot = 0;
  for (ValueRange operands :
       {mma.getOperandA(), mma.getOperandB(), mma.getOperandC()})
    for (Value v : operands)
      memref::StoreOp::create(
          b, loc, toWord(v), slots,
          ValueRange{arith::ConstantIndexOp::create(b, loc, slot++)});
  func::CallOp::create(
      b, loc, mmaFn,
      ValueRange{state, arith::ConstantIntOp::create(b, loc, i32, *kind),
                 slots});
  if (failed(readFromSlots(mma, slots, b.getF32Type(), "an mma")))
    return failure();
  mma.erase();
  return success();
}

/// The integer a kernel made pointer `p` from (through an address-space
/// cast), or p's value as an integer.
Value pointerAsInteger(OpBuilder &b, Location loc, Value p) {
  if (auto cast = p.getDefiningOp<LLVM::AddrSpaceCastOp>())
    p = cast.getArg();
  if (auto cast = p.getDefiningOp<LLVM::IntToPtrOp>())
    return cast.getArg();
  return LLVM::PtrToIntOp::create(b, loc, b.getI64Type(), p);
}

/// Erases the pointer casts left without users after `p`'s user went.
void eraseDeadCasts(Value p) {
  while (Operation *op = p.getDefiningOp()) {
    if (!isa<LLVM::AddrSpaceCastOp, LLVM::IntToPtrOp>(op) || !op->use_empty())
      return;
    p = op->getOperand(0);
    op->erase();
  }
}

/// `load` (ldmatrix.x4) as a call of the emulator's warp-collective: the
/// lane's row address in slots 0..1, the four registers back in 6..9.
LogicalResult emulateLdMatrix(NVVM::LdMatrixOp load, Value state,
                              func::FuncOp mmaFn) {
  if (load.getNum() != 4 || load.getShape().getM() != 8 ||
      load.getShape().getN() != 8 ||
      load.getEltType() != NVVM::LdStMatrixEltType::B16)
    return load.emitError("kiln-gpu-emulate-kernels: the emulator runs "
                          "ldmatrix m8n8.x4.b16 only");
  OpBuilder b(load);
  Location loc = load.getLoc();
  Type i32 = b.getI32Type(), i64 = b.getI64Type();
  Value slots =
      memref::AllocaOp::create(b, loc, MemRefType::get({kMmaSlots}, i32));
  auto slot = [&](int64_t i) {
    return ValueRange{arith::ConstantIndexOp::create(b, loc, i)};
  };
  // The kernel made the shared-memory pointer from an integer address
  // (the host address of the stage here).
  Value address = pointerAsInteger(b, loc, load.getPtr());
  memref::StoreOp::create(b, loc, arith::TruncIOp::create(b, loc, i32, address),
                          slots, slot(0));
  memref::StoreOp::create(
      b, loc,
      arith::TruncIOp::create(
          b, loc, i32,
          arith::ShRUIOp::create(
              b, loc, address, arith::ConstantIntOp::create(b, loc, i64, 32))),
      slots, slot(1));
  int32_t kind = load.getLayout() == NVVM::MMALayout::col
                     ? KILN_EMULATED_LDMATRIX_X4_TRANS
                     : KILN_EMULATED_LDMATRIX_X4;
  func::CallOp::create(
      b, loc, mmaFn,
      ValueRange{state, arith::ConstantIntOp::create(b, loc, i32, kind),
                 slots});
  if (failed(readFromSlots(load, slots, i32, "an ldmatrix")))
    return failure();
  Value pointer = load.getPtr();
  load.erase();
  eraseDeadCasts(pointer);
  return success();
}

/// `copy` (cp.async) as the copy it makes, done at once: the emulator runs
/// a block's threads one after another between barriers, so the copy is
/// complete by the wait_group and barrier that precede any read. Bytes at
/// and past the source size are zeros.
void emulateCpAsync(NVVM::CpAsyncOp copy) {
  OpBuilder b(copy);
  Location loc = copy.getLoc();
  MLIRContext *ctx = b.getContext();
  Type i8 = b.getI8Type(), i32 = b.getI32Type();
  int64_t size = copy.getSize();
  auto bytesType = VectorType::get({size}, i8);
  auto hostPointer = [&](Value p) {
    return LLVM::IntToPtrOp::create(b, loc, LLVM::LLVMPointerType::get(ctx),
                                    pointerAsInteger(b, loc, p));
  };
  Value source = hostPointer(copy.getSrc());
  Value target = hostPointer(copy.getDst());
  Value bytes = LLVM::LoadOp::create(b, loc, bytesType, source, /*align=*/1);
  if (Value sourceSize = copy.getCpSize()) {
    SmallVector<int32_t> positions(size);
    std::iota(positions.begin(), positions.end(), 0);
    auto positionType = VectorType::get({size}, i32);
    Value inside = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::ult,
        arith::ConstantOp::create(
            b, loc,
            DenseElementsAttr::get(positionType, ArrayRef<int32_t>(positions))),
        vector::BroadcastOp::create(b, loc, positionType, sourceSize));
    bytes = arith::SelectOp::create(
        b, loc, inside, bytes,
        arith::ConstantOp::create(
            b, loc, DenseElementsAttr::get(bytesType, b.getI8IntegerAttr(0))));
  }
  LLVM::StoreOp::create(b, loc, bytes, target, /*alignment=*/1);
  Value src = copy.getSrc(), dst = copy.getDst();
  copy.erase();
  eraseDeadCasts(src);
  eraseDeadCasts(dst);
}

/// `mfma` as a call of the emulator's wave-collective mma: the lane's A
/// words from slot 0, B from slot 4, C in slots 6..9, where D comes back.
LogicalResult emulateMfma(amdgpu::MFMAOp mfma, Value state,
                          func::FuncOp mmaFn) {
  Type element = getElementTypeOrSelf(mfma.getSourceA().getType());
  auto accType = dyn_cast<VectorType>(mfma.getDestC().getType());
  int32_t kind = -1;
  if (mfma.getM() == 16 && mfma.getN() == 16 && mfma.getBlocks() == 1 &&
      accType && accType.getNumElements() == 4 && !mfma.getReducePrecision() &&
      mfma.getCbsz() == 0 && mfma.getAbid() == 0 &&
      mfma.getBlgp() == amdgpu::MFMAPermB::none) {
    if (mfma.getK() == 16 && element.isF16())
      kind = KILN_EMULATED_MFMA_F16_16X16X16;
    else if (mfma.getK() == 16 && element.isBF16())
      kind = KILN_EMULATED_MFMA_BF16_16X16X16;
    else if (mfma.getK() == 4 && element.isF32())
      kind = KILN_EMULATED_MFMA_F32_16X16X4;
  }
  if (kind < 0)
    return mfma.emitError("kiln-gpu-emulate-kernels: the emulator runs "
                          "16x16x16 f16/bf16 and 16x16x4 f32 MFMA only");
  OpBuilder b(mfma);
  Location loc = mfma.getLoc();
  Type i32 = b.getI32Type();
  Value slots =
      memref::AllocaOp::create(b, loc, MemRefType::get({kMmaSlots}, i32));
  auto store = [&](Value word, int64_t slot) {
    memref::StoreOp::create(
        b, loc, word, slots,
        ValueRange{arith::ConstantIndexOp::create(b, loc, slot)});
  };
  // A and B: one f32, or four 16-bit values as two words.
  for (auto [operand, first] :
       {std::pair{mfma.getSourceA(), 0}, std::pair{mfma.getSourceB(), 4}}) {
    if (!isa<VectorType>(operand.getType())) {
      store(arith::BitcastOp::create(b, loc, i32, operand), first);
      continue;
    }
    Value words =
        vector::BitCastOp::create(b, loc, VectorType::get({2}, i32), operand);
    for (int64_t w = 0; w < 2; ++w)
      store(vector::ExtractOp::create(b, loc, words, ArrayRef<int64_t>{w}),
            first + w);
  }
  for (int64_t e = 0; e < 4; ++e)
    store(arith::BitcastOp::create(
              b, loc, i32,
              vector::ExtractOp::create(b, loc, mfma.getDestC(),
                                        ArrayRef<int64_t>{e})),
          kMmaSlots - 4 + e);
  func::CallOp::create(
      b, loc, mmaFn,
      ValueRange{state, arith::ConstantIntOp::create(b, loc, i32, kind),
                 slots});
  SmallVector<Value> d;
  for (int64_t e = 0; e < 4; ++e)
    d.push_back(arith::BitcastOp::create(
        b, loc, b.getF32Type(),
        memref::LoadOp::create(b, loc, slots,
                               ValueRange{arith::ConstantIndexOp::create(
                                   b, loc, kMmaSlots - 4 + e)})));
  mfma.replaceAllUsesWith(
      vector::FromElementsOp::create(b, loc, accType, d).getResult());
  mfma.erase();
  return success();
}

/// A 32-bit `gpu.shuffle xor` as a call of the emulator's collective: the
/// value, offset and width in slots 0..2; the result in slot 6, whether it
/// came from another lane in slot 7.
LogicalResult emulateShuffle(gpu::ShuffleOp shuffle, Value state,
                             func::FuncOp mmaFn) {
  Type type = shuffle.getValue().getType();
  if (shuffle.getMode() != gpu::ShuffleMode::XOR ||
      type.getIntOrFloatBitWidth() != 32)
    return shuffle.emitError("kiln-gpu-emulate-kernels: the emulator runs "
                             "32-bit xor shuffles only");
  OpBuilder b(shuffle);
  Location loc = shuffle.getLoc();
  Type i32 = b.getI32Type();
  Value slots =
      memref::AllocaOp::create(b, loc, MemRefType::get({kMmaSlots}, i32));
  auto slot = [&](int64_t i) {
    return ValueRange{arith::ConstantIndexOp::create(b, loc, i)};
  };
  Value word = shuffle.getValue();
  if (!type.isInteger(32))
    word = arith::BitcastOp::create(b, loc, i32, word);
  memref::StoreOp::create(b, loc, word, slots, slot(0));
  memref::StoreOp::create(b, loc, shuffle.getOffset(), slots, slot(1));
  memref::StoreOp::create(b, loc, shuffle.getWidth(), slots, slot(2));
  func::CallOp::create(b, loc, mmaFn,
                       ValueRange{state,
                                  arith::ConstantIntOp::create(
                                      b, loc, i32, KILN_EMULATED_SHUFFLE_XOR),
                                  slots});
  Value result = memref::LoadOp::create(b, loc, slots, slot(6));
  if (!type.isInteger(32))
    result = arith::BitcastOp::create(b, loc, type, result);
  Value valid = arith::TruncIOp::create(
      b, loc, b.getI1Type(), memref::LoadOp::create(b, loc, slots, slot(7)));
  shuffle.getShuffleResult().replaceAllUsesWith(result);
  shuffle.getValid().replaceAllUsesWith(valid);
  shuffle.erase();
  return success();
}

/// Field of kiln_emulated_thread (abi.h) holding dimension `dim` of `kind`.
enum StateField { kThreadId = 0, kBlockId = 3, kBlockDim = 6, kGridDim = 9 };

MemRefType withoutMemorySpace(MemRefType type) {
  return MemRefType::get(type.getShape(), type.getElementType(),
                         type.getLayout());
}

Value readState(OpBuilder &b, Location loc, Value state, StateField field,
                gpu::Dimension dim) {
  Value position =
      arith::ConstantIndexOp::create(b, loc, int64_t(field) + int64_t(dim));
  Value word = memref::LoadOp::create(b, loc, state, position);
  return arith::IndexCastUIOp::create(b, loc, b.getIndexType(), word);
}

struct EmulateKernelsPass
    : public kiln::impl::EmulateKernelsBase<EmulateKernelsPass> {
  using Base::Base;

  LogicalResult emulate(gpu::GPUFuncOp kernel, ModuleOp module,
                        func::FuncOp barrier, func::FuncOp mmaFn,
                        bool &usesBarriers);

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    module->setAttr("kiln.gpu.platform", StringAttr::get(ctx, "emulator"));
    auto kernels = module.lookupSymbol<gpu::GPUModuleOp>("kiln_kernels");
    if (!kernels) {
      setKernelTable(module, {});
      return;
    }
    OpBuilder b(ctx);
    b.setInsertionPointToEnd(module.getBody());
    Type stateType = MemRefType::get({12}, b.getI32Type());
    auto barrier =
        func::FuncOp::create(b, module.getLoc(), kBarrierName,
                             FunctionType::get(ctx, {stateType}, {}));
    barrier.setPrivate();
    auto mmaFn = func::FuncOp::create(
        b, module.getLoc(), kMmaName,
        FunctionType::get(ctx,
                          {stateType, b.getI32Type(),
                           MemRefType::get({kMmaSlots}, b.getI32Type())},
                          {}));
    mmaFn.setPrivate();

    std::string error;
    FailureOr<std::vector<KernelInfo>> table = getKernelTable(module, error);
    if (failed(table)) {
      module.emitError("kiln-gpu-emulate-kernels: ") << error;
      return signalPassFailure();
    }
    for (auto kernel :
         llvm::make_early_inc_range(kernels.getOps<gpu::GPUFuncOp>())) {
      std::string name = kernel.getName().str();
      bool usesBarriers = false;
      if (failed(emulate(kernel, module, barrier, mmaFn, usesBarriers)))
        return signalPassFailure();
      for (KernelInfo &info : *table)
        if (info.name == name)
          info.usesBarriers = usesBarriers;
    }
    for (func::FuncOp fn : {barrier, mmaFn})
      if (fn.symbolKnownUseEmpty(module))
        fn.erase();
    // Globals of the device module (constants copied from the host module,
    // workgroup memory) become host globals.
    SymbolTable hostSymbols(module);
    for (auto global :
         llvm::make_early_inc_range(kernels.getOps<memref::GlobalOp>())) {
      if (hostSymbols.lookup(global.getSymNameAttr()))
        continue;
      global->moveBefore(kernels);
    }
    setKernelTable(module, *table);
    kernels.erase();
    module->removeAttr(gpu::GPUDialect::getContainerModuleAttrName());
  }
};

LogicalResult EmulateKernelsPass::emulate(gpu::GPUFuncOp kernel,
                                          ModuleOp module, func::FuncOp barrier,
                                          func::FuncOp mmaFn,
                                          bool &usesBarriers) {
  if (kernel.getNumPrivateAttributions())
    return kernel.emitError("kiln-gpu-emulate-kernels: private attributions "
                            "are not supported; use memref.alloca");
  MLIRContext *ctx = &getContext();
  OpBuilder b(ctx);
  Type stateType = MemRefType::get({12}, b.getI32Type());
  SmallVector<Type> inputs(kernel.getArgumentTypes());
  inputs.push_back(stateType);
  b.setInsertionPoint(barrier);
  // Workgroup memory becomes a host global per buffer: the emulator runs
  // the blocks of a kernel that uses it one at a time.
  SmallVector<memref::GlobalOp> shared;
  for (auto [i, buffer] : llvm::enumerate(kernel.getWorkgroupAttributions())) {
    auto type = cast<MemRefType>(buffer.getType());
    shared.push_back(memref::GlobalOp::create(
        b, kernel.getLoc(), (kernel.getName() + "_shared_" + Twine(i)).str(),
        b.getStringAttr("private"), withoutMemorySpace(type), Attribute(),
        /*constant=*/false, b.getI64IntegerAttr(64)));
  }
  unsigned numArgs = kernel.getNumArguments();
  auto func = func::FuncOp::create(b, kernel.getLoc(), kernel.getName(),
                                   FunctionType::get(ctx, inputs, {}));
  func.getBody().takeBody(kernel.getBody());
  Block &entry = func.getBody().front();
  b.setInsertionPointToStart(&entry);
  for (auto [i, global] : llvm::enumerate(shared)) {
    BlockArgument buffer = entry.getArgument(numArgs + i);
    buffer.replaceAllUsesWith(memref::GetGlobalOp::create(
        b, kernel.getLoc(), global.getType(), global.getSymName()));
  }
  entry.eraseArguments(numArgs, shared.size());
  Value state = entry.addArgument(stateType, kernel.getLoc());
  // Views of workgroup memory are views of the globals now.
  func.walk([](Operation *op) {
    for (Value result : op->getResults())
      if (auto type = dyn_cast<MemRefType>(result.getType()))
        result.setType(withoutMemorySpace(type));
  });

  // Warp-collective ops (tensor-core products, fragment loads, shuffles)
  // become calls of the emulator's collective; a kernel with any of them
  // runs as fibers.
  auto emulateAll = [&](auto tag, auto emulate) -> LogicalResult {
    using OpT = typename decltype(tag)::type;
    SmallVector<OpT> ops;
    func.walk([&](OpT op) { ops.push_back(op); });
    for (OpT op : ops)
      if (failed(emulate(op, state, mmaFn)))
        return failure();
    usesBarriers |= !ops.empty();
    return success();
  };
  if (failed(emulateAll(llvm::type_identity<NVVM::MmaOp>(), emulateMma)) ||
      failed(emulateAll(llvm::type_identity<NVVM::LdMatrixOp>(),
                        emulateLdMatrix)) ||
      failed(emulateAll(llvm::type_identity<amdgpu::MFMAOp>(), emulateMfma)) ||
      failed(emulateAll(llvm::type_identity<gpu::ShuffleOp>(), emulateShuffle)))
    return failure();
  // Asynchronous copies happen at once; their groups need no waiting.
  SmallVector<Operation *> asyncOps;
  func.walk([&](Operation *op) {
    if (isa<NVVM::CpAsyncOp, NVVM::CpAsyncCommitGroupOp,
            NVVM::CpAsyncWaitGroupOp>(op))
      asyncOps.push_back(op);
  });
  for (Operation *op : asyncOps) {
    if (auto copy = dyn_cast<NVVM::CpAsyncOp>(op))
      emulateCpAsync(copy);
    else
      op->erase();
  }

  WalkResult walk = func.walk([&](Operation *op) -> WalkResult {
    b.setInsertionPoint(op);
    Location loc = op->getLoc();
    auto replaceWith = [&](StateField field, gpu::Dimension dim) {
      op->getResult(0).replaceAllUsesWith(readState(b, loc, state, field, dim));
      op->erase();
      return WalkResult::advance();
    };
    if (auto id = dyn_cast<gpu::ThreadIdOp>(op))
      return replaceWith(kThreadId, id.getDimension());
    if (auto id = dyn_cast<gpu::BlockIdOp>(op))
      return replaceWith(kBlockId, id.getDimension());
    if (auto dim = dyn_cast<gpu::BlockDimOp>(op))
      return replaceWith(kBlockDim, dim.getDimension());
    if (auto dim = dyn_cast<gpu::GridDimOp>(op))
      return replaceWith(kGridDim, dim.getDimension());
    if (isa<gpu::BarrierOp>(op)) {
      func::CallOp::create(b, loc, barrier, ValueRange{state});
      op->erase();
      usesBarriers = true;
      return WalkResult::advance();
    }
    if (isa<gpu::ReturnOp>(op)) {
      func::ReturnOp::create(b, loc);
      op->erase();
      return WalkResult::advance();
    }
    if (op->getDialect() && isa<gpu::GPUDialect>(op->getDialect())) {
      op->emitError("kiln-gpu-emulate-kernels: the emulator cannot run '")
          << op->getName() << "'";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  kernel.erase();
  (void)module;
  return success();
}
} // namespace
