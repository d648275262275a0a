// RUN: kiln-opt %s -kiln-expand-f16-conversions | FileCheck %s
// RUN: kiln-opt %s -kiln-expand-f16-conversions=soft=false | FileCheck %s --check-prefix=F16C

// CHECK-LABEL: func.func @extend(
// CHECK-NOT:     arith.extf %{{.+}} : f16
// CHECK:         %[[BITS:.+]] = arith.bitcast %{{.+}} : f16 to i16
// CHECK:         arith.extui %[[BITS]] : i16 to i32
// CHECK:         arith.sitofp
// CHECK:         arith.select
// CHECK:         arith.bitcast %{{.+}} : i32 to f32
// CHECK:         arith.bitcast %{{.+}} : f16 to i16
// CHECK:         %[[F:.+]] = arith.bitcast %{{.+}} : i32 to f32
// CHECK-NEXT:    %[[D:.+]] = arith.extf %[[F]] : f32 to f64
// CHECK:         return %{{.+}}, %[[D]]
// F16C-LABEL: func.func @extend(
// F16C:         arith.extf %{{.+}} : f16 to f32
// F16C:         arith.extf %{{.+}} : f16 to f64
func.func @extend(%h: f16, %g: f16) -> (f32, f64) {
  %0 = arith.extf %h : f16 to f32
  %1 = arith.extf %g : f16 to f64
  return %0, %1 : f32, f64
}

// CHECK-LABEL: func.func @truncate(
// CHECK-SAME:    %[[X:.+]]: vector<4xf32>, %[[D:.+]]: f64)
// CHECK:         arith.bitcast %[[X]] : vector<4xf32> to vector<4xi32>
// CHECK:         arith.trunci %{{.+}} : vector<4xi32> to vector<4xi16>
// CHECK:         arith.bitcast %{{.+}} : vector<4xi16> to vector<4xf16>
// CHECK:         %[[S:.+]] = arith.truncf %[[D]] : f64 to f32
// CHECK:         %[[BACK:.+]] = arith.extf %[[S]] : f32 to f64
// CHECK:         arith.cmpf one, %[[BACK]], %[[D]] : f64
// CHECK:         arith.bitcast %{{.+}} : i16 to f16
// CHECK-NOT:     arith.truncf %{{.+}} to f16
// With F16C only f64 -> f16 changes: rounded to odd into f32, then the
// hardware's f32 -> f16; f16 -> f32 and f32 -> f16 stay.
// F16C-LABEL: func.func @truncate(
// F16C-SAME:    %[[X:.+]]: vector<4xf32>, %[[D:.+]]: f64)
// F16C:         %[[H:.+]] = arith.truncf %[[X]] : vector<4xf32> to vector<4xf16>
// F16C:         %[[S:.+]] = arith.truncf %[[D]] : f64 to f32
// F16C:         %[[BACK:.+]] = arith.extf %[[S]] : f32 to f64
// F16C:         %[[INEXACT:.+]] = arith.cmpf one, %[[BACK]], %[[D]] : f64
// F16C:         %[[BITS:.+]] = arith.bitcast %[[S]] : f32 to i32
// F16C:         %[[ODD:.+]] = arith.andi %[[INEXACT]], %{{.+}} : i1
// F16C:         %[[SEL:.+]] = arith.select %[[ODD]], %{{.+}}, %[[BITS]] : i32
// F16C:         %[[R:.+]] = arith.bitcast %[[SEL]] : i32 to f32
// F16C:         %[[HD:.+]] = arith.truncf %[[R]] : f32 to f16
// F16C:         return %[[H]], %[[HD]]
func.func @truncate(%x: vector<4xf32>, %d: f64) -> (vector<4xf16>, f16) {
  %0 = arith.truncf %x : vector<4xf32> to vector<4xf16>
  %1 = arith.truncf %d : f64 to f16
  return %0, %1 : vector<4xf16>, f16
}

// Other conversions are left to LLVM.
// CHECK-LABEL: func.func @untouched(
// CHECK:         arith.extf %{{.+}} : bf16 to f32
// CHECK:         arith.truncf %{{.+}} : f64 to f32
func.func @untouched(%b: bf16, %d: f64) -> (f32, f32) {
  %0 = arith.extf %b : bf16 to f32
  %1 = arith.truncf %d : f64 to f32
  return %0, %1 : f32, f32
}
