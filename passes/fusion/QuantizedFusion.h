//===- QuantizedFusion.h - Shared parts of the int8 fusions -----*- C++ -*-===//
//
// kiln-fuse-quantized-matmul and kiln-fuse-quantized-conv match the same
// dequantized activations and report the same way: each candidate's
// decision under KILN_LOGS=fusion, fused ones counted as `int8_kernels`.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PASSES_FUSION_QUANTIZEDFUSION_H
#define KILN_PASSES_FUSION_QUANTIZEDFUSION_H

#include "passes/fusion/UniformConstant.h"
#include "passes/graph/Dequantize.h"

#include "compiler/logging/Logging.h"
#include "compiler/logging/Report.h"
#include "dialects/kiln/NodeLocation.h"
#include "mlir/IR/Builders.h"

#include <cmath>
#include <string>

namespace mlir::kiln {

/// The one scale and zero point of dequantized activations; a reason
/// when they are not constants or the zero point is not a uint8 value.
struct ActivationQuantization {
  double scale;
  int64_t zeroPoint;
};
inline FailureOr<ActivationQuantization>
activationQuantization(const Dequantized &x, std::string &reason) {
  std::optional<double> scale = uniformConstant(x.scale);
  std::optional<double> zero = x.zeroPoint ? uniformConstant(x.zeroPoint) : 0.0;
  if (!scale || !zero || *zero != std::round(*zero) || *zero < 0 || *zero > 255)
    return reason = "the activations' scale or zero point is not one "
                    "constant",
           failure();
  return ActivationQuantization{*scale, int64_t(*zero)};
}

/// Runs `rewrite(builder, op, reason) -> FailureOr<Value>` on every `OpT`
/// under `root`, replacing each op it rewrites, logging each decision for
/// `kind` ("matmul", "conv") and counting the fused ones.
template <typename OpT, typename Rewrite>
void fuseQuantized(Operation *root, StringRef kind, Rewrite rewrite) {
  SmallVector<OpT> candidates;
  root->walk([&](OpT op) { candidates.push_back(op); });
  OpBuilder b(root->getContext());
  for (OpT op : candidates) {
    std::string reason;
    std::string at = onnxNodeName(op.getLoc());
    FailureOr<Value> fused = rewrite(b, op, reason);
    if (failed(fused)) {
      if (!reason.empty())
        KILN_LOG("fusion", Info) << "not fusing int8 " << kind << " at '" << at
                                 << "': " << reason << "\n";
      continue;
    }
    op.getResult().replaceAllUsesWith(*fused);
    op->erase();
    report::count("int8_kernels");
    KILN_LOG("fusion", Info)
        << "fused int8 " << kind << " at '" << at << "' (uint8 x int8, VNNI)\n";
  }
}

} // namespace mlir::kiln

#endif // KILN_PASSES_FUSION_QUANTIZEDFUSION_H
