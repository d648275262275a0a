//===- CpuPipeline.cpp - The CPU code generation pipeline -----------------===//
#include "backends/cpu/CpuPipeline.h"
#include "backends/cpu/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Transforms/FuncBufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Linalg/Transforms/AllInterfaces.h"
#include "mlir/Dialect/Linalg/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::kiln;

static void addCleanup(OpPassManager &pm) {
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void mlir::kiln::buildCpuCodegenPipeline(OpPassManager &pm,
                                         const CpuCodegenOptions &options) {
  // 1. Tensor level.
  pm.addPass(createMarkInputsReadOnly());
  pm.addNestedPass<func::FuncOp>(createLinalgElementwiseOpFusionPass());
  addCleanup(pm);

  // 2. Bufferization. Identity layouts at the boundary match the ABI's dense
  // row-major tensors; out-params make @main write the caller's buffers.
  pm.addPass(bufferization::createEmptyTensorEliminationPass());
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  bufferize.bufferAlignment = 64;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  bufferization::BufferResultsToOutParamsPassOptions outParams;
  outParams.hoistStaticAllocs = true;
  outParams.modifyPublicFunctions = true;
  pm.addPass(bufferization::createBufferResultsToOutParamsPass(outParams));
  addCleanup(pm);

  // 3. Memory: every buffer in the arena, every constant in the weights blob.
  pm.addPass(createPlanArena());
  pm.addPass(createOutlineWeights());

  // 4. Loops.
  pm.addNestedPass<func::FuncOp>(createExpandStridedCopies());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  // Math on f16/bf16 is computed in f32, f32 transcendentals inline.
  pm.addNestedPass<func::FuncOp>(math::createMathExtendToSupportedTypes());
  pm.addNestedPass<func::FuncOp>(createApproximateMath());
  // bf16 arithmetic in f32 and bf16 <-> f32 conversions as integer ops: CPUs
  // without native bf16 would otherwise call compiler-rt (__truncsfbf2),
  // which an artifact cannot import.
  arith::ArithEmulateUnsupportedFloatsOptions emulate;
  emulate.sourceTypeStrs = {"bf16"};
  pm.addNestedPass<func::FuncOp>(
      arith::createArithEmulateUnsupportedFloats(emulate));
  if (options.optLevel > 0)
    addCleanup(pm);

  // 5. LLVM dialect. Math first to intrinsics (sqrt, fma, pow, ...), then
  // whatever has no intrinsic (f64 erf, ...) to libm calls.
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createSCFToControlFlowPass());
  arith::ArithExpandOpsPassOptions expand;
  expand.includeBf16 = true;
  pm.addPass(arith::createArithExpandOpsPass(expand));
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

void mlir::kiln::registerCpuBackendDialects(DialectRegistry &registry) {
  registry
      .insert<affine::AffineDialect, arith::ArithDialect,
              bufferization::BufferizationDialect, cf::ControlFlowDialect,
              func::FuncDialect, linalg::LinalgDialect, LLVM::LLVMDialect,
              math::MathDialect, memref::MemRefDialect, scf::SCFDialect,
              tensor::TensorDialect, ub::UBDialect, vector::VectorDialect>();
  arith::registerBufferizableOpInterfaceExternalModels(registry);
  bufferization::func_ext::registerBufferizableOpInterfaceExternalModels(
      registry);
  linalg::registerAllDialectInterfaceImplementations(registry);
  scf::registerBufferizableOpInterfaceExternalModels(registry);
  tensor::registerBufferizableOpInterfaceExternalModels(registry);
  vector::registerBufferizableOpInterfaceExternalModels(registry);
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
}

namespace {
struct CpuCodegenPipelineOptions
    : public PassPipelineOptions<CpuCodegenPipelineOptions> {
  Option<std::string> target{*this, "target",
                             llvm::cl::desc("Target (x86_64, aarch64, ...)"),
                             llvm::cl::init("")};
  Option<std::string> cpu{*this, "cpu", llvm::cl::desc("CPU name"),
                          llvm::cl::init("generic")};
  Option<int> optLevel{*this, "opt-level", llvm::cl::desc("0-3"),
                       llvm::cl::init(2)};
};
} // namespace

void mlir::kiln::registerCpuBackendPasses() {
  registerKilnCpuPasses();
  PassPipelineRegistration<CpuCodegenPipelineOptions>(
      "kiln-cpu-codegen",
      "Lower linalg on tensors to the LLVM dialect for a Kiln CPU artifact",
      [](OpPassManager &pm, const CpuCodegenPipelineOptions &flags) {
        CpuCodegenOptions options;
        // The pipeline itself is target independent today; keep the flags
        // for the stages (tiling, vectorization) that will not be.
        options.target.triple = flags.target;
        options.target.cpu = flags.cpu;
        options.optLevel = flags.optLevel;
        buildCpuCodegenPipeline(pm, options);
      });
}
