// RUN: kiln-opt %s | kiln-opt | FileCheck %s

// Round trip of the elementwise math/logic ops and the index reductions.

// CHECK-LABEL: func.func @math_and_logic
func.func @math_and_logic(%f: tensor<2x3xf32>, %g: tensor<3xf32>,
                          %i: tensor<2x3xi32>, %u: tensor<3xui8>,
                          %p: tensor<4xi1>, %q: tensor<4xi1>) {
  // CHECK: kiln.mod %{{.*}}, %{{.*}} {fmod = true} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %0 = kiln.mod %f, %g {fmod = true} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: kiln.mod %{{.*}}, %{{.*}} : (tensor<2x3xi32>, tensor<2x3xi32>) -> tensor<2x3xi32>
  %1 = kiln.mod %i, %i : (tensor<2x3xi32>, tensor<2x3xi32>) -> tensor<2x3xi32>
  // CHECK: kiln.and
  %2 = kiln.and %p, %q : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  // CHECK: kiln.or
  %3 = kiln.or %p, %q : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  // CHECK: kiln.xor
  %4 = kiln.xor %p, %q : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  // CHECK: kiln.not %{{.*}} : (tensor<4xi1>) -> tensor<4xi1>
  %5 = kiln.not %p : (tensor<4xi1>) -> tensor<4xi1>
  // CHECK: kiln.shift_left
  %6 = kiln.shift_left %u, %u : (tensor<3xui8>, tensor<3xui8>) -> tensor<3xui8>
  // CHECK: kiln.shift_right
  %7 = kiln.shift_right %u, %u : (tensor<3xui8>, tensor<3xui8>) -> tensor<3xui8>
  // CHECK: kiln.less_equal %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %8 = kiln.less_equal %f, %g : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  // CHECK: kiln.greater_equal
  %9 = kiln.greater_equal %f, %g : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  // CHECK: kiln.acosh %{{.*}} : (tensor<3xf32>) -> tensor<3xf32>
  %10 = kiln.acosh %g : (tensor<3xf32>) -> tensor<3xf32>
  // CHECK: kiln.round
  %11 = kiln.round %g : (tensor<3xf32>) -> tensor<3xf32>
  return
}

// CHECK-LABEL: func.func @index_reductions
func.func @index_reductions(%x: tensor<2x3x4xf32>) {
  // CHECK: kiln.arg_max %{{.*}} {axis = 1 : i64, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<2x4xi64>
  %0 = kiln.arg_max %x {axis = 1 : i64, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<2x4xi64>
  // CHECK: kiln.arg_min %{{.*}} {axis = 2 : i64, select_last_index = true} : (tensor<2x3x4xf32>) -> tensor<2x3x1xi64>
  %1 = kiln.arg_min %x {axis = 2 : i64, select_last_index = true} : (tensor<2x3x4xf32>) -> tensor<2x3x1xi64>
  // CHECK: kiln.cumsum %{{.*}} {axis = 0 : i64, exclusive = true, reverse = true}
  %2 = kiln.cumsum %x {axis = 0 : i64, exclusive = true, reverse = true} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  return
}
