#ifndef KILN_BACKENDS_CPU_PASSES_TD
#define KILN_BACKENDS_CPU_PASSES_TD

include "mlir/Pass/PassBase.td"

def PlanArena : Pass<"kiln-plan-arena", "ModuleOp"> {
  let summary = "Place every intermediate buffer in one arena planned by liveness";
  let description = [{
    (to be written)
  }];
}

#endif // KILN_BACKENDS_CPU_PASSES_TD
