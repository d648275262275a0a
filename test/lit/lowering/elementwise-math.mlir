// RUN: kiln-opt %s -kiln-lower-to-linalg -split-input-file | FileCheck %s

// Integer mod without fmod: the remainder is moved to the divisor's sign.
// CHECK-LABEL: func.func @mod_python_sign
// CHECK: linalg.generic
// CHECK: ^bb0(%[[X:.+]]: i32, %[[Y:.+]]: i32, %{{.+}}: i32):
// CHECK: %[[R:.+]] = arith.remsi %[[X]], %[[Y]] : i32
// CHECK: %[[NZ:.+]] = arith.cmpi ne, %[[R]]
// CHECK: %[[XOR:.+]] = arith.xori %[[R]], %[[Y]] : i32
// CHECK: %[[DIFF:.+]] = arith.cmpi slt, %[[XOR]]
// CHECK: %[[FIX:.+]] = arith.andi %[[NZ]], %[[DIFF]] : i1
// CHECK: %[[SUM:.+]] = arith.addi %[[R]], %[[Y]] : i32
// CHECK: arith.select %[[FIX]], %[[SUM]], %[[R]] : i32
func.func @mod_python_sign(%a: tensor<6xi32>, %b: tensor<6xi32>) -> tensor<6xi32> {
  %0 = kiln.mod %a, %b : (tensor<6xi32>, tensor<6xi32>) -> tensor<6xi32>
  return %0 : tensor<6xi32>
}

// -----

// fmod on floats is remf; unsigned mod is remui whatever fmod says.
// CHECK-LABEL: func.func @mod_fmod
// CHECK: arith.remf %{{.+}}, %{{.+}} : f16
// CHECK-NOT: arith.select
// CHECK: arith.remui %{{.+}}, %{{.+}} : i8
func.func @mod_fmod(%a: tensor<6xf16>, %u: tensor<3xui8>) -> (tensor<6xf16>, tensor<3xui8>) {
  %0 = kiln.mod %a, %a {fmod = true} : (tensor<6xf16>, tensor<6xf16>) -> tensor<6xf16>
  %1 = kiln.mod %u, %u : (tensor<3xui8>, tensor<3xui8>) -> tensor<3xui8>
  return %0, %1 : tensor<6xf16>, tensor<3xui8>
}

// -----

// Logic on i1, not as xor with all ones.
// CHECK-LABEL: func.func @logic
// CHECK: arith.andi %{{.+}}, %{{.+}} : i1
// CHECK: arith.ori %{{.+}}, %{{.+}} : i1
// CHECK: %[[T:.+]] = arith.constant true
// CHECK: arith.xori %{{.+}}, %[[T]] : i1
func.func @logic(%a: tensor<4xi1>, %b: tensor<4xi1>) -> (tensor<4xi1>, tensor<4xi1>, tensor<4xi1>) {
  %0 = kiln.and %a, %b : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  %1 = kiln.or %a, %b : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  %2 = kiln.not %a : (tensor<4xi1>) -> tensor<4xi1>
  return %0, %1, %2 : tensor<4xi1>, tensor<4xi1>, tensor<4xi1>
}

// -----

// Shifts by the width or more give 0 instead of poison.
// CHECK-LABEL: func.func @shift_right
// CHECK: ^bb0(%[[X:.+]]: i16, %[[N:.+]]: i16, %{{.+}}: i16):
// CHECK: %[[S:.+]] = arith.shrui %[[X]], %[[N]] : i16
// CHECK: %[[W:.+]] = arith.constant 16 : i16
// CHECK: %[[OK:.+]] = arith.cmpi ult, %[[N]], %[[W]] : i16
// CHECK: %[[Z:.+]] = arith.constant 0 : i16
// CHECK: arith.select %[[OK]], %[[S]], %[[Z]] : i16
func.func @shift_right(%a: tensor<3xui16>, %b: tensor<3xui16>) -> tensor<3xui16> {
  %0 = kiln.shift_right %a, %b : (tensor<3xui16>, tensor<3xui16>) -> tensor<3xui16>
  return %0 : tensor<3xui16>
}

// -----

// Comparisons pick ordered float / unsigned predicates.
// CHECK-LABEL: func.func @compare_or_equal
// CHECK: arith.cmpf ole
// CHECK: arith.cmpi uge
func.func @compare_or_equal(%a: tensor<4xf32>, %u: tensor<4xui32>) -> (tensor<4xi1>, tensor<4xi1>) {
  %0 = kiln.less_equal %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %1 = kiln.greater_equal %u, %u : (tensor<4xui32>, tensor<4xui32>) -> tensor<4xi1>
  return %0, %1 : tensor<4xi1>, tensor<4xi1>
}

// -----

// Round is half to even; f16 trigonometry is computed in f32.
// CHECK-LABEL: func.func @round_and_trig
// CHECK: math.roundeven %{{.+}} : f32
// CHECK: %[[W:.+]] = arith.extf %{{.+}} : f16 to f32
// CHECK: %[[A:.+]] = math.acos %[[W]] : f32
// CHECK: arith.truncf %[[A]] : f32 to f16
func.func @round_and_trig(%a: tensor<4xf32>, %h: tensor<4xf16>) -> (tensor<4xf32>, tensor<4xf16>) {
  %0 = kiln.round %a : (tensor<4xf32>) -> tensor<4xf32>
  %1 = kiln.acos %h : (tensor<4xf16>) -> tensor<4xf16>
  return %0, %1 : tensor<4xf32>, tensor<4xf16>
}
