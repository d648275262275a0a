// RUN: kiln-opt %s -split-input-file -kiln-unify-symbol-dims | FileCheck %s

// Every dim of symbol `n` reads %x's and `b` likewise, so their
// comparisons fold; `m` (%y's own) against `n` stays a comparison.
// CHECK-LABEL: func.func @shared
// CHECK-DAG:   %[[TRUE:.+]] = arith.constant true
// CHECK-DAG:   %[[N:.+]] = tensor.dim %arg0, %c1
// CHECK-DAG:   %[[M:.+]] = tensor.dim %arg1, %c0
// CHECK:       %[[MN:.+]] = arith.cmpi eq, %[[M]], %[[N]] : index
// CHECK:       return %[[TRUE]], %[[TRUE]], %[[MN]]
func.func @shared(%x: tensor<?x?xf32> {kiln.dims = ["b", "n"]},
                  %y: tensor<?x?xf32> {kiln.dims = ["m", "n"]},
                  %z: tensor<?xf32> {kiln.dims = ["b"]}) -> (i1, i1, i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %0 = tensor.dim %x, %c1 : tensor<?x?xf32>
  %1 = tensor.dim %y, %c1 : tensor<?x?xf32>
  %2 = arith.cmpi eq, %0, %1 : index
  %3 = tensor.dim %z, %c0 : tensor<?xf32>
  %4 = tensor.dim %x, %c0 : tensor<?x?xf32>
  %5 = arith.cmpi eq, %3, %4 : index
  %6 = tensor.dim %y, %c0 : tensor<?x?xf32>
  %7 = arith.cmpi eq, %6, %0 : index
  return %2, %5, %7 : i1, i1, i1
}

// -----

// Extents traced through results: the expand_shape's output extents are
// the symbol's, the run-time reshape's check and choice between a view and
// a copy fold to the view, and the dim of what follows is `s` again.
// CHECK-LABEL: func.func @through_results
// CHECK-NOT:   scf.if
// CHECK-NOT:   cf.assert
// CHECK:       %[[S:.+]] = tensor.dim %arg0, %c0
// CHECK:       %[[V:.+]] = tensor.expand_shape %arg1 {{\[\[}}0], [1, 2]] output_shape [%[[S]], 2, 4]
// CHECK:       return %[[V]], %[[S]]
func.func @through_results(%x: tensor<?xf32> {kiln.dims = ["s"]},
                           %y: tensor<?x8xf32> {kiln.dims = ["s", ""]})
    -> (tensor<?x2x4xf32>, index) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  %m = tensor.dim %y, %c0 : tensor<?x8xf32>
  %same = arith.cmpi eq, %m, %n : index
  cf.assert %same, "extents differ"
  %r = scf.if %same -> (tensor<?x2x4xf32>) {
    %v = tensor.expand_shape %y [[0], [1, 2]] output_shape [%n, 2, 4] : tensor<?x8xf32> into tensor<?x2x4xf32>
    scf.yield %v : tensor<?x2x4xf32>
  } else {
    %e = tensor.empty(%n) : tensor<?x2x4xf32>
    scf.yield %e : tensor<?x2x4xf32>
  }
  %d = tensor.dim %r, %c0 : tensor<?x2x4xf32>
  return %r, %d : tensor<?x2x4xf32>, index
}
