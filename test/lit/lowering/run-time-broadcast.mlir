// RUN: kiln-opt %s -kiln-lower-to-linalg -canonicalize -kiln-unify-symbol-dims -canonicalize -cse -split-input-file | FileCheck %s

// Two symbols meet along dim 1 (`n` and `m`): the result extent is the
// first that is not 1, each must be it or 1, and an input whose extent
// differs from it is read through a broadcast made only then. Along dim 0
// both inputs are `b`: one extent, nothing to check.
// CHECK-LABEL: func.func @two_symbols
// CHECK-DAG:   %[[C1:.+]] = arith.constant 1 : index
// CHECK-DAG:   %[[N:.+]] = tensor.dim %arg0, %c1
// CHECK-DAG:   %[[M:.+]] = tensor.dim %arg1, %c1
// CHECK:       %[[NONE:.+]] = arith.cmpi eq, %[[N]], %[[C1]] : index
// CHECK:       %[[R:.+]] = arith.select %[[NONE]], %[[M]], %[[N]] : index
// CHECK:       %[[XSAME:.+]] = arith.cmpi eq, %[[N]], %[[R]] : index
// CHECK:       cf.assert %{{.+}}, "node '?': the inputs do not broadcast: along result dim 1 a run-time extent is neither the others' nor 1"
// CHECK:       %[[XB:.+]] = scf.if %[[XSAME]] -> (tensor<?x?xf32>) {
// CHECK-NEXT:    scf.yield %arg0 : tensor<?x?xf32>
// CHECK-NEXT:  } else {
// CHECK:         linalg.generic
// CHECK:           %[[J:.+]] = linalg.index 1 : index
// CHECK:           %[[AT:.+]] = arith.select %[[NONE]], %c0, %[[J]] : index
// CHECK:           tensor.extract %arg0[%{{.+}}, %[[AT]]] : tensor<?x?xf32>
// CHECK:       %[[YB:.+]] = scf.if
// CHECK:       linalg.generic {{.+}} ins(%[[XB]], %[[YB]] : tensor<?x?xf32>, tensor<?x?xf32>)
// CHECK:         arith.addf
func.func @two_symbols(%x: tensor<?x?xf32> {kiln.dims = ["b", "n"]},
                       %y: tensor<?x?xf32> {kiln.dims = ["b", "m"]})
    -> tensor<?x?xf32> {
  %0 = kiln.add %x, %y : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

// One symbol on both inputs: the extents unify, and the checks and the
// broadcasts fold away.
// CHECK-LABEL: func.func @one_symbol
// CHECK-NOT:   cf.assert
// CHECK-NOT:   scf.if
// CHECK:       linalg.generic
// CHECK-SAME:    ins(%arg0, %arg1 : tensor<?x?xf32>, tensor<?x?xf32>)
func.func @one_symbol(%x: tensor<?x?xf32> {kiln.dims = ["b", "n"]},
                      %y: tensor<?x?xf32> {kiln.dims = ["b", "n"]})
    -> tensor<?x?xf32> {
  %0 = kiln.add %x, %y : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

// A run-time extent against a static 3: it must be 3 or 1, and 1 is
// broadcast to 3 (a cast otherwise).
// CHECK-LABEL: func.func @static_result
// CHECK:       %[[D:.+]] = tensor.dim %arg0, %c0 : tensor<?x4xf32>
// CHECK:       %[[IS3:.+]] = arith.cmpi eq, %[[D]], %c3 : index
// CHECK:       cf.assert
// CHECK:       scf.if %[[IS3]] -> (tensor<3x4xf32>) {
// CHECK-NEXT:    tensor.cast %arg0 : tensor<?x4xf32> to tensor<3x4xf32>
func.func @static_result(%x: tensor<?x4xf32>, %y: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %0 = kiln.mul %x, %y : (tensor<?x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

// A batched matmul's run-time batch dims broadcast the same way (the
// matrix dims are left out); an inner dim known only at run time is
// checked against the other side's.
// CHECK-LABEL: func.func @batched_matmul
// CHECK:       cf.assert %{{.+}}, "node '?': MatMul: the inputs' inner dims differ (the first input's last dim and the second's second to last)"
// CHECK-DAG:   %[[B:.+]] = tensor.dim %arg0, %c0 : tensor<?x4x?xf32>
// CHECK-DAG:   %[[C:.+]] = tensor.dim %arg1, %c0 : tensor<?x?x3xf32>
// CHECK:       %[[BONE:.+]] = arith.cmpi eq, %[[B]], %c1 : index
// CHECK:       %[[R:.+]] = arith.select %[[BONE]], %[[C]], %[[B]] : index
// CHECK:       cf.assert %{{.+}}, "node '?': the inputs do not broadcast: along result dim 0 a run-time extent is neither the others' nor 1"
// CHECK:       %[[X:.+]] = scf.if
// CHECK:       %[[Y:.+]] = scf.if
// CHECK:       %[[E:.+]] = tensor.empty(%[[R]]) : tensor<?x4x3xf32>
// CHECK:       linalg.generic {{.+}} ins(%[[X]], %[[Y]] : tensor<?x4x?xf32>, tensor<?x?x3xf32>)
func.func @batched_matmul(%x: tensor<?x4x?xf32>, %y: tensor<?x?x3xf32>) -> tensor<?x4x3xf32> {
  %0 = kiln.matmul %x, %y : (tensor<?x4x?xf32>, tensor<?x?x3xf32>) -> tensor<?x4x3xf32>
  return %0 : tensor<?x4x3xf32>
}

// -----

// Concat does not broadcast: off the axis, every run-time extent is
// checked against the first input's.
// CHECK-LABEL: func.func @concat_run_time
// CHECK:       %[[X:.+]] = tensor.dim %arg0, %c0 : tensor<?x3xf32>
// CHECK:       %[[Y:.+]] = tensor.dim %arg1, %c0 : tensor<?x4xf32>
// CHECK:       %[[SAME:.+]] = arith.cmpi eq, %[[Y]], %[[X]] : index
// CHECK:       cf.assert %[[SAME]], "node '?': Concat: the inputs differ in dim 0 (only the axis, 1, may differ)"
func.func @concat_run_time(%x: tensor<?x3xf32>, %y: tensor<?x4xf32>) -> tensor<?x7xf32> {
  %0 = kiln.concat %x, %y {axis = 1 : i64} : (tensor<?x3xf32>, tensor<?x4xf32>) -> tensor<?x7xf32>
  return %0 : tensor<?x7xf32>
}

// -----

// BatchNormalization over run-time channels with parameters of a static
// extent: the channel count must be that extent (the parameters do not
// broadcast to it, and a count of 1 does not take their 4 either).
// CHECK-LABEL: func.func @batch_norm_static_params
// CHECK:       %[[C:.+]] = tensor.dim %arg0, %c1 : tensor<?x?x5xf32>
// CHECK:       %[[FOUR:.+]] = arith.cmpi eq, %[[C]], %c4 : index
// CHECK:       cf.assert %[[FOUR]], "node '?': the inputs do not broadcast: along result dim 0 a run-time extent is neither the others' nor 1"
func.func @batch_norm_static_params(%x: tensor<?x?x5xf32>, %s: tensor<4xf32>) -> tensor<?x?x5xf32> {
  %0 = kiln.batch_norm %x, %s, %s, %s, %s : (tensor<?x?x5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<?x?x5xf32>
  return %0 : tensor<?x?x5xf32>
}
