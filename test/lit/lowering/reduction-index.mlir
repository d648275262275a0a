// RUN: kiln-opt %s -kiln-lower-to-linalg -split-input-file | FileCheck %s

// arg_max: one generic carrying (best value, its index); ties go to the
// smaller index whatever the visiting order.
// CHECK-DAG: #[[$ID:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[$RED:.+]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-LABEL: func.func @arg_max
// CHECK: %[[NINF:.+]] = arith.constant 0xFF800000 : f32
// CHECK: %[[BEST:.+]] = linalg.fill ins(%[[NINF]] : f32) outs(%{{.+}} : tensor<2x4xf32>)
// CHECK: %[[IDX:.+]] = linalg.fill ins(%{{.+}} : i64) outs(%{{.+}} : tensor<2x4xi64>)
// CHECK: %[[R:.+]]:2 = linalg.generic {indexing_maps = [#[[$ID]], #[[$RED]], #[[$RED]]], iterator_types = ["parallel", "reduction", "parallel"]}
// CHECK-SAME: outs(%[[BEST]], %[[IDX]] : tensor<2x4xf32>, tensor<2x4xi64>)
// CHECK: ^bb0(%[[X:.+]]: f32, %[[B:.+]]: f32, %[[BI:.+]]: i64):
// CHECK: %[[I:.+]] = linalg.index 1 : index
// CHECK: %[[II:.+]] = arith.index_cast %[[I]] : index to i64
// CHECK: %[[GT:.+]] = arith.cmpf ogt, %[[X]], %[[B]] : f32
// CHECK: %[[EQ:.+]] = arith.cmpf oeq, %[[X]], %[[B]] : f32
// CHECK: %[[LT:.+]] = arith.cmpi slt, %[[II]], %[[BI]] : i64
// CHECK: %[[TIE:.+]] = arith.andi %[[EQ]], %[[LT]] : i1
// CHECK: %[[TAKE:.+]] = arith.ori %[[GT]], %[[TIE]] : i1
// CHECK: return %[[R]]#1 : tensor<2x4xi64>
func.func @arg_max(%x: tensor<2x3x4xf32>) -> tensor<2x4xi64> {
  %0 = kiln.arg_max %x {axis = 1 : i64, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<2x4xi64>
  return %0 : tensor<2x4xi64>
}

// -----

// arg_min of unsigned values, last index on ties, keepdims.
// CHECK-LABEL: func.func @arg_min_last
// CHECK: arith.constant -1 : i8
// CHECK: arith.cmpi ult
// CHECK: arith.cmpi sgt, %{{.+}}, %{{.+}} : i64
// CHECK: tensor.expand_shape %{{.+}}#1 {{\[}}[0, 1]] output_shape [3, 1] : tensor<3xi64> into tensor<3x1xi64>
func.func @arg_min_last(%x: tensor<3x5xui8>) -> tensor<3x1xi64> {
  %0 = kiln.arg_min %x {axis = 1 : i64, select_last_index = true} : (tensor<3x5xui8>) -> tensor<3x1xi64>
  return %0 : tensor<3x1xi64>
}

// -----

// cumsum: the axis gets a second loop (d2) that reduces; the input reads it
// in place of the axis.
// CHECK-DAG: #[[$IN:.+]] = affine_map<(d0, d1, d2) -> (d2, d1)>
// CHECK-DAG: #[[$OUT:.+]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @cumsum_exclusive_reverse
// CHECK: linalg.generic {indexing_maps = [#[[$IN]], #[[$OUT]]], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK: %[[I:.+]] = linalg.index 0 : index
// CHECK: %[[K:.+]] = linalg.index 2 : index
// CHECK: %[[IN:.+]] = arith.cmpi ugt, %[[K]], %[[I]] : index
// CHECK: arith.select %[[IN]]
// CHECK: arith.addf
func.func @cumsum_exclusive_reverse(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = kiln.cumsum %x {axis = 0 : i64, exclusive = true, reverse = true} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
