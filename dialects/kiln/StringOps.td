//===- StringOps.td - String ops of the kiln dialect ------*- tablegen -*-===//
#ifndef KILN_STRING_OPS_TD
#define KILN_STRING_OPS_TD

include "dialects/kiln/KilnOpBase.td"
include "dialects/kiln/KilnTypes.td"

def Kiln_NormalizeStringsOp : Op<Kiln_Dialect, "normalize_strings", [Pure]> {
  let summary = "ONNX StringNormalizer: drop stopwords, change case";
  let description = [{
    Over a 1-D `[C]` or 2-D `[1, C]` string tensor: removes the strings
    equal to one of `stopwords` (ignoring case unless `case_sensitive`),
    then applies `case_action` (`"NONE"`, `"LOWER"`, `"UPPER"`) to the rest,
    keeping their order. The number kept is known only at run time: a
    static result extent is the model's declared shape, checked when the
    model runs; a `?` extent is computed by the run. When every string is a
    stopword the result is one empty string.

    ```mlir
    %y = kiln.normalize_strings %x {case_action = "LOWER", case_sensitive = true, stopwords = ["monday"]} : tensor<4x!kiln.string> -> tensor<3x!kiln.string>
    ```
  }];
  let arguments = (ins Kiln_StringTensor:$input, StrArrayAttr:$stopwords,
                   StrAttr:$case_action, BoolAttr:$case_sensitive);
  let results = (outs Kiln_StringTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Kiln_CastToStringOp : Op<Kiln_Dialect, "cast_to_string", [Pure]> {
  let summary = "numbers to their decimal text";
  let description = [{
    Each element becomes the shortest decimal that reads back as the same
    value (floating types: `0.039187793`, `1e-05`, `nan`, `inf`), plain
    decimal for integers, `1`/`0` for bool.

    ```mlir
    %s = kiln.cast_to_string %x : tensor<3x4xf32> -> tensor<3x4x!kiln.string>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input);
  let results = (outs Kiln_StringTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Kiln_CastFromStringOp : Op<Kiln_Dialect, "cast_from_string", [Pure]> {
  let summary = "decimal text to numbers";
  let description = [{
    Parses each string as a number of the result's element type (spaces
    around it and a `+` sign allowed; `nan`, `inf`, `-INF` for floating
    types, `true`/`false` or a number for i1). A string that is not such a
    number ends the run with an error naming the node and the element.

    ```mlir
    %x = kiln.cast_from_string %s : tensor<3x4x!kiln.string> -> tensor<3x4xf32>
    ```
  }];
  let arguments = (ins Kiln_StringTensor:$input);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

#endif // KILN_STRING_OPS_TD
