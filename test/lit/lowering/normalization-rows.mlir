// RUN: kiln-opt %s -kiln-lower-to-linalg -canonicalize -split-input-file | FileCheck %s

// Softmax over the last axis of f32: one scf.forall over the 12*64 rows;
// per row a vector max, exp(x - max) written and summed, then a scale by
// 1/sum. No linalg op and no per-row tensor.empty.
// CHECK-LABEL: func.func @softmax_rows
// CHECK-SAME: (%[[X:.+]]: tensor<1x12x64x64xf32>)
// CHECK-NOT: linalg.
// CHECK: %[[X2:.+]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1, 2], [3]] : tensor<1x12x64x64xf32> into tensor<768x64xf32>
// CHECK: %[[E:.+]] = tensor.empty() : tensor<768x64xf32>
// CHECK: %[[R:.+]] = scf.forall (%[[I:.+]]) in (768) shared_outs(%[[O:.+]] = %[[E]])
// CHECK: %[[ROW:.+]] = tensor.extract_slice %[[X2]][%[[I]], 0] [1, 64] [1, 1] : tensor<768x64xf32> to tensor<64xf32>
// CHECK: %[[OROW:.+]] = tensor.extract_slice %[[O]][%[[I]], 0] [1, 64] [1, 1]
// CHECK: %[[MAXV:.+]] = scf.for {{.+}} iter_args(%[[ACC:.+]] = %{{.+}}) -> (vector<16xf32>)
// CHECK: vector.transfer_read %[[ROW]]
// CHECK: arith.maximumf %[[ACC]], %{{.+}} : vector<16xf32>
// CHECK: %[[MAX:.+]] = vector.reduction <maximumf>, %[[MAXV]] : vector<16xf32> into f32
// CHECK: %[[EXPS:.+]]:2 = scf.for {{.+}} iter_args(%[[W:.+]] = %[[OROW]], %{{.+}} = %{{.+}}) -> (tensor<64xf32>, vector<16xf32>)
// CHECK: %[[M:.+]] = vector.broadcast %[[MAX]] : f32 to vector<16xf32>
// CHECK: %[[D:.+]] = arith.subf %{{.+}}, %[[M]] : vector<16xf32>
// CHECK: %[[EXP:.+]] = math.exp %[[D]] : vector<16xf32>
// CHECK: vector.transfer_write %[[EXP]], %[[W]]
// CHECK: %[[SUM:.+]] = vector.reduction <add>, %[[EXPS]]#1
// CHECK: %[[INV:.+]] = arith.divf %{{.+}}, %[[SUM]] : f32
// CHECK: %[[SCALED:.+]] = scf.for {{.+}} iter_args(%[[W2:.+]] = %[[EXPS]]#0) -> (tensor<64xf32>)
// CHECK: vector.transfer_read %[[W2]]
// CHECK: arith.mulf
// CHECK: scf.forall.in_parallel
// CHECK: tensor.parallel_insert_slice %[[SCALED]] into %[[O]][%[[I]], 0] [1, 64] [1, 1]
// CHECK: tensor.expand_shape %[[R]] {{\[}}[0, 1, 2], [3]]
func.func @softmax_rows(%x: tensor<1x12x64x64xf32>) -> tensor<1x12x64x64xf32> {
  %y = kiln.softmax %x {axis = 3 : i64} : (tensor<1x12x64x64xf32>) -> tensor<1x12x64x64xf32>
  return %y : tensor<1x12x64x64xf32>
}

// -----

