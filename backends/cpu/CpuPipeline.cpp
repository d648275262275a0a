//===- CpuPipeline.cpp - The CPU code generation pipeline -----------------===//
#include "backends/cpu/CpuPipeline.h"
#include "backends/cpu/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/VectorToSCF/VectorToSCF.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/TargetParser/Triple.h"

using namespace mlir;
using namespace mlir::kiln;

/// AArch64 always converts half floats in hardware, x86 only with F16C.
static bool needsSoftHalfConversions(const CpuTarget &target) {
  return llvm::Triple(target.triple).isX86() && !target.hasFeature("f16c");
}

/// x86 converts f64 -> f16 in one instruction only with AVX512-FP16.
static bool needsF64ToHalfSplit(const CpuTarget &target) {
  return llvm::Triple(target.triple).isX86() &&
         !target.hasFeature("avx512fp16");
}

/// Vector register width and count the contraction tiles are sized for.
static TileContractionsOptions tileOptions(const CpuTarget &target) {
  TileContractionsOptions options;
  if (llvm::Triple(target.triple).isX86()) {
    bool avx512 = target.hasFeature("avx512f");
    options.vectorBits = avx512 ? 512 : target.hasFeature("avx") ? 256 : 128;
    options.registers = avx512 ? 32 : 16;
  } else {
    options.vectorBits = 128; // NEON; SVE builds use the same fixed width.
    options.registers = 32;
  }
  return options;
}

static void addCleanup(OpPassManager &pm) {
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void mlir::kiln::addBufferizationPasses(OpPassManager &pm) {
  // Identity layouts at the boundary match the ABI's dense
  // row-major tensors; out-params make @main write the caller's buffers.
  pm.addPass(bufferization::createEmptyTensorEliminationPass());
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  bufferize.bufferAlignment = 64;
  // A model's Loop (scf.while) yields new buffers each iteration.
  bufferize.allowReturnAllocsFromLoops = true;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  pm.addNestedPass<func::FuncOp>(createCopyDuplicateResults());
  // Results shaped at run time leave as {pointer, dims} records.
  pm.addPass(createDynamicResults());
  // Inputs with symbolic dims arrive as a data pointer and their extents.
  pm.addPass(createDynamicInputs());
  bufferization::BufferResultsToOutParamsPassOptions outParams;
  outParams.hoistStaticAllocs = true;
  outParams.modifyPublicFunctions = true;
  pm.addPass(bufferization::createBufferResultsToOutParamsPass(outParams));
  pm.addPass(createFlattenEmptyArguments());
  addCleanup(pm);
  // Tiles written in place leave copies of a view onto itself, which only
  // fold once CSE has merged the two views.
  pm.addPass(createCanonicalizerPass());
}

void mlir::kiln::addLLVMLoweringPasses(OpPassManager &pm,
                                       const CpuCodegenOptions &options) {
  // Math on f16/bf16 is computed in f32, f32 transcendentals inline.
  pm.addNestedPass<func::FuncOp>(math::createMathExtendToSupportedTypes());
  pm.addNestedPass<func::FuncOp>(createApproximateMath());
  // bf16 arithmetic in f32 and bf16 <-> f32 conversions as integer ops: CPUs
  // without native bf16 would otherwise call compiler-rt (__truncsfbf2),
  // which an artifact cannot import.
  // f16 likewise where the CPU cannot convert it (x86 without F16C).
  bool softHalf = needsSoftHalfConversions(options.target);
  arith::ArithEmulateUnsupportedFloatsOptions emulate;
  emulate.sourceTypeStrs = {"bf16"};
  if (softHalf)
    emulate.sourceTypeStrs.push_back("f16");
  pm.addNestedPass<func::FuncOp>(
      arith::createArithEmulateUnsupportedFloats(emulate));
  if (softHalf || needsF64ToHalfSplit(options.target))
    pm.addNestedPass<func::FuncOp>(createExpandF16Conversions({softHalf}));
  if (options.optLevel > 0)
    addCleanup(pm);

  // 5. LLVM dialect. Integer powers become generated functions, math to
  // intrinsics (sqrt, fma, pow, ...), then whatever has no intrinsic (f64
  // erf, ...) to libm calls.
  pm.addPass(createExpandDynamicShapes());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createConvertMathToFuncs());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createSCFToControlFlowPass());
  // Run-time sized buffers and failed checks through the runtime.
  pm.addPass(createRuntimeServices());
  arith::ArithExpandOpsPassOptions expand;
  expand.includeBf16 = true;
  pm.addPass(arith::createArithExpandOpsPass(expand));
  // Vector ops first: their lowering (gathers, masks) creates arith ops.
  ConvertVectorToLLVMPassOptions vectorToLLVM;
  vectorToLLVM.vectorContractLowering =
      vector::VectorContractLowering::OuterProduct;
  // bf16 k-pair micro-kernels (x86vector.avx512.dot).
  vectorToLLVM.x86Vector = llvm::Triple(options.target.triple).isX86();
  pm.addPass(createConvertVectorToLLVMPass(vectorToLLVM));
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  ConvertFuncToLLVMPassOptions funcToLLVM;
  funcToLLVM.useBarePtrCallConv = true;
  pm.addPass(createConvertFuncToLLVMPass(funcToLLVM));
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createUBToLLVMConversionPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  addCleanup(pm);
}

