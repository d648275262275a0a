//===- KilnTypes.td - Types of the kiln dialect -----------*- tablegen -*-===//
#ifndef KILN_TYPES_TD
#define KILN_TYPES_TD

include "dialects/kiln/KilnDialect.td"
include "mlir/IR/AttrTypeBase.td"

def Kiln_StringType : TypeDef<Kiln_Dialect, "String"> {
  let mnemonic = "string";
  let summary = "string";
  let description = [{
    The element type of ONNX string tensors: NUL-terminated UTF-8 text. Only data movement ops
    (reshape, transpose, concat, gather, slice, ...) and the string ops
    (`kiln.normalize_strings`, `kiln.cast_to_string`,
    `kiln.cast_from_string`) take it. `kiln-lower-to-linalg` turns each
    element into an i64 holding the text's address (the runtime's
    `const char *`, abi.h), so data movement lowers as for any 64-bit type
    and the string ops become calls of the runtime's string kernels.

    ```mlir
    %y = kiln.normalize_strings %x {case_action = "UPPER", case_sensitive = false, stopwords = ["monday"]} : tensor<4x!kiln.string> -> tensor<3x!kiln.string>
    ```
  }];
}

def Kiln_StringTensor : RankedTensorOf<[Kiln_StringType]>;

#endif // KILN_TYPES_TD
