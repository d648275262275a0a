// RUN: env KILN_LOGS=lowering kiln-opt --mlir-disable-threading %s -kiln-report-kernels 2>&1 | FileCheck %s

// The IR is unchanged; the kernels are logged (and recorded for --report)
// with the ONNX nodes of their ops, in program order of their anchors.
// The zero fill joins the matmul it initializes; the bias add, used once by
// the relu, joins the relu's kernel (as elementwise fusion will merge them).
// CHECK: [kiln:lowering] 0:matmul <- fc
// CHECK-NEXT: [kiln:lowering] 1:generic <- fc_bias, fc_relu
// A producer with two users, and a reduction producer, anchor their own
// kernels; the reshape between them is a view, not a kernel.
// CHECK-NEXT: [kiln:lowering] 2:generic <- shared
// CHECK-NEXT: [kiln:lowering] 3:generic <- use_a
// CHECK-NEXT: [kiln:lowering] 4:generic <- use_b
// CHECK-NEXT: [kiln:lowering] 5:generic <- sum
// CHECK-NEXT: [kiln:lowering] 6:generic <- after_sum
// CHECK-NOT: [kiln:lowering]
// CHECK-LABEL: func.func @kernels
// CHECK: linalg.fill
// CHECK: linalg.matmul
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>
#id1 = affine_map<(d0) -> (d0)>
func.func @kernels(%x: tensor<4x5xf32>, %w: tensor<5x8xf32>, %b: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<2x2xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32> loc(fused<"MatMul">["fc"])
  %m = linalg.matmul ins(%x, %w : tensor<4x5xf32>, tensor<5x8xf32>) outs(%f : tensor<4x8xf32>) -> tensor<4x8xf32> loc(fused<"MatMul">["fc"])
  %add = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%m, %b : tensor<4x8xf32>, tensor<8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32> loc(fused<"Add">["fc_bias"])
  %relu = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%add : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.maximumf %a, %zero : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32> loc(fused<"Relu">["fc_relu"])
  %shared = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%relu : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.mulf %a, %a : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32> loc(fused<"Mul">["shared"])
  %ua = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%shared : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %a : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32> loc(fused<"Add">["use_a"])
  %ub = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%shared : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.subf %a, %a : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32> loc(fused<"Sub">["use_b"])
  %e4 = tensor.empty() : tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%ub : tensor<4x8xf32>) outs(%e4 : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  } -> tensor<4xf32> loc(fused<"ReduceSum">["sum"])
  %r = tensor.expand_shape %sum [[0, 1]] output_shape [2, 2] : tensor<4xf32> into tensor<2x2xf32>
  %e22 = tensor.empty() : tensor<2x2xf32>
  %after = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%r : tensor<2x2xf32>) outs(%e22 : tensor<2x2xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.negf %a : f32
    linalg.yield %s : f32
  } -> tensor<2x2xf32> loc(fused<"Neg">["after_sum"])
  return %relu, %ua, %ub, %after : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<2x2xf32>
}
