//===- Pipeline.cpp - The stages of compilation, per target and -O --------===//

#include "compiler/driver/Pipeline.h"

#include "passes/fusion/Passes.h"
#include "passes/graph/Passes.h"
#include "passes/lowering/Passes.h"

#include "mlir/Transforms/Passes.h"

using namespace mlir;

void mlir::kiln::buildGraphPipeline(OpPassManager &pm,
                                    const PipelineOptions &options) {
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  if (options.optLevel > 0) {
    pm.addPass(createFoldWeights());
    pm.addPass(createFoldBatchNorm());
    pm.addPass(createCanonicalizerPass());
    pm.addPass(createFuseNormalization());
    pm.addPass(createFuseAttention());
    pm.addPass(createMergeContractions());
  }
}

void mlir::kiln::buildLoweringPipeline(OpPassManager &pm,
                                       const PipelineOptions &options) {
  pm.addPass(createLowerToLinalg());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  if (options.optLevel > 0)
    pm.addNestedPass<func::FuncOp>(createConcatInPlace());
  pm.addPass(createReportKernels());
}

void mlir::kiln::buildBackendPipeline(OpPassManager &pm,
                                      const PipelineOptions &options) {
  CpuCodegenOptions cpu;
  cpu.target = options.target;
  cpu.optLevel = options.optLevel;
  buildCpuCodegenPipeline(pm, cpu);
}
