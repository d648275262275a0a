// RUN: env KILN_LOGS=lowering kiln-opt --mlir-disable-threading %s -kiln-report-kernels 2>&1 | FileCheck %s

// A call of a runtime string kernel (kiln.string_kernel, from the string
// ops' lowering) is a kernel of its own, named after the kernel.
// CHECK: [kiln:lowering] 0:strings_to_numbers <- c
// CHECK-NOT: [kiln:lowering]
func.func private @__kiln_string_call_0(i32, memref<2xi64>, memref<2xf32>, i64, memref<1xi8>) -> i32 attributes {kiln.string_kernel = "strings_to_numbers"}
func.func @string_call(%src: memref<2xi64>, %dst: memref<2xf32>, %what: memref<1xi8>) -> i32 {
  %c1 = arith.constant 1 : i32
  %n = arith.constant 2 : i64
  %s = call @__kiln_string_call_0(%c1, %src, %dst, %n, %what) : (i32, memref<2xi64>, memref<2xf32>, i64, memref<1xi8>) -> i32 loc(#loc)
  return %s : i32
}
#loc = loc(fused<"Cast">["c"])