void mlir::kiln::buildCpuCodegenPipeline(OpPassManager &pm,
                                         const CpuCodegenOptions &options) {
  // 1. Tensor level.
  pm.addPass(createMarkInputsReadOnly());
  pm.addNestedPass<func::FuncOp>(createFuseElementwise());
  addCleanup(pm);
  // f32 matmuls and convolutions (NHWC ones first, direct): register tiles,
  // vectorized; the other contractions get a vectorizable loop order.
  if (options.optLevel > 0) {
    TileContractionsOptions tiles = tileOptions(options.target);
    tiles.releaseWeights = options.releaseWeights;
    tiles.bf16Weights = options.bf16Weights;
    tiles.bf16Dot = options.bf16Weights && tiles.vectorBits == 512 &&
                    options.target.hasFeature("avx512bf16");
    tiles.int8Dot =
        tiles.vectorBits == 512 && options.target.hasFeature("avx512vnni");
    // Symbolic batch / sequence: static slices for the tilers below.
    pm.addNestedPass<func::FuncOp>(createSliceRunTimeRows());
    pm.addNestedPass<func::FuncOp>(
        createTileNhwcConvolutions(TileNhwcConvolutionsOptions{
            tiles.vectorBits, tiles.registers, tiles.fuseEpilogues,
            /*cacheTileK=*/0, tiles.int8Dot, options.winograd}));
    pm.addNestedPass<func::FuncOp>(createTileContractions(tiles));
    addCleanup(pm);
  }
  pm.addNestedPass<func::FuncOp>(createInterchangeContractions());

  // 2. Bufferization.
  addBufferizationPasses(pm);

  // 3. Memory: scratch of parallel iterations on each thread's stack (see
  // kiln-hoist-static-allocas below), every other buffer in the arena, every
  // constant in the weights blob.
  pm.addNestedPass<func::FuncOp>(createPrivatizeParallelAllocs());
  pm.addPass(createPlanArena());
  pm.addPass(createOutlineWeights());

  // 4. Loops.
  pm.addNestedPass<func::FuncOp>(createExpandStridedCopies());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToParallelLoopsPass());
  pm.addNestedPass<func::FuncOp>(createForallToParallelLoopPass());
  // Vector transfers of the register tiles as 1-D loads and stores.
  pm.addNestedPass<func::FuncOp>(createConvertVectorToSCFPass(
      VectorTransferToSCFOptions().enableFullUnroll()));
  // Big parallel loops run on the runtime's pool.
  pm.addPass(createOutlineParallelLoops());
  pm.addPass(createHoistStaticAllocas());
  // 5. Math and the LLVM dialect.
  addLLVMLoweringPasses(pm, options);
  // Layers that repeat share one body (LLVM compiles it once).
  pm.addPass(createShareParallelBodies());
}

namespace {
struct CpuCodegenPipelineOptions
    : public PassPipelineOptions<CpuCodegenPipelineOptions> {
  Option<std::string> target{
      *this, "target",
      llvm::cl::desc("x86_64, aarch64, ... (default: this machine)"),
      llvm::cl::init("")};
  Option<std::string> cpu{
      *this, "cpu",
      llvm::cl::desc("CPU name, generic or native (default: native for "
                     "this machine's architecture, else generic)"),
      llvm::cl::init("")};
  Option<int> optLevel{*this, "opt-level", llvm::cl::desc("0-3"),
                       llvm::cl::init(2)};
};
} // namespace

void mlir::kiln::registerCpuBackendPasses() {
  registerKilnCpuPasses();
  // The plain PassPipelineRegistration cannot reject bad --target/--cpu
  // values, so the pipeline is registered with its own error path.
  registerPassPipeline(
      "kiln-cpu-codegen",
      "Lower linalg on tensors to the LLVM dialect for a Kiln CPU artifact",
      [](OpPassManager &pm, StringRef optionsText,
         function_ref<LogicalResult(const Twine &)> errorHandler) {
        CpuCodegenPipelineOptions flags;
        if (failed(flags.parseFromString(optionsText)))
          return failure();
        std::string error;
        FailureOr<CpuTarget> target =
            CpuTarget::fromFlags(flags.target, flags.cpu, error);
        if (failed(target))
          return errorHandler(error);
        buildCpuCodegenPipeline(pm, {*target, flags.optLevel});
        return success();
      },
      [](function_ref<void(const detail::PassOptions &)> printOptions) {
        printOptions(CpuCodegenPipelineOptions());
      });
}
