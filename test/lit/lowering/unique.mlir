// RUN: kiln-opt %s -kiln-lower-to-linalg | FileCheck %s

// Unique of the rows of a 4x3 matrix: the keys viewed as [1, 4, 3]; a loop
// finding each key's first occurrence (comparing keys element by element)
// and counting the distinct ones, a loop ranking the first occurrences
// (sorted: by lexicographic less), a loop writing indices and counts sized
// by the distinct count, and a generic gathering the rows at those indices.
// CHECK-LABEL: func.func @unique_rows
// CHECK: %[[KEYS:.+]] = tensor.expand_shape %arg0 {{.*}} into tensor<1x4x3xf32>
// CHECK: %[[FIRST:.+]]:2 = scf.for {{.*}} -> (tensor<4xi64>, index)
// CHECK: scf.for
// CHECK: scf.for
// CHECK: arith.cmpf une
// CHECK: %[[RANK:.+]] = scf.for {{.*}} -> (tensor<4xi64>)
// CHECK: arith.cmpf olt
// CHECK: %[[ZEROS:.+]] = linalg.fill {{.*}} -> tensor<?xi64>
// CHECK: %[[OUT:.+]]:2 = scf.for {{.*}} iter_args({{.*}}, %{{.+}} = %[[ZEROS]]) -> (tensor<?xi64>, tensor<?xi64>)
// CHECK: %[[VALUES:.+]] = tensor.empty(%[[FIRST]]#1) : tensor<?x3xf32>
// CHECK: %[[Y:.+]] = linalg.generic {{.*}} outs(%[[VALUES]] : tensor<?x3xf32>)
// CHECK: tensor.extract %[[OUT]]#0
// CHECK: tensor.extract %arg0
// CHECK: return %[[Y]], %[[OUT]]#0, %[[RANK]], %[[OUT]]#1
func.func @unique_rows(%x: tensor<4x3xf32>) -> (tensor<?x3xf32>, tensor<?xi64>, tensor<4xi64>, tensor<?xi64>) {
  %y, %i, %inv, %n = kiln.unique %x {axis = 0 : i64, sorted = true} : (tensor<4x3xf32>) -> (tensor<?x3xf32>, tensor<?xi64>, tensor<4xi64>, tensor<?xi64>)
  return %y, %i, %inv, %n : tensor<?x3xf32>, tensor<?xi64>, tensor<4xi64>, tensor<?xi64>
}
