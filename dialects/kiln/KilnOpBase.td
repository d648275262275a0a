//===- KilnOpBase.td - base classes of kiln ops -*- tablegen -*-===//
#ifndef KILN_OP_BASE_TD
#define KILN_OP_BASE_TD

include "dialects/kiln/KilnDialect.td"
include "mlir/IR/OpBase.td"
include "mlir/IR/CommonAttrConstraints.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// Base classes
//===----------------------------------------------------------------------===//

class Kiln_Op<string mnemonic, list<Trait> traits = []>
    : Op<Kiln_Dialect, mnemonic, !listconcat(traits, [Pure, InferTypeOpAdaptor])> {
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

// Elementwise with numpy-style (ONNX multidirectional) broadcasting.
class Kiln_BinaryOp<string mnemonic, string what, list<Trait> traits = []>
    : Kiln_Op<mnemonic, traits> {
  let summary = "elementwise " # what # " with broadcasting";
  let description = [{
    Numpy-style broadcasting: shapes are aligned on the right, and each pair
    of dimensions must be equal or one of them 1.

    ```mlir
    %r = kiln.}] # mnemonic # [{ %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$lhs, AnyRankedTensor:$rhs);
  let results = (outs AnyRankedTensor:$result);
  let hasFolder = 1;
}

// Comparison: like a binary op, with an i1 result.
class Kiln_CompareOp<string mnemonic, string what> : Kiln_Op<mnemonic> {
  let summary = "elementwise " # what # " comparison with broadcasting, i1 result";
  let description = [{
    ```mlir
    %r = kiln.}] # mnemonic # [{ %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$lhs, AnyRankedTensor:$rhs);
  let results = (outs AnyRankedTensor:$result);
  let hasFolder = 1;
}

class Kiln_UnaryOp<string mnemonic, string what, list<Trait> traits = []>
    : Kiln_Op<mnemonic, traits> {
  let summary = "elementwise " # what;
  let description = [{
    ```mlir
    %r = kiln.}] # mnemonic # [{ %x : (tensor<8xf32>) -> tensor<8xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input);
  let results = (outs AnyRankedTensor:$result);
}

#endif // KILN_OP_BASE_TD
