// RUN: kiln-opt %s -kiln-lower-to-linalg -split-input-file | FileCheck %s

// Softmax on a middle axis: max, exp(x - max), sum, divide. The reductions
// drop the axis (map (d0, d2)); the elementwise steps read them back through
// the same map.
// CHECK-DAG: #[[$ID:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[$RED:.+]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-LABEL: func.func @softmax_middle_axis
// CHECK-SAME: (%[[X:.+]]: tensor<2x5x3xf32>)
// CHECK: %[[NEGINF:.+]] = arith.constant 0xFF800000 : f32
// CHECK: %[[MAXINIT:.+]] = linalg.fill ins(%[[NEGINF]] : f32) outs(%{{.+}} : tensor<2x3xf32>)
// CHECK: %[[MAX:.+]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$RED]]], iterator_types = ["parallel", "reduction", "parallel"]}
// CHECK-SAME: ins(%[[X]] : tensor<2x5x3xf32>) outs(%[[MAXINIT]] : tensor<2x3xf32>)
// CHECK: arith.maximumf
// CHECK: %[[EXP:.+]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$RED]], #[[$ID]]], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-SAME: ins(%[[X]], %[[MAX]] : tensor<2x5x3xf32>, tensor<2x3xf32>)
// CHECK: %[[D:.+]] = arith.subf
// CHECK: math.exp %[[D]] : f32
// CHECK: %[[SUMINIT:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<2x3xf32>)
// CHECK: %[[SUM:.+]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$RED]]], iterator_types = ["parallel", "reduction", "parallel"]}
// CHECK-SAME: ins(%[[EXP]] : tensor<2x5x3xf32>) outs(%[[SUMINIT]] : tensor<2x3xf32>)
// CHECK: arith.addf
// CHECK: %[[R:.+]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$RED]], #[[$ID]]], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-SAME: ins(%[[EXP]], %[[SUM]] : tensor<2x5x3xf32>, tensor<2x3xf32>)
// CHECK: arith.divf
// CHECK: return %[[R]]
func.func @softmax_middle_axis(%x: tensor<2x5x3xf32>) -> tensor<2x5x3xf32> {
  %y = kiln.softmax %x {axis = 1 : i64} : (tensor<2x5x3xf32>) -> tensor<2x5x3xf32>
  return %y : tensor<2x5x3xf32>
}

// -----

// The last axis of f32: a row kernel (normalization-rows.mlir). f16 keeps
// the generic chain:
// log_softmax: (x - max) - log(sum(exp(x - max))); f16 statistics in f32.
// CHECK-LABEL: func.func @log_softmax_f16
// CHECK-SAME: (%[[X:.+]]: tensor<2x5xf16>)
// CHECK: %[[MAX:.+]] = linalg.generic
// CHECK-SAME: ins(%[[X]] : tensor<2x5xf16>) outs(%{{.+}} : tensor<2xf16>)
// CHECK: arith.maximumf %{{.+}}, %{{.+}} : f16
// CHECK: %[[SUM:.+]] = linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "reduction"]
// CHECK-SAME: ins(%[[X]], %[[MAX]] : tensor<2x5xf16>, tensor<2xf16>) outs(%{{.+}} : tensor<2xf32>)
// CHECK: ^bb0(%[[A:.+]]: f16, %[[M:.+]]: f16, %[[ACC:.+]]: f32):
// CHECK: %[[AW:.+]] = arith.extf %[[A]] : f16 to f32
// CHECK: %[[MW:.+]] = arith.extf %[[M]] : f16 to f32
// CHECK: %[[D:.+]] = arith.subf %[[AW]], %[[MW]] : f32
// CHECK: %[[E:.+]] = math.exp %[[D]] : f32
// CHECK: arith.addf %[[ACC]], %[[E]] : f32
// CHECK: linalg.generic
// CHECK-SAME: ins(%[[X]], %[[MAX]], %[[SUM]] : tensor<2x5xf16>, tensor<2xf16>, tensor<2xf32>) outs(%{{.+}} : tensor<2x5xf16>)
// CHECK: ^bb0(%{{.+}}: f16, %{{.+}}: f16, %[[S:.+]]: f32, %{{.+}}: f16):
// CHECK: %[[L:.+]] = math.log %[[S]] : f32
// CHECK: %[[SH:.+]] = arith.subf %{{.+}}, %{{.+}} : f32
// CHECK: %[[R:.+]] = arith.subf %[[SH]], %[[L]] : f32
// CHECK: arith.truncf %[[R]] : f32 to f16
func.func @log_softmax_f16(%x: tensor<2x5xf16>) -> tensor<2x5xf16> {
  %y = kiln.log_softmax %x {axis = 1 : i64} : (tensor<2x5xf16>) -> tensor<2x5xf16>
  return %y : tensor<2x5xf16>
}

// -----

