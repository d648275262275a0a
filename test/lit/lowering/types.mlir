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

// -----

// A model's Loop and If (scf.while, scf.if over tensors) carry unsigned
// values as signless ones; the kiln ops in their regions lower in place.
// CHECK-LABEL: func.func @loop_and_if
// CHECK-SAME: (%[[X:.+]]: tensor<4xi8>, %[[N:.+]]: i64, %[[C:.+]]: i1) -> tensor<?xi8>
// CHECK: %[[W:.+]]:2 = scf.while (%{{.+}} = %{{.+}}, %{{.+}} = %[[X]]) : (i64, tensor<4xi8>) -> (i64, tensor<4xi8>)
// CHECK: scf.condition
// CHECK: linalg.generic
// CHECK: arith.addi %{{.+}}, %{{.+}} : i8
// CHECK: scf.yield %{{.+}}, %{{.+}} : i64, tensor<4xi8>
// CHECK: scf.if %[[C]] -> (tensor<?xi8>)
// CHECK: tensor.insert_slice %[[W]]#1
// CHECK: tensor.cast %{{.+}} : tensor<8xi8> to tensor<?xi8>
// CHECK: scf.yield %{{.+}} : tensor<?xi8>
// CHECK: } else {
// CHECK: tensor.cast %[[W]]#1 : tensor<4xi8> to tensor<?xi8>
// CHECK-NOT: ui8
func.func @loop_and_if(%x: tensor<4xui8>, %n: i64, %c: i1) -> tensor<?xui8> {
  %zero = arith.constant 0 : i64
  %one = arith.constant 1 : i64
  %w:2 = scf.while (%i = %zero, %v = %x) : (i64, tensor<4xui8>) -> (i64, tensor<4xui8>) {
    %more = arith.cmpi slt, %i, %n : i64
    scf.condition(%more) %i, %v : i64, tensor<4xui8>
  } do {
  ^bb0(%i: i64, %v: tensor<4xui8>):
    %next = kiln.add %v, %x : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
    %j = arith.addi %i, %one : i64
    scf.yield %j, %next : i64, tensor<4xui8>
  }
  %r = scf.if %c -> tensor<?xui8> {
    %twice = kiln.concat %w#1, %w#1 {axis = 0 : i64} : (tensor<4xui8>, tensor<4xui8>) -> tensor<8xui8>
    %t = tensor.cast %twice : tensor<8xui8> to tensor<?xui8>
    scf.yield %t : tensor<?xui8>
  } else {
    %e = tensor.cast %w#1 : tensor<4xui8> to tensor<?xui8>
    scf.yield %e : tensor<?xui8>
  }
  return %r : tensor<?xui8>
}
