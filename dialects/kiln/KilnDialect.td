#ifndef KILN_DIALECT_TD
#define KILN_DIALECT_TD

include "mlir/IR/OpBase.td"

def Kiln_Dialect : Dialect {
  let name = "kiln";
  let summary = "Kiln's graph dialect: model ops on ranked tensors";
  let description = [{
    The graph level of the Kiln compiler. Ops have value semantics on ranked,
    statically shaped tensors and mirror ONNX closely, but every operand that
    ONNX passes as a tensor yet must be known at compile time (shapes, axes,
    slice bounds, pads) is an attribute here, resolved by the importer.

    Element types follow ONNX: signless integers for signed ONNX types,
    `uiN` for unsigned ONNX types, `i1` for bool, `!kiln.string` for
    strings.

    Every op infers its result type (InferTypeOpInterface), so the verifier
    checks shapes and the importer never spells a result type.
  }];
  let cppNamespace = "::mlir::kiln";
  let hasConstantMaterializer = 1;
  let useDefaultTypePrinterParser = 1;
}

#endif // KILN_DIALECT_TD
