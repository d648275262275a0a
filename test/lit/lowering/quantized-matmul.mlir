// RUN: kiln-opt %s -kiln-lower-to-linalg -canonicalize -split-input-file | FileCheck %s

// Constant int8 weights: the zero-point correction -128 * colsum (64 * 3 =
// 192 per column) is computed at compile time and broadcast as the f32
// accumulator's start; the contraction multiplies the raw bytes (lhs
// unsigned, rhs signed) in i32 and adds each product as f32. The rows of
// all leading dims are one M.
// CHECK-DAG: #[[COL:.+]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG: #[[A:.+]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[B:.+]] = affine_map<(d0, d1, d2) -> (d2, d1)>
// CHECK-DAG: #[[C:.+]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @constant_weights
// CHECK-DAG: %[[SUMS:.+]] = arith.constant dense<192> : tensor<32xi32>
// CHECK-DAG: %[[ZP:.+]] = arith.constant -128 : i64
// CHECK: %[[ROWS:.+]] = tensor.collapse_shape %arg0 {{\[}}[0, 1], [2]] : tensor<2x4x64xi8> into tensor<8x64xi8>
// CHECK: %[[INIT:.+]] = linalg.generic {indexing_maps = [#[[COL]], #{{.+}}], {{.+}} ins(%[[SUMS]] : tensor<32xi32>) outs(%{{.+}} : tensor<8x32xf32>)
// CHECK: arith.muli %{{.+}}, %[[ZP]] : i64
// CHECK: arith.sitofp
// CHECK: %[[Y:.+]] = linalg.generic {indexing_maps = [#[[A]], #[[B]], #[[C]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[ROWS]], %{{.+}} : tensor<8x64xi8>, tensor<64x32xi8>) outs(%[[INIT]] : tensor<8x32xf32>) attrs = {kiln.int8_contraction = true}
// CHECK: %[[X:.+]] = arith.extui %{{.+}} : i8 to i32
// CHECK: %[[W:.+]] = arith.extsi %{{.+}} : i8 to i32
// CHECK: %[[P:.+]] = arith.muli %[[X]], %[[W]] : i32
// CHECK: %[[F:.+]] = arith.sitofp %[[P]] : i32 to f32
// CHECK: arith.addf %{{.+}}, %[[F]] : f32
// CHECK: tensor.expand_shape %[[Y]] {{\[}}[0, 1], [2]] output_shape [2, 4, 32]
func.func @constant_weights(%x: tensor<2x4x64xui8>) -> tensor<2x4x32xf32> {
  %w = kiln.constant dense<3> : tensor<64x32xi8>
  %y = kiln.quantized_matmul %x, %w {lhs_zero_point = 128 : i64} : (tensor<2x4x64xui8>, tensor<64x32xi8>) -> tensor<2x4x32xf32>
  return %y : tensor<2x4x32xf32>
}

// -----

// Weights known only at run time: the column sums are a reduction per run.
// CHECK-LABEL: func.func @runtime_weights
// CHECK: %[[SUMS:.+]] = linalg.generic {{.+}} iterator_types = ["parallel", "reduction"]} ins(%arg1 : tensor<64x32xi8>) outs(%{{.+}} : tensor<32xi32>)
// CHECK: arith.extsi
// CHECK: arith.addi
// CHECK: linalg.generic {{.+}} ins(%[[SUMS]] : tensor<32xi32>) outs(%{{.+}} : tensor<8x32xf32>)
// CHECK: kiln.int8_contraction = true
func.func @runtime_weights(%x: tensor<8x64xui8>, %w: tensor<64x32xi8>) -> tensor<8x32xf32> {
  %y = kiln.quantized_matmul %x, %w {lhs_zero_point = 3 : i64} : (tensor<8x64xui8>, tensor<64x32xi8>) -> tensor<8x32xf32>
  return %y : tensor<8x32xf32>
}

// -----

// Zero point 0: a zero fill, no correction.
// CHECK-LABEL: func.func @no_zero_point
// CHECK: %[[ZERO:.+]] = linalg.fill
// CHECK: linalg.generic {{.+}} outs(%[[ZERO]] : tensor<8x32xf32>) attrs = {kiln.int8_contraction = true}
func.func @no_zero_point(%x: tensor<8x64xui8>) -> tensor<8x32xf32> {
  %w = kiln.constant dense<1> : tensor<64x32xi8>
  %y = kiln.quantized_matmul %x, %w {lhs_zero_point = 0 : i64} : (tensor<8x64xui8>, tensor<64x32xi8>) -> tensor<8x32xf32>
  return %y : tensor<8x32xf32>
}
