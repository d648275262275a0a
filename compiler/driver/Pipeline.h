//===- Pipeline.h - The stages of compilation, per target and -O -*- C++
//-*-===//
//
// The one place that lists which passes run, in which order, for each target
// and optimization level. Each stage runs as its own pass manager so the
// driver can time it and print the artifact that follows it.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_COMPILER_DRIVER_PIPELINE_H
#define KILN_COMPILER_DRIVER_PIPELINE_H

#include "backends/common/Target.h"
#include "mlir/Pass/PassManager.h"

#include <string>

namespace mlir::kiln {

struct PipelineOptions {
  int optLevel = 2;
  /// What the artifact is for: the one place the backend is chosen.
  Target target;
  /// kiln-conv-layout's mode at -O2: auto (cost model), nchw or nhwc. Empty:
  /// the KILN_CONV_LAYOUT environment variable, else auto.
  std::string convLayout;
  /// Winograd convolutions at -O1 and up: auto, off, 2 or 4. Empty: the
  /// KILN_WINOGRAD environment variable, else auto.
  std::string winograd;
  /// The module is the only IR of its context that refers to its weights:
  /// passes may free the data of weights they leave unused (packing), so
  /// compile memory does not double. Off for clones whose original lives on
  /// (the autotuner's kernels).
  bool releaseWeights = false;
};

/// kiln -> kiln: folding, canonicalization, CSE (fusion passes go here).
void buildGraphPipeline(OpPassManager &pm, const PipelineOptions &options);
/// kiln -> linalg/tensor/arith/math on tensors.
void buildLoweringPipeline(OpPassManager &pm, const PipelineOptions &options);
/// linalg on tensors -> LLVM dialect for the target (the CPU backend, or a
/// GPU backend whose kernels the module carries as kiln.gpu.* attributes).
void buildBackendPipeline(OpPassManager &pm, const PipelineOptions &options);

} // namespace mlir::kiln

#endif // KILN_COMPILER_DRIVER_PIPELINE_H
