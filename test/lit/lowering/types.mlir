// RUN: kiln-opt %s -kiln-lower-to-linalg -split-input-file | FileCheck %s

// uiN -> iN in signatures, calls and returns, even where no kiln op is
// involved; other types are left alone.
// CHECK-LABEL: func.func private @external(tensor<4xi16>, tensor<4xf32>) -> tensor<4xi16>
func.func private @external(tensor<4xui16>, tensor<4xf32>) -> tensor<4xui16>

// CHECK-LABEL: func.func @caller
// CHECK-SAME: (%[[A:.+]]: tensor<4xi16>, %[[B:.+]]: tensor<4xf32>) -> tensor<4xi16>
// CHECK: %[[R:.+]] = call @external(%[[A]], %[[B]]) : (tensor<4xi16>, tensor<4xf32>) -> tensor<4xi16>
// CHECK: return %[[R]] : tensor<4xi16>
func.func @caller(%a: tensor<4xui16>, %b: tensor<4xf32>) -> tensor<4xui16> {
  %0 = call @external(%a, %b) : (tensor<4xui16>, tensor<4xf32>) -> tensor<4xui16>
  return %0 : tensor<4xui16>
}

// -----

// A chain of kiln ops on unsigned values: every intermediate is signless,
// no casts are left behind.
// CHECK-LABEL: func.func @chain
// CHECK-SAME: (%{{.+}}: tensor<2x3xi8>) -> tensor<3x2xi32>
// CHECK: arith.divui
// CHECK: linalg.transpose ins(%{{.+}} : tensor<2x3xi8>) outs(%{{.+}} : tensor<3x2xi8>)
// CHECK: arith.extui %{{.+}} : i8 to i32
// CHECK-NOT: unrealized_conversion_cast
// CHECK-NOT: ui8
func.func @chain(%x: tensor<2x3xui8>) -> tensor<3x2xi32> {
  %c = kiln.constant dense<3> : tensor<ui8>
  %0 = kiln.div %x, %c : (tensor<2x3xui8>, tensor<ui8>) -> tensor<2x3xui8>
  %1 = kiln.transpose %0 {perm = array<i64: 1, 0>} : (tensor<2x3xui8>) -> tensor<3x2xui8>
  %2 = kiln.cast %1 {to = i32} : (tensor<3x2xui8>) -> tensor<3x2xi32>
  return %2 : tensor<3x2xi32>
}
