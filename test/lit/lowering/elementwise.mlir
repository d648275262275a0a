// RUN: kiln-opt %s -kiln-lower-to-linalg -split-input-file | FileCheck %s

// Same shapes: identity maps, one all-parallel generic.
// CHECK-DAG: #[[$ID:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @add_same_shape
// CHECK-SAME: (%[[A:.+]]: tensor<2x3xf32>, %[[B:.+]]: tensor<2x3xf32>)
// CHECK: %[[E:.+]] = tensor.empty() : tensor<2x3xf32>
// CHECK: %[[R:.+]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$ID]], #[[$ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: ins(%[[A]], %[[B]] : tensor<2x3xf32>, tensor<2x3xf32>) outs(%[[E]] : tensor<2x3xf32>)
// CHECK: ^bb0(%[[X:.+]]: f32, %[[Y:.+]]: f32, %{{.+}}: f32):
// CHECK: %[[S:.+]] = arith.addf %[[X]], %[[Y]] : f32
// CHECK: linalg.yield %[[S]] : f32
// CHECK: return %[[R]]
// CHECK-NOT: kiln.
func.func @add_same_shape(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = kiln.add %a, %b : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Rank broadcast: the missing leading dim is simply not in the map.
// CHECK-DAG: #[[$ID:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$LAST:.+]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @sub_rank_broadcast
// CHECK: linalg.generic {indexing_maps = [#[[$ID]], #[[$LAST]], #[[$ID]]]
// CHECK-SAME: ins(%{{.+}}, %{{.+}} : tensor<2x3xf32>, tensor<3xf32>)
// CHECK: arith.subf
func.func @sub_rank_broadcast(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  %0 = kiln.sub %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Unit-dim broadcast on both sides: unit dims are collapsed away so the maps
// stay projected permutations.
// CHECK-DAG: #[[$ID:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[$D02:.+]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[$D1:.+]] = affine_map<(d0, d1, d2) -> (d1)>
// CHECK-LABEL: func.func @mul_two_sided_broadcast
// CHECK-SAME: (%[[A:.+]]: tensor<4x1x3xf32>, %[[B:.+]]: tensor<5x1xf32>)
// CHECK-DAG: %[[CA:.+]] = tensor.collapse_shape %[[A]] {{\[}}[0], [1, 2]] : tensor<4x1x3xf32> into tensor<4x3xf32>
// CHECK-DAG: %[[CB:.+]] = tensor.collapse_shape %[[B]] {{\[}}[0, 1]] : tensor<5x1xf32> into tensor<5xf32>
// CHECK: linalg.generic {indexing_maps = [#[[$D02]], #[[$D1]], #[[$ID]]]
// CHECK-SAME: ins(%[[CA]], %[[CB]] : tensor<4x3xf32>, tensor<5xf32>) outs(%{{.+}} : tensor<4x5x3xf32>)
// CHECK: arith.mulf
func.func @mul_two_sided_broadcast(%a: tensor<4x1x3xf32>, %b: tensor<5x1xf32>) -> tensor<4x5x3xf32> {
  %0 = kiln.mul %a, %b : (tensor<4x1x3xf32>, tensor<5x1xf32>) -> tensor<4x5x3xf32>
  return %0 : tensor<4x5x3xf32>
}

// -----

// A scalar-like operand ([1, 1]) collapses to rank 0 and reads with an empty map.
// CHECK-DAG: #[[$SCALAR:.+]] = affine_map<(d0, d1) -> ()>
// CHECK-LABEL: func.func @add_scalar_like
// CHECK: %[[C:.+]] = tensor.collapse_shape %{{.+}} [] : tensor<1x1xi32> into tensor<i32>
// CHECK: linalg.generic {indexing_maps = [#{{.+}}, #[[$SCALAR]], #{{.+}}]
// CHECK-SAME: ins(%{{.+}}, %[[C]] : tensor<4x4xi32>, tensor<i32>)
// CHECK: arith.addi
func.func @add_scalar_like(%a: tensor<4x4xi32>, %b: tensor<1x1xi32>) -> tensor<4x4xi32> {
  %0 = kiln.add %a, %b : (tensor<4x4xi32>, tensor<1x1xi32>) -> tensor<4x4xi32>
  return %0 : tensor<4x4xi32>
}

// -----

// Rank-0 operands: a generic with no loops.
// CHECK-LABEL: func.func @add_rank0
// CHECK: linalg.generic {indexing_maps = [#{{.+}}, #{{.+}}, #{{.+}}], iterator_types = []}
// CHECK-SAME: outs(%{{.+}} : tensor<f32>)
// CHECK: arith.addf
func.func @add_rank0(%a: tensor<f32>, %b: tensor<f32>) -> tensor<f32> {
  %0 = kiln.add %a, %b : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// Division picks float, signed or unsigned arith.
// CHECK-LABEL: func.func @div_float
// CHECK: arith.divf
func.func @div_float(%a: tensor<4xf16>, %b: tensor<4xf16>) -> tensor<4xf16> {
  %0 = kiln.div %a, %b : (tensor<4xf16>, tensor<4xf16>) -> tensor<4xf16>
  return %0 : tensor<4xf16>
}
// CHECK-LABEL: func.func @div_signed
// CHECK: arith.divsi
func.func @div_signed(%a: tensor<4xi32>, %b: tensor<4xi32>) -> tensor<4xi32> {
  %0 = kiln.div %a, %b : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}
// uiN becomes iN in the signature; the op stays unsigned.
// CHECK-LABEL: func.func @div_unsigned
// CHECK-SAME: (%{{.+}}: tensor<2x1xi8>, %{{.+}}: tensor<1x3xi8>) -> tensor<2x3xi8>
// CHECK: outs(%{{.+}} : tensor<2x3xi8>)
// CHECK: arith.divui %{{.+}}, %{{.+}} : i8
// CHECK: return %{{.+}} : tensor<2x3xi8>
func.func @div_unsigned(%a: tensor<2x1xui8>, %b: tensor<1x3xui8>) -> tensor<2x3xui8> {
  %0 = kiln.div %a, %b : (tensor<2x1xui8>, tensor<1x3xui8>) -> tensor<2x3xui8>
  return %0 : tensor<2x3xui8>
}

// -----

// CHECK-LABEL: func.func @max_min
// CHECK: arith.maximumf
// CHECK: arith.minimumf
// CHECK: arith.maxsi
// CHECK: arith.minsi
// CHECK: arith.maxui
// CHECK: arith.minui
func.func @max_min(%f: tensor<4xf32>, %i: tensor<4xi64>, %u: tensor<4xui16>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xi64>, tensor<4xi64>, tensor<4xui16>, tensor<4xui16>) {
  %0 = kiln.max %f, %f : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = kiln.min %f, %f : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %2 = kiln.max %i, %i : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  %3 = kiln.min %i, %i : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  %4 = kiln.max %u, %u : (tensor<4xui16>, tensor<4xui16>) -> tensor<4xui16>
  %5 = kiln.min %u, %u : (tensor<4xui16>, tensor<4xui16>) -> tensor<4xui16>
  return %0, %1, %2, %3, %4, %5 : tensor<4xf32>, tensor<4xf32>, tensor<4xi64>, tensor<4xi64>, tensor<4xui16>, tensor<4xui16>
}

// -----

// Comparisons produce i1; floats use ordered predicates (NaN compares false).
// CHECK-LABEL: func.func @compare_float
// CHECK: outs(%{{.+}} : tensor<2x3xi1>)
// CHECK: ^bb0(%{{.+}}: f32, %{{.+}}: f32, %{{.+}}: i1):
// CHECK: arith.cmpf oeq
// CHECK: arith.cmpf olt
// CHECK: arith.cmpf ogt
func.func @compare_float(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> (tensor<2x3xi1>, tensor<2x3xi1>, tensor<2x3xi1>) {
  %0 = kiln.equal %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %1 = kiln.less %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %2 = kiln.greater %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  return %0, %1, %2 : tensor<2x3xi1>, tensor<2x3xi1>, tensor<2x3xi1>
}
// CHECK-LABEL: func.func @compare_int
// CHECK: arith.cmpi eq
// CHECK: arith.cmpi slt
// CHECK: arith.cmpi sgt
// CHECK: arith.cmpi ult
// CHECK: arith.cmpi ugt
func.func @compare_int(%a: tensor<4xi32>, %u: tensor<4xui32>) -> (tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>) {
  %0 = kiln.equal %a, %a : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
  %1 = kiln.less %a, %a : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
  %2 = kiln.greater %a, %a : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
  %3 = kiln.less %u, %u : (tensor<4xui32>, tensor<4xui32>) -> tensor<4xi1>
  %4 = kiln.greater %u, %u : (tensor<4xui32>, tensor<4xui32>) -> tensor<4xi1>
  return %0, %1, %2, %3, %4 : tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>
}

// -----

// Pow: powf for floats (integer exponents converted), ipowi for integers.
// CHECK-LABEL: func.func @pow_float
// CHECK: math.powf %{{.+}}, %{{.+}} : f32
func.func @pow_float(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = kiln.pow %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
// CHECK-LABEL: func.func @pow_float_int_exponent
// CHECK: ^bb0(%[[X:.+]]: f32, %[[E:.+]]: i64, %{{.+}}: f32):
// CHECK: %[[F:.+]] = arith.sitofp %[[E]] : i64 to f32
// CHECK: math.powf %[[X]], %[[F]] : f32
func.func @pow_float_int_exponent(%a: tensor<4xf32>, %b: tensor<4xi64>) -> tensor<4xf32> {
  %0 = kiln.pow %a, %b : (tensor<4xf32>, tensor<4xi64>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
// CHECK-LABEL: func.func @pow_int
// CHECK: ^bb0(%[[X:.+]]: i32, %[[E:.+]]: i64, %{{.+}}: i32):
// CHECK: %[[T:.+]] = arith.trunci %[[E]] : i64 to i32
// CHECK: math.ipowi %[[X]], %[[T]] : i32
func.func @pow_int(%a: tensor<4xi32>, %b: tensor<4xi64>) -> tensor<4xi32> {
  %0 = kiln.pow %a, %b : (tensor<4xi32>, tensor<4xi64>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}
// CHECK-LABEL: func.func @pow_int_float_exponent
// CHECK: ^bb0(%[[X:.+]]: i32, %[[E:.+]]: f32, %{{.+}}: i32):
// CHECK: %[[F:.+]] = arith.sitofp %[[X]] : i32 to f32
// CHECK: %[[P:.+]] = math.powf %[[F]], %[[E]] : f32
// CHECK: arith.fptosi %[[P]] : f32 to i32
func.func @pow_int_float_exponent(%a: tensor<4xi32>, %b: tensor<4xf32>) -> tensor<4xi32> {
  %0 = kiln.pow %a, %b : (tensor<4xi32>, tensor<4xf32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// CHECK-LABEL: func.func @unary_math
// CHECK: math.sqrt
// CHECK: math.exp
// CHECK: math.log
// CHECK: math.tanh
// CHECK: math.erf
// CHECK: arith.negf
// CHECK: math.absf
func.func @unary_math(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %0 = kiln.sqrt %x : (tensor<8xf32>) -> tensor<8xf32>
  %1 = kiln.exp %x : (tensor<8xf32>) -> tensor<8xf32>
  %2 = kiln.log %x : (tensor<8xf32>) -> tensor<8xf32>
  %3 = kiln.tanh %x : (tensor<8xf32>) -> tensor<8xf32>
  %4 = kiln.erf %x : (tensor<8xf32>) -> tensor<8xf32>
  %5 = kiln.neg %x : (tensor<8xf32>) -> tensor<8xf32>
  %6 = kiln.abs %x : (tensor<8xf32>) -> tensor<8xf32>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}

// CHECK-LABEL: func.func @reciprocal_sigmoid
// CHECK: %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// CHECK: arith.divf %[[ONE]], %{{.+}} : f32
// CHECK: ^bb0(%[[X:.+]]: f32, %{{.+}}: f32):
// CHECK: %[[ONE2:.+]] = arith.constant 1.000000e+00 : f32
// CHECK: %[[N:.+]] = arith.negf %[[X]] : f32
// CHECK: %[[E:.+]] = math.exp %[[N]] : f32
// CHECK: %[[D:.+]] = arith.addf %[[ONE2]], %[[E]] : f32
// CHECK: arith.divf %[[ONE2]], %[[D]] : f32
func.func @reciprocal_sigmoid(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %0 = kiln.reciprocal %x : (tensor<8xf32>) -> tensor<8xf32>
  %1 = kiln.sigmoid %x : (tensor<8xf32>) -> tensor<8xf32>
  return %0, %1 : tensor<8xf32>, tensor<8xf32>
}

// Integer neg/abs/relu; abs of an unsigned value is the value.
// CHECK-LABEL: func.func @unary_int
// CHECK: ^bb0(%[[X:.+]]: i32, %{{.+}}: i32):
// CHECK: %[[Z:.+]] = arith.constant 0 : i32
// CHECK: arith.subi %[[Z]], %[[X]] : i32
// CHECK: math.absi %{{.+}} : i32
// CHECK: ^bb0(%[[U:.+]]: i8, %{{.+}}: i8):
// CHECK-NEXT: linalg.yield %[[U]] : i8
// CHECK: arith.maxsi %{{.+}}, %{{.+}} : i32
func.func @unary_int(%i: tensor<4xi32>, %u: tensor<4xui8>) -> (tensor<4xi32>, tensor<4xi32>, tensor<4xui8>, tensor<4xi32>) {
  %0 = kiln.neg %i : (tensor<4xi32>) -> tensor<4xi32>
  %1 = kiln.abs %i : (tensor<4xi32>) -> tensor<4xi32>
  %2 = kiln.abs %u : (tensor<4xui8>) -> tensor<4xui8>
  %3 = kiln.relu %i : (tensor<4xi32>) -> tensor<4xi32>
  return %0, %1, %2, %3 : tensor<4xi32>, tensor<4xi32>, tensor<4xui8>, tensor<4xi32>
}

// -----

// CHECK-LABEL: func.func @relu_leaky_relu
// CHECK: ^bb0(%[[X:.+]]: f32, %{{.+}}: f32):
// CHECK: %[[Z:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: arith.maximumf %[[X]], %[[Z]] : f32
// CHECK: ^bb0(%[[Y:.+]]: f32, %{{.+}}: f32):
// CHECK-DAG: %[[Z2:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[ALPHA:.+]] = arith.constant 2.000000e-01 : f32
// CHECK: %[[NEG:.+]] = arith.cmpf olt, %[[Y]], %[[Z2]] : f32
// CHECK: %[[SCALED:.+]] = arith.mulf %[[ALPHA]], %[[Y]] : f32
// CHECK: arith.select %[[NEG]], %[[SCALED]], %[[Y]] : f32
func.func @relu_leaky_relu(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %0 = kiln.relu %x : (tensor<8xf32>) -> tensor<8xf32>
  %1 = kiln.leaky_relu %x {alpha = 0.2 : f64} : (tensor<8xf32>) -> tensor<8xf32>
  return %0, %1 : tensor<8xf32>, tensor<8xf32>
}

// -----

// GELU, exact: 0.5 * x * (1 + erf(x / sqrt(2))).
// CHECK-LABEL: func.func @gelu_exact
// CHECK: ^bb0(%[[X:.+]]: f32, %{{.+}}: f32):
// CHECK-DAG: %[[HALF:.+]] = arith.constant 5.000000e-01 : f32
// CHECK-DAG: %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG: %[[RSQRT2:.+]] = arith.constant 0.707106769 : f32
// CHECK: %[[S:.+]] = arith.mulf %[[X]], %[[RSQRT2]] : f32
// CHECK: %[[E:.+]] = math.erf %[[S]] : f32
// CHECK: %[[P:.+]] = arith.addf %[[ONE]], %[[E]] : f32
// CHECK: %[[C:.+]] = arith.mulf %[[HALF]], %[[P]] : f32
// CHECK: arith.mulf %[[X]], %[[C]] : f32
func.func @gelu_exact(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = kiln.gelu %x : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// GELU, tanh form: 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3))).
// CHECK-LABEL: func.func @gelu_tanh
// CHECK: ^bb0(%[[IN:.+]]: bf16, %{{.+}}: bf16):
// CHECK: %[[X:.+]] = arith.extf %[[IN]] : bf16 to f32
// CHECK-DAG: %[[C:.+]] = arith.constant 4.471500e-02 : f32
// CHECK-DAG: %[[K:.+]] = arith.constant 0.797884583 : f32
// CHECK: %[[X2:.+]] = arith.mulf %[[X]], %[[X]] : f32
// CHECK: %[[X3:.+]] = arith.mulf %[[X]], %[[X2]] : f32
// CHECK: %[[CX3:.+]] = arith.mulf %[[C]], %[[X3]] : f32
// CHECK: %[[POLY:.+]] = arith.addf %[[X]], %[[CX3]] : f32
// CHECK: %[[ARG:.+]] = arith.mulf %[[K]], %[[POLY]] : f32
// CHECK: math.tanh %[[ARG]] : f32
// CHECK-NOT: math.erf
// CHECK: %[[R:.+]] = arith.mulf %[[X]], %{{.+}} : f32
// CHECK: %[[T:.+]] = arith.truncf %[[R]] : f32 to bf16
// CHECK: linalg.yield %[[T]] : bf16
func.func @gelu_tanh(%x: tensor<8xbf16>) -> tensor<8xbf16> {
  %0 = kiln.gelu %x {tanh_approximation = true} : (tensor<8xbf16>) -> tensor<8xbf16>
  return %0 : tensor<8xbf16>
}

// -----

// Clip: max with the lower bound, then min with the upper one.
// CHECK-LABEL: func.func @clip_float
// CHECK: ^bb0(%[[X:.+]]: f32, %{{.+}}: f32):
// CHECK: %[[LO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[A:.+]] = arith.maximumf %[[X]], %[[LO]] : f32
// CHECK: %[[HI:.+]] = arith.constant 6.000000e+00 : f32
// CHECK: %[[B:.+]] = arith.minimumf %[[A]], %[[HI]] : f32
// CHECK: linalg.yield %[[B]] : f32
func.func @clip_float(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = kiln.clip %x {min = 0.0 : f64, max = 6.0 : f64} : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// Only one bound.
// CHECK-LABEL: func.func @clip_max_only
// CHECK-NOT: arith.maximumf
// CHECK: arith.minimumf
func.func @clip_max_only(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = kiln.clip %x {max = 1.0 : f64} : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// Integer bounds round inward: [-2.5, 5.5] clips to [-2, 5].
// CHECK-LABEL: func.func @clip_signed
// CHECK: %[[LO:.+]] = arith.constant -2 : i8
// CHECK: arith.maxsi %{{.+}}, %[[LO]] : i8
// CHECK: %[[HI:.+]] = arith.constant 5 : i8
// CHECK: arith.minsi %{{.+}}, %[[HI]] : i8
func.func @clip_signed(%x: tensor<8xi8>) -> tensor<8xi8> {
  %0 = kiln.clip %x {min = -2.5 : f64, max = 5.5 : f64} : (tensor<8xi8>) -> tensor<8xi8>
  return %0 : tensor<8xi8>
}

// Unsigned bounds saturate to the type's range: [-5, 300] is [0, 255].
// CHECK-LABEL: func.func @clip_unsigned
// CHECK-SAME: tensor<8xi8>
// CHECK: %[[LO:.+]] = arith.constant 0 : i8
// CHECK: arith.maxui %{{.+}}, %[[LO]] : i8
// CHECK: %[[HI:.+]] = arith.constant -1 : i8
// CHECK: arith.minui %{{.+}}, %[[HI]] : i8
func.func @clip_unsigned(%x: tensor<8xui8>) -> tensor<8xui8> {
  %0 = kiln.clip %x {min = -5.0 : f64, max = 300.0 : f64} : (tensor<8xui8>) -> tensor<8xui8>
  return %0 : tensor<8xui8>
}

// -----

// Casts. Float to int truncates toward zero (fptosi/fptoui).
// CHECK-LABEL: func.func @cast_float_to_int
// CHECK: arith.fptosi %{{.+}} : f32 to i32
// CHECK: arith.fptoui %{{.+}} : f32 to i8
// CHECK: return %{{.+}}, %{{.+}} : tensor<4xi32>, tensor<4xi8>
func.func @cast_float_to_int(%x: tensor<4xf32>) -> (tensor<4xi32>, tensor<4xui8>) {
  %0 = kiln.cast %x {to = i32} : (tensor<4xf32>) -> tensor<4xi32>
  %1 = kiln.cast %x {to = ui8} : (tensor<4xf32>) -> tensor<4xui8>
  return %0, %1 : tensor<4xi32>, tensor<4xui8>
}

// Anything to bool is x != 0 (NaN is true).
// CHECK-LABEL: func.func @cast_to_bool
// CHECK: ^bb0(%[[F:.+]]: f32, %{{.+}}: i1):
// CHECK: %[[FZ:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: arith.cmpf une, %[[F]], %[[FZ]] : f32
// CHECK: ^bb0(%[[I:.+]]: i64, %{{.+}}: i1):
// CHECK: %[[IZ:.+]] = arith.constant 0 : i64
// CHECK: arith.cmpi ne, %[[I]], %[[IZ]] : i64
func.func @cast_to_bool(%x: tensor<4xf32>, %y: tensor<4xi64>) -> (tensor<4xi1>, tensor<4xi1>) {
  %0 = kiln.cast %x {to = i1} : (tensor<4xf32>) -> tensor<4xi1>
  %1 = kiln.cast %y {to = i1} : (tensor<4xi64>) -> tensor<4xi1>
  return %0, %1 : tensor<4xi1>, tensor<4xi1>
}

// Bool is 0/1: zero-extended, converted as unsigned.
// CHECK-LABEL: func.func @cast_from_bool
// CHECK: arith.extui %{{.+}} : i1 to i32
// CHECK: arith.uitofp %{{.+}} : i1 to f32
func.func @cast_from_bool(%b: tensor<4xi1>) -> (tensor<4xi32>, tensor<4xf32>) {
  %0 = kiln.cast %b {to = i32} : (tensor<4xi1>) -> tensor<4xi32>
  %1 = kiln.cast %b {to = f32} : (tensor<4xi1>) -> tensor<4xf32>
  return %0, %1 : tensor<4xi32>, tensor<4xf32>
}

// Integer widths: signed values sign-extend, unsigned ones zero-extend.
// CHECK-LABEL: func.func @cast_int_to_int
// CHECK: arith.extsi %{{.+}} : i8 to i32
// CHECK: arith.extui %{{.+}} : i8 to i32
// CHECK: arith.trunci %{{.+}} : i32 to i8
// CHECK: ^bb0(%[[U:.+]]: i8, %{{.+}}: i8):
// CHECK-NEXT: linalg.yield %[[U]] : i8
func.func @cast_int_to_int(%s: tensor<4xi8>, %u: tensor<4xui8>, %w: tensor<4xi32>) -> (tensor<4xi32>, tensor<4xi32>, tensor<4xui8>, tensor<4xi8>) {
  %0 = kiln.cast %s {to = i32} : (tensor<4xi8>) -> tensor<4xi32>
  %1 = kiln.cast %u {to = i32} : (tensor<4xui8>) -> tensor<4xi32>
  %2 = kiln.cast %w {to = ui8} : (tensor<4xi32>) -> tensor<4xui8>
  %3 = kiln.cast %u {to = i8} : (tensor<4xui8>) -> tensor<4xi8>
  return %0, %1, %2, %3 : tensor<4xi32>, tensor<4xi32>, tensor<4xui8>, tensor<4xi8>
}

// CHECK-LABEL: func.func @cast_int_to_float
// CHECK: arith.sitofp %{{.+}} : i64 to f32
// CHECK: arith.uitofp %{{.+}} : i16 to f16
func.func @cast_int_to_float(%s: tensor<4xi64>, %u: tensor<4xui16>) -> (tensor<4xf32>, tensor<4xf16>) {
  %0 = kiln.cast %s {to = f32} : (tensor<4xi64>) -> tensor<4xf32>
  %1 = kiln.cast %u {to = f16} : (tensor<4xui16>) -> tensor<4xf16>
  return %0, %1 : tensor<4xf32>, tensor<4xf16>
}

// f16 <-> bf16 goes through f32.
// CHECK-LABEL: func.func @cast_float_to_float
// CHECK: arith.extf %{{.+}} : f16 to f32
// CHECK: arith.truncf %{{.+}} : f64 to f32
// CHECK: %[[W:.+]] = arith.extf %{{.+}} : f16 to f32
// CHECK: arith.truncf %[[W]] : f32 to bf16
func.func @cast_float_to_float(%h: tensor<4xf16>, %d: tensor<4xf64>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xbf16>) {
  %0 = kiln.cast %h {to = f32} : (tensor<4xf16>) -> tensor<4xf32>
  %1 = kiln.cast %d {to = f32} : (tensor<4xf64>) -> tensor<4xf32>
  %2 = kiln.cast %h {to = bf16} : (tensor<4xf16>) -> tensor<4xbf16>
  return %0, %1, %2 : tensor<4xf32>, tensor<4xf32>, tensor<4xbf16>
}

// -----

// Where broadcasts all three operands.
// CHECK-DAG: #[[$ID:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$SCALAR:.+]] = affine_map<(d0, d1) -> ()>
// CHECK-DAG: #[[$ROW:.+]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @where
// CHECK: linalg.generic {indexing_maps = [#[[$ID]], #[[$SCALAR]], #[[$ROW]], #[[$ID]]]
// CHECK-SAME: ins(%{{.+}}, %{{.+}}, %{{.+}} : tensor<4x4xi1>, tensor<f32>, tensor<4xf32>)
// CHECK: ^bb0(%[[C:.+]]: i1, %[[X:.+]]: f32, %[[Y:.+]]: f32, %{{.+}}: f32):
// CHECK: arith.select %[[C]], %[[X]], %[[Y]] : f32
func.func @where(%c: tensor<4x4xi1>, %x: tensor<f32>, %y: tensor<4xf32>) -> tensor<4x4xf32> {
  %0 = kiln.where %c, %x, %y : (tensor<4x4xi1>, tensor<f32>, tensor<4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

// f16 transcendentals compute in f32.
// CHECK-LABEL: func.func @exp_f16
// CHECK: ^bb0(%[[X:.+]]: f16, %{{.+}}: f16):
// CHECK: %[[W:.+]] = arith.extf %[[X]] : f16 to f32
// CHECK: %[[E:.+]] = math.exp %[[W]] : f32
// CHECK: %[[N:.+]] = arith.truncf %[[E]] : f32 to f16
// CHECK: linalg.yield %[[N]] : f16
func.func @exp_f16(%x: tensor<8xf16>) -> tensor<8xf16> {
  %0 = kiln.exp %x : (tensor<8xf16>) -> tensor<8xf16>
  return %0 : tensor<8xf16>
}