// Batch norm: scale * rsqrt(var + eps) once per channel, then one pass.
// CHECK-DAG: #[[$C:.+]] = affine_map<(d0, d1, d2, d3) -> (d1)>
// CHECK-DAG: #[[$ID:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @batch_norm
// CHECK-SAME: (%[[X:.+]]: tensor<1x4x2x2xf32>, %[[S:.+]]: tensor<4xf32>, %[[B:.+]]: tensor<4xf32>, %[[M:.+]]: tensor<4xf32>, %[[V:.+]]: tensor<4xf32>)
// CHECK: %[[F:.+]] = linalg.generic
// CHECK-SAME: ins(%[[S]], %[[V]] : tensor<4xf32>, tensor<4xf32>) outs(%{{.+}} : tensor<4xf32>)
// CHECK: ^bb0(%[[SC:.+]]: f32, %[[VA:.+]]: f32, %{{.+}}: f32):
// CHECK: %[[EPS:.+]] = arith.constant 9.99999974E-6 : f32
// CHECK: %[[VE:.+]] = arith.addf %[[VA]], %[[EPS]] : f32
// CHECK: %[[RS:.+]] = math.rsqrt %[[VE]] : f32
// CHECK: arith.mulf %[[SC]], %[[RS]] : f32
// CHECK: linalg.generic {indexing_maps = [#[[$ID]], #[[$C]], #[[$C]], #[[$C]], #[[$ID]]]
// CHECK-SAME: ins(%[[X]], %[[M]], %[[F]], %[[B]] : tensor<1x4x2x2xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
// CHECK: ^bb0(%[[XE:.+]]: f32, %[[ME:.+]]: f32, %[[FE:.+]]: f32, %[[BE:.+]]: f32, %{{.+}}: f32):
// CHECK: %[[C0:.+]] = arith.subf %[[XE]], %[[ME]] : f32
// CHECK: %[[C1:.+]] = arith.mulf %[[C0]], %[[FE]] : f32
// CHECK: arith.addf %[[C1]], %[[BE]] : f32
func.func @batch_norm(%x: tensor<1x4x2x2xf32>, %s: tensor<4xf32>, %b: tensor<4xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>) -> tensor<1x4x2x2xf32> {
  %y = kiln.batch_norm %x, %s, %b, %m, %v {epsilon = 1.0e-05 : f64} : (tensor<1x4x2x2xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x2x2xf32>
  return %y : tensor<1x4x2x2xf32>
}

// -----

// Parameters in another float type than the input (BatchNormalization-15).
// CHECK-LABEL: func.func @batch_norm_mixed_types
// CHECK: ^bb0(%[[SC:.+]]: f32, %[[VA:.+]]: f32, %{{.+}}: f32):
// CHECK: linalg.generic
// CHECK: ^bb0(%[[XE:.+]]: f16, %[[ME:.+]]: f32, %{{.+}}: f32, %{{.+}}: f32, %{{.+}}: f16):
// CHECK: %[[XW:.+]] = arith.extf %[[XE]] : f16 to f32
// CHECK: arith.subf %[[XW]], %[[ME]] : f32
// CHECK: arith.truncf %{{.+}} : f32 to f16
func.func @batch_norm_mixed_types(%x: tensor<2x3xf16>, %p: tensor<3xf32>) -> tensor<2x3xf16> {
  %y = kiln.batch_norm %x, %p, %p, %p, %p : (tensor<2x3xf16>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3xf16>
  return %y : tensor<2x3xf16>
}

// -----

// Layer norm over the last dims: mean, variance (two passes), then
// (x - mean) * rstd * scale + bias with scale/bias broadcast to [3, 8].
// CHECK-DAG: #[[$ID:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[$OUTER:.+]] = affine_map<(d0, d1, d2) -> (d0)>
// CHECK-DAG: #[[$LAST:.+]] = affine_map<(d0, d1, d2) -> (d2)>
// CHECK-DAG: #[[$NORM:.+]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-LABEL: func.func @layer_norm
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x8xf32>, %[[G:.+]]: tensor<3x8xf32>, %[[B:.+]]: tensor<8xf32>)
// CHECK: %[[SUM:.+]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$OUTER]]], iterator_types = ["parallel", "reduction", "reduction"]}
// CHECK-SAME: ins(%[[X]] : tensor<2x3x8xf32>) outs(%{{.+}} : tensor<2xf32>)
// CHECK: %[[MEAN:.+]] = linalg.generic
// CHECK-SAME: ins(%[[SUM]] : tensor<2xf32>)
// CHECK: %[[N:.+]] = arith.constant 2.400000e+01 : f32
// CHECK: arith.divf %{{.+}}, %[[N]] : f32
// CHECK: %[[SQ:.+]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$OUTER]], #[[$OUTER]]], iterator_types = ["parallel", "reduction", "reduction"]}
// CHECK-SAME: ins(%[[X]], %[[MEAN]] : tensor<2x3x8xf32>, tensor<2xf32>)
// CHECK: %[[D:.+]] = arith.subf
// CHECK: %[[D2:.+]] = arith.mulf %[[D]], %[[D]] : f32
// CHECK: arith.addf %{{.+}}, %[[D2]] : f32
// CHECK: %[[RSTD:.+]] = linalg.generic
// CHECK-SAME: ins(%[[SQ]] : tensor<2xf32>)
// CHECK-DAG: %[[EPS:.+]] = arith.constant 9.99999974E-6 : f32
// CHECK-DAG: %[[N2:.+]] = arith.constant 2.400000e+01 : f32
// CHECK: %[[VAR:.+]] = arith.divf %{{.+}}, %[[N2]] : f32
// CHECK: %[[VE:.+]] = arith.addf %[[VAR]], %[[EPS]] : f32
// CHECK: math.rsqrt %[[VE]] : f32
// CHECK: linalg.generic {indexing_maps = [#[[$ID]], #[[$OUTER]], #[[$OUTER]], #[[$NORM]], #[[$LAST]], #[[$ID]]]
// CHECK-SAME: ins(%[[X]], %[[MEAN]], %[[RSTD]], %[[G]], %[[B]] : tensor<2x3x8xf32>, tensor<2xf32>, tensor<2xf32>, tensor<3x8xf32>, tensor<8xf32>)
// CHECK: ^bb0(%[[XE:.+]]: f32, %[[ME:.+]]: f32, %[[RE:.+]]: f32, %[[GE:.+]]: f32, %[[BE:.+]]: f32, %{{.+}}: f32):
// CHECK: %[[C:.+]] = arith.subf %[[XE]], %[[ME]] : f32
// CHECK: %[[NRM:.+]] = arith.mulf %[[C]], %[[RE]] : f32
// CHECK: %[[SC:.+]] = arith.mulf %[[NRM]], %[[GE]] : f32
// CHECK: arith.addf %[[SC]], %[[BE]] : f32
func.func @layer_norm(%x: tensor<2x3x8xf32>, %g: tensor<3x8xf32>, %b: tensor<8xf32>) -> tensor<2x3x8xf32> {
  %y = kiln.layer_norm %x, %g, %b {axis = 1 : i64, epsilon = 1.0e-05 : f64} : (tensor<2x3x8xf32>, tensor<3x8xf32>, tensor<8xf32>) -> tensor<2x3x8xf32>
  return %y : tensor<2x3x8xf32>
}

// -----

// Layer norm over a run-time extent: mean and variance divide by the
// extent read at run time.
// CHECK-LABEL: func.func @layer_norm_run_time
// CHECK-SAME: (%[[X:.+]]: tensor<3x?xf32>
// CHECK: %[[T:.+]] = tensor.dim %[[X]], %{{.+}} : tensor<3x?xf32>
// CHECK: %[[I:.+]] = arith.index_cast %[[T]] : index to i64
// CHECK: %[[N:.+]] = arith.sitofp %[[I]] : i64 to f32
// CHECK: arith.divf %{{.+}}, %[[N]] : f32
// CHECK: arith.divf %{{.+}}, %[[N]] : f32
// CHECK: math.rsqrt
func.func @layer_norm_run_time(%x: tensor<3x?xf32>, %g: tensor<?xf32>, %b: tensor<?xf32>) -> tensor<3x?xf32> {
  %y = kiln.layer_norm %x, %g, %b {axis = 1 : i64, epsilon = 1.0e-05 : f64} : (tensor<3x?xf32>, tensor<?xf32>, tensor<?xf32>) -> tensor<3x?xf32>
  return %y : tensor<3x?xf32>
}

// -----

// No bias; a scale with a unit dim (normalizing over [128, 768]) is collapsed
// like any broadcast operand.
// CHECK-DAG: #[[$LAST:.+]] = affine_map<(d0, d1, d2) -> (d2)>
// CHECK-LABEL: func.func @layer_norm_no_bias
// CHECK-SAME: (%{{.+}}: tensor<1x128x768xf32>, %[[G:.+]]: tensor<1x768xf32>)
// CHECK: %[[CG:.+]] = tensor.collapse_shape %[[G]] {{\[}}[0, 1]] : tensor<1x768xf32> into tensor<768xf32>
// CHECK: linalg.generic {indexing_maps = [#{{.+}}, #{{.+}}, #{{.+}}, #[[$LAST]], #{{.+}}]
// CHECK-SAME: ins(%{{.+}}, %{{.+}}, %{{.+}}, %[[CG]] : tensor<1x128x768xf32>, tensor<1xf32>, tensor<1xf32>, tensor<768xf32>)
// CHECK: %[[N:.+]] = arith.mulf
// CHECK: %[[R:.+]] = arith.mulf %[[N]], %{{.+}} : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
func.func @layer_norm_no_bias(%x: tensor<1x128x768xf32>, %g: tensor<1x768xf32>) -> tensor<1x128x768xf32> {
  %y = kiln.layer_norm %x, %g {axis = 1 : i64} : (tensor<1x128x768xf32>, tensor<1x768xf32>) -> tensor<1x128x768xf32>
  return %y : tensor<1x128x768xf32>
}