// Layer norm over 40 columns: two vector iterations and an 8-element scalar
// tail per pass (sum, squared deviations, then the write with scale and
// bias read at the same position).
// CHECK-LABEL: func.func @layer_norm_rows
// CHECK-SAME: (%[[X:.+]]: tensor<4x40xf32>, %[[G:.+]]: tensor<40xf32>, %[[B:.+]]: tensor<40xf32>)
// CHECK-DAG: %[[C32:.+]] = arith.constant 32 : index
// CHECK-DAG: %[[C40:.+]] = arith.constant 40 : index
// CHECK-DAG: %[[N:.+]] = arith.constant 4.000000e+01 : f32
// CHECK-DAG: %[[EPS:.+]] = arith.constant 9.99999974E-6 : f32
// CHECK: scf.forall (%{{.+}}) in (4)
// CHECK: %[[SV:.+]] = scf.for %{{.+}} = %{{.+}} to %[[C32]] step %{{.+}} iter_args(%{{.+}}) -> (vector<16xf32>)
// CHECK: %[[S0:.+]] = vector.reduction <add>, %[[SV]]
// CHECK: %[[S:.+]] = scf.for %{{.+}} = %[[C32]] to %[[C40]] step %{{.+}} iter_args(%{{.+}} = %[[S0]]) -> (f32)
// CHECK: tensor.extract
// CHECK: %[[MEAN:.+]] = arith.divf %[[S]], %[[N]] : f32
// CHECK: scf.for
// CHECK: arith.mulf %{{.+}}, %{{.+}} : vector<16xf32>
// CHECK: %[[SQ:.+]] = scf.for
// CHECK: %[[VAR:.+]] = arith.divf %[[SQ]], %[[N]] : f32
// CHECK: %[[VE:.+]] = arith.addf %[[VAR]], %[[EPS]] : f32
// CHECK: %[[RSTD:.+]] = math.rsqrt %[[VE]] : f32
// CHECK: scf.for {{.+}} -> (tensor<40xf32>)
// CHECK: vector.transfer_read %[[G]]
// CHECK: vector.transfer_read %[[B]]
// CHECK: vector.transfer_write
// CHECK: scf.for {{.+}} -> (tensor<40xf32>)
// CHECK: tensor.extract %[[G]]
// CHECK: tensor.extract %[[B]]
// CHECK: tensor.insert
func.func @layer_norm_rows(%x: tensor<4x40xf32>, %g: tensor<40xf32>, %b: tensor<40xf32>) -> tensor<4x40xf32> {
  %y = kiln.layer_norm %x, %g, %b {axis = 1 : i64, epsilon = 1.0e-05 : f64} : (tensor<4x40xf32>, tensor<40xf32>, tensor<40xf32>) -> tensor<4x40xf32>
  return %y : tensor<4x40xf32>
}

// -----

// log_softmax: max, sum of exp(x - max), then x - (max + log(sum)) written.
// CHECK-LABEL: func.func @log_softmax_rows
// CHECK: scf.forall (%{{.+}}) in (3)
// CHECK: vector.reduction <maximumf>
// CHECK: math.exp %{{.+}} : vector<16xf32>
// CHECK: %[[SUM:.+]] = vector.reduction <add>
// CHECK: %[[LOG:.+]] = math.log %[[SUM]] : f32
// CHECK: %[[SHIFT:.+]] = arith.addf %{{.+}}, %[[LOG]] : f32
// CHECK: vector.broadcast %[[SHIFT]]
// CHECK: arith.subf
// CHECK: vector.transfer_write
func.func @log_softmax_rows(%x: tensor<3x32xf32>) -> tensor<3x32xf32> {
  %y = kiln.log_softmax %x {axis = 1 : i64} : (tensor<3x32xf32>) -> tensor<3x32xf32>
  return %y : tensor<3x32xf32>
}

// -----

// Not row kernels: a softmax over a middle axis, f16, and a layer norm whose
// bias broadcasts inside the normalized dims keep the generic chains.
// CHECK-LABEL: func.func @not_rows
// CHECK-NOT: scf.forall
// CHECK: linalg.generic
// CHECK-NOT: scf.forall
// CHECK: return
func.func @not_rows(%x: tensor<2x5x3xf32>, %h: tensor<2x8xf16>, %y: tensor<2x3x8xf32>, %g: tensor<3x8xf32>, %b: tensor<8xf32>) -> (tensor<2x5x3xf32>, tensor<2x8xf16>, tensor<2x3x8xf32>) {
  %0 = kiln.softmax %x {axis = 1 : i64} : (tensor<2x5x3xf32>) -> tensor<2x5x3xf32>
  %1 = kiln.softmax %h {axis = 1 : i64} : (tensor<2x8xf16>) -> tensor<2x8xf16>
  %2 = kiln.layer_norm %y, %g, %b {axis = 1 : i64} : (tensor<2x3x8xf32>, tensor<3x8xf32>, tensor<8xf32>) -> tensor<2x3x8xf32>
  return %0, %1, %2 : tensor<2x5x3xf32>, tensor<2x8xf16>, tensor<2x3x8xf32>
}
