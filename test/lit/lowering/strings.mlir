// RUN: kiln-opt %s -kiln-lower-to-linalg -split-input-file | FileCheck %s

// StringNormalizer with a declared extent: the input's i64 string handles
// (flattened from [1, 4]) and the packed stopwords go to a private
// declaration marked with the runtime kernel; the kept count is checked
// against the declared extent (a message naming the node), and the result
// is a slice of the kernel's buffer, reshaped back to [1, 3].
// CHECK:       func.func private @[[CALL:__kiln_string_call_0]](memref<4xi64>, i64, memref<4xi64>, i32, i32, memref<7xi8>, i64) -> i64
// CHECK-SAME:    attributes {kiln.string_kernel = "normalize_strings"}
// CHECK-LABEL: func.func @normalize
// CHECK-SAME:    (%[[X:.+]]: tensor<1x4xi64>) -> tensor<1x3xi64>
// CHECK:       %[[FLAT:.+]] = tensor.collapse_shape %[[X]] {{\[\[}}0, 1]] : tensor<1x4xi64> into tensor<4xi64>
// CHECK:       %[[SRC:.+]] = bufferization.to_buffer %[[FLAT]] read_only : tensor<4xi64> to memref<4xi64>
// CHECK:       %[[DST:.+]] = memref.alloc() {alignment = 64 : i64} : memref<4xi64>
// CHECK-DAG:   %[[N:.+]] = arith.constant 4 : i64
// CHECK-DAG:   %[[UPPER:.+]] = arith.constant 2 : i32
// CHECK-DAG:   %[[INSENSITIVE:.+]] = arith.constant 0 : i32
// CHECK-DAG:   %[[WORDS:.+]] = arith.constant dense<[109, 111, 110, 100, 97, 121, 0]> : tensor<7xi8>
// CHECK:       %[[WBUF:.+]] = bufferization.to_buffer %[[WORDS]] read_only
// CHECK:       %[[ONE:.+]] = arith.constant 1 : i64
// CHECK:       %[[COUNT:.+]] = call @[[CALL]](%[[SRC]], %[[N]], %[[DST]], %[[UPPER]], %[[INSENSITIVE]], %[[WBUF]], %[[ONE]])
// CHECK:       %[[ALL:.+]] = bufferization.to_tensor %[[DST]] restrict writable : memref<4xi64> to tensor<4xi64>
// CHECK:       %[[OK:.+]] = arith.cmpi eq, %[[COUNT]], %{{.+}} : i64
// CHECK:       cf.assert %[[OK]], "node 'n': StringNormalizer: the number of strings kept differs from the declared output extent 3"
// CHECK:       %[[KEPT:.+]] = tensor.extract_slice %[[ALL]][0] [3] [1] : tensor<4xi64> to tensor<3xi64>
// CHECK:       %[[R:.+]] = tensor.expand_shape %[[KEPT]] {{\[\[}}0, 1]] output_shape [1, 3] : tensor<3xi64> into tensor<1x3xi64>
// CHECK:       return %[[R]]
func.func @normalize(%x: tensor<1x4x!kiln.string>) -> tensor<1x3x!kiln.string> {
  %0 = kiln.normalize_strings %x {case_action = "UPPER", case_sensitive = false, stopwords = ["monday"]} : tensor<1x4x!kiln.string> -> tensor<1x3x!kiln.string> loc(#loc)
  return %0 : tensor<1x3x!kiln.string>
}
#loc = loc(fused<"StringNormalizer">["n"])

// -----

// Without a declared extent the count becomes the result's run-time extent:
// no check, a dynamic slice.
// CHECK-LABEL: func.func @dynamic
// CHECK-SAME:    -> tensor<?xi64>
// CHECK:       %[[COUNT:.+]] = call @__kiln_string_call_0
// CHECK:       %[[ALL:.+]] = bufferization.to_tensor
// CHECK:       %[[E:.+]] = arith.index_cast %[[COUNT]] : i64 to index
// CHECK-NOT:   cf.assert
// CHECK:       tensor.extract_slice %[[ALL]][0] [%[[E]]] [1] : tensor<4xi64> to tensor<?xi64>
func.func @dynamic(%x: tensor<4x!kiln.string>) -> tensor<?x!kiln.string> {
  %0 = kiln.normalize_strings %x {case_action = "NONE", case_sensitive = true, stopwords = []} : tensor<4x!kiln.string> -> tensor<?x!kiln.string>
  return %0 : tensor<?x!kiln.string>
}

// -----

// Casts: numbers to strings passes the ABI dtype of the unsigned source
// (uint8 = 2) before signedness is erased; strings to numbers passes the
// node for the kernel's message and ends the run when the kernel reports a
// bad string.
// CHECK-DAG:   func.func private @[[FROM:__kiln_string_call_[0-9]+]](i32, memref<2xi64>, memref<2xf64>, i64, memref<15xi8>) -> i32 attributes {kiln.string_kernel = "strings_to_numbers"}
// CHECK-DAG:   func.func private @[[TO:__kiln_string_call_[0-9]+]](i32, memref<6xi8>, memref<6xi64>, i64) attributes {kiln.string_kernel = "strings_from_numbers"}
// CHECK-LABEL: func.func @casts
// CHECK-SAME:    (%[[X:.+]]: tensor<2x3xi8>, %[[S:.+]]: tensor<2xi64>) -> (tensor<2x3xi64>, tensor<2xf64>)
// CHECK:       %[[U8:.+]] = arith.constant 2 : i32
// CHECK:       call @[[TO]](%[[U8]], %{{.+}}, %{{.+}}, %{{.+}})
// CHECK:       tensor.expand_shape %{{.+}} {{\[\[}}0, 1]] output_shape [2, 3] : tensor<6xi64> into tensor<2x3xi64>
// CHECK:       %[[F64:.+]] = arith.constant 11 : i32
// CHECK:       %[[WHAT:.+]] = arith.constant dense<[110, 111, 100, 101, 32, 39, 99, 39, 58, 32, 67, 97, 115, 116, 0]> : tensor<15xi8>
// CHECK:       %[[STATUS:.+]] = call @[[FROM]](%[[F64]],
// CHECK:       %[[OK:.+]] = arith.cmpi eq, %[[STATUS]], %{{.+}} : i32
// CHECK:       cf.assert %[[OK]], "node 'c': Cast: a string is not a number"
func.func @casts(%x: tensor<2x3xui8>, %s: tensor<2x!kiln.string>) -> (tensor<2x3x!kiln.string>, tensor<2xf64>) {
  %0 = kiln.cast_to_string %x : tensor<2x3xui8> -> tensor<2x3x!kiln.string>
  %1 = kiln.cast_from_string %s : tensor<2x!kiln.string> -> tensor<2xf64> loc(#loc)
  return %0, %1 : tensor<2x3x!kiln.string>, tensor<2xf64>
}
#loc = loc(fused<"Cast">["c"])
