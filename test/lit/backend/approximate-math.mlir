// RUN: kiln-opt %s -kiln-approximate-math | FileCheck %s

// f32 transcendentals become inline arith; f16 goes through f32.
// CHECK-LABEL: func.func @approximated(
// CHECK-NOT:     math.exp
// CHECK-NOT:     math.tanh
// CHECK-NOT:     math.erf
// CHECK-NOT:     math.log
// CHECK:         return
func.func @approximated(%x: f32, %h: f16) -> (f32, f32, f32, f32, f16) {
  %0 = math.exp %x : f32
  %1 = math.tanh %x : f32
  %2 = math.erf %x : f32
  %3 = math.log %x : f32
  %4 = math.exp %h : f16
  return %0, %1, %2, %3, %4 : f32, f32, f32, f32, f16
}

// pow with a constant exponent of 2 is a multiplication.
// CHECK-LABEL: func.func @square(
// CHECK-SAME:    %[[X:.+]]: f32)
// CHECK:         %[[SQ:.+]] = arith.mulf %[[X]], %[[X]] : f32
// CHECK:         return %[[SQ]]
func.func @square(%x: f32) -> f32 {
  %two = arith.constant 2.0 : f32
  %0 = math.powf %x, %two : f32
  return %0 : f32
}

// Left for LLVM intrinsics or libm: f64, sin, pow with a variable exponent.
// CHECK-LABEL: func.func @kept(
// CHECK:         math.exp %{{.+}} : f64
// CHECK:         math.erf %{{.+}} : f64
// CHECK:         math.sin %{{.+}} : f32
// CHECK:         math.powf %{{.+}}, %{{.+}} : f32
func.func @kept(%d: f64, %x: f32, %y: f32) -> (f64, f64, f32, f32) {
  %0 = math.exp %d : f64
  %1 = math.erf %d : f64
  %2 = math.sin %x : f32
  %3 = math.powf %x, %y : f32
  return %0, %1, %2, %3 : f64, f64, f32, f32
}
