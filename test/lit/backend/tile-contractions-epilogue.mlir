// RUN: kiln-opt %s --kiln-tile-contractions --split-input-file | FileCheck %s
// RUN: env KILN_LOGS=+fusion kiln-opt %s --kiln-tile-contractions --split-input-file --mlir-disable-threading -o /dev/null 2>&1 | FileCheck %s --check-prefix=LOG
// RUN: kiln-opt %s --kiln-tile-contractions="fuse-epilogues=false" --split-input-file | FileCheck %s --check-prefix=OFF
// (LOG runs on one thread: the log lines of functions tiled in parallel
// can interleave mid-line.)

// Bias per column and ReLU on a matmul with two K blocks (300 = 256 + 44):
// one branch per register tile on the last K block; there the bias row is
// read (masked: 40 columns) and the body runs on the accumulators before the
// store; the other blocks store the partial sums. The generic is gone.
// CHECK-LABEL: func.func @matmul_bias_relu
// CHECK: scf.forall
// CHECK: scf.for %[[KB:.+]] = %{{.+}} to %{{.+}} step %c256
// CHECK: %[[ACCS:.+]]:8 = scf.for
// CHECK: vector.fma
// CHECK: %[[END:.+]] = arith.addi %[[KB]], %{{.+}} : index
// CHECK: %[[LAST:.+]] = arith.cmpi eq, %[[END]], %c300 : index
// CHECK: scf.if %[[LAST]] -> (tensor<?x?xf32>) {
// CHECK: %[[B:.+]] = vector.transfer_read %arg2[%{{.+}}], %{{.+}} : tensor<40xf32>, vector<32xf32>
// CHECK: %[[S:.+]] = arith.addf %[[ACCS]]#0, %[[B]] : vector<32xf32>
// CHECK: %[[R:.+]] = arith.maximumf %[[S]], %{{.+}} : vector<32xf32>
// CHECK: vector.transfer_write %[[R]]
// CHECK: } else {
// CHECK: vector.transfer_write %[[ACCS]]#0
// CHECK-NOT: linalg.generic
// CHECK: return %{{.+}} : tensor<20x40xf32>
// LOG-DAG: epilogue matmul_relu fused into matmul
// OFF-LABEL: func.func @matmul_bias_relu
// OFF-NOT: scf.if {{.+}} -> (tensor
// OFF: linalg.generic
#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
func.func @matmul_bias_relu(%a: tensor<20x300xf32>, %b: tensor<300x40xf32>, %bias: tensor<40xf32>) -> tensor<20x40xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<20x40xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<20x40xf32>) -> tensor<20x40xf32>
  %y = linalg.matmul ins(%a, %b : tensor<20x300xf32>, tensor<300x40xf32>) outs(%f : tensor<20x40xf32>) -> tensor<20x40xf32> loc(#matmul)
  %z = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%y, %bias : tensor<20x40xf32>, tensor<40xf32>) outs(%e : tensor<20x40xf32>) {
  ^bb0(%x: f32, %c: f32, %o: f32):
    %s = arith.addf %x, %c : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  }  -> tensor<20x40xf32> loc(#relu)
  return %z : tensor<20x40xf32>
}
#matmul = loc(fused<"MatMul">["matmul"])
#relu = loc(fused<"Relu">["matmul_relu"])

// -----

// A convolution through the panel im2col (7x7 = 49 pixels in two 32-lane
// panels, the second padded): bias per filter row (a scalar broadcast per
// accumulator), a residual of the result's shape read as [N, F, H*W] at the
// tile's absolute pixel offset (masked past pixel 49), then ReLU. K = 27
// fits one block: no branch.
// CHECK-LABEL: func.func @conv_bias_residual_relu
// CHECK: %[[RES:.+]] = tensor.collapse_shape %arg2 {{\[}}[0], [1], [2, 3]] : tensor<1x4x7x7xf32> into tensor<1x4x49xf32>
// CHECK: scf.forall
// CHECK: %[[ACCS:.+]]:4 = scf.for
// CHECK-NOT: scf.if
// CHECK: %[[BIAS:.+]] = tensor.extract %arg1[%{{.+}}] : tensor<4xf32>
// CHECK: %[[SPLAT:.+]] = vector.broadcast %[[BIAS]] : f32 to vector<32xf32>
// CHECK: %[[PIXEL:.+]] = arith.muli %{{.+}}, %c32 : index
// CHECK: %[[R:.+]] = vector.transfer_read %[[RES]][%{{.+}}, %{{.+}}, %[[PIXEL]]], %{{.+}} : tensor<1x4x49xf32>, vector<32xf32>
// CHECK: %[[S:.+]] = arith.addf %[[ACCS]]#0, %[[SPLAT]]
// CHECK: %[[T:.+]] = arith.addf %[[S]], %[[R]]
// CHECK: %[[U:.+]] = arith.maximumf %[[T]]
// CHECK: vector.transfer_write %[[U]]
// CHECK-NOT: linalg.generic
// CHECK: tensor.extract_slice %{{.+}}[0, 0, 0] [1, 4, 49] [1, 1, 1]
// CHECK: %[[OUT:.+]] = tensor.expand_shape
// CHECK: return %[[OUT]]
// LOG-DAG: epilogue add_relu fused into conv
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#ch = affine_map<(d0, d1, d2, d3) -> (d1)>
func.func @conv_bias_residual_relu(%x: tensor<1x3x9x9xf32>, %bias: tensor<4xf32>, %res: tensor<1x4x7x7xf32>) -> tensor<1x4x7x7xf32> {
  %w = arith.constant dense<0.5> : tensor<4x3x3x3xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4x7x7xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4x7x7xf32>) -> tensor<1x4x7x7xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x3x9x9xf32>, tensor<4x3x3x3xf32>) outs(%f : tensor<1x4x7x7xf32>) -> tensor<1x4x7x7xf32> loc(#conv)
  %z = linalg.generic {indexing_maps = [#id4, #ch, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%y, %bias, %res : tensor<1x4x7x7xf32>, tensor<4xf32>, tensor<1x4x7x7xf32>) outs(%e : tensor<1x4x7x7xf32>) {
  ^bb0(%a: f32, %c: f32, %r: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    %t = arith.addf %s, %r : f32
    %u = arith.maximumf %t, %zero : f32
    linalg.yield %u : f32
  }  -> tensor<1x4x7x7xf32> loc(#relu)
  return %z : tensor<1x4x7x7xf32>
}
#conv = loc(fused<"Conv">["conv"])
#relu = loc(fused<"Relu">["add_relu"])

// -----

// A 1x1 convolution reads its input in place ([N, C, H*W] rows as B): a
// residual add on its [N, F, H*W] result, expanded back to NCHW.
// CHECK-LABEL: func.func @pointwise_conv_residual
// CHECK: tensor.collapse_shape %arg1 {{\[}}[0], [1], [2, 3]] : tensor<2x8x6x6xf32> into tensor<2x8x36xf32>
// CHECK: scf.forall
// CHECK: vector.transfer_read %collapsed{{.*}} : tensor<2x8x36xf32>, vector<32xf32>
// CHECK: arith.addf
// CHECK-NOT: linalg.generic
// CHECK: tensor.expand_shape
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @pointwise_conv_residual(%x: tensor<2x5x6x6xf32>, %res: tensor<2x8x6x6xf32>) -> tensor<2x8x6x6xf32> {
  %w = arith.constant dense<0.25> : tensor<8x5x1x1xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x8x6x6xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x8x6x6xf32>) -> tensor<2x8x6x6xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<2x5x6x6xf32>, tensor<8x5x1x1xf32>) outs(%f : tensor<2x8x6x6xf32>) -> tensor<2x8x6x6xf32>
  %z = linalg.generic {indexing_maps = [#id4, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%y, %res : tensor<2x8x6x6xf32>, tensor<2x8x6x6xf32>) outs(%e : tensor<2x8x6x6xf32>) {
  ^bb0(%a: f32, %r: f32, %o: f32):
    %s = arith.addf %a, %r : f32
    linalg.yield %s : f32
  }  -> tensor<2x8x6x6xf32>
  return %z : tensor<2x8x6x6xf32>
}

// -----

// Not fused: the result has a second user.
// CHECK-LABEL: func.func @two_users
// CHECK-NOT: scf.if
// CHECK: scf.forall
// CHECK: linalg.generic
// LOG-DAG: no epilogue for mm2: the result has 2 uses
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @two_users(%a: tensor<8x16xf32>, %b: tensor<16x32xf32>, %c: tensor<8x32xf32>) -> (tensor<8x32xf32>, tensor<8x32xf32>) {
  %zero = arith.constant 0.0 : f32
  %y = linalg.matmul ins(%a, %b : tensor<8x16xf32>, tensor<16x32xf32>) outs(%c : tensor<8x32xf32>) -> tensor<8x32xf32> loc(#mm)
  %z = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%y : tensor<8x32xf32>) outs(%c : tensor<8x32xf32>) {
  ^bb0(%x: f32, %o: f32):
    %r = arith.maximumf %x, %zero : f32
    linalg.yield %r : f32
  }  -> tensor<8x32xf32>
  return %y, %z : tensor<8x32xf32>, tensor<8x32xf32>
}
#mm = loc(fused<"MatMul">["mm2"])

// -----

// Not fused: the consumer reduces (a row sum), it is not elementwise.
// CHECK-LABEL: func.func @reduction_consumer
// CHECK: scf.forall
// CHECK: linalg.generic
// CHECK-SAME: "reduction"
// LOG-DAG: no epilogue for mm3: the consumer is not an elementwise generic with one result
#row = affine_map<(d0, d1) -> (d0)>
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @reduction_consumer(%a: tensor<8x16xf32>, %b: tensor<16x32xf32>, %c: tensor<8x32xf32>, %s: tensor<8xf32>) -> tensor<8xf32> {
  %y = linalg.matmul ins(%a, %b : tensor<8x16xf32>, tensor<16x32xf32>) outs(%c : tensor<8x32xf32>) -> tensor<8x32xf32> loc(#mm)
  %z = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%y : tensor<8x32xf32>) outs(%s : tensor<8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %r = arith.addf %x, %o : f32
    linalg.yield %r : f32
  }  -> tensor<8xf32>
  return %z : tensor<8xf32>
}
#mm = loc(fused<"MatMul">["mm3"])

// -----

// Not fused: the consumer reads the result transposed.
// CHECK-LABEL: func.func @transposed_result
// CHECK: scf.forall
// CHECK: linalg.generic
// LOG-DAG: no epilogue for mm4: the consumer does not read the result through an identity map
#t = affine_map<(d0, d1) -> (d1, d0)>
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @transposed_result(%a: tensor<8x16xf32>, %b: tensor<16x32xf32>, %c: tensor<8x32xf32>, %o: tensor<32x8xf32>) -> tensor<32x8xf32> {
  %zero = arith.constant 0.0 : f32
  %y = linalg.matmul ins(%a, %b : tensor<8x16xf32>, tensor<16x32xf32>) outs(%c : tensor<8x32xf32>) -> tensor<8x32xf32> loc(#mm)
  %z = linalg.generic {indexing_maps = [#t, #id], iterator_types = ["parallel", "parallel"]} ins(%y : tensor<8x32xf32>) outs(%o : tensor<32x8xf32>) {
  ^bb0(%x: f32, %u: f32):
    %r = arith.maximumf %x, %zero : f32
    linalg.yield %r : f32
  }  -> tensor<32x8xf32>
  return %z : tensor<32x8xf32>
}
#mm = loc(fused<"MatMul">["mm4"])

// -----

// Not fused: an operand read through a transposing map, and an operand
// computed after the contraction.
// CHECK-LABEL: func.func @transposed_operand
// CHECK: linalg.generic
// CHECK-LABEL: func.func @operand_after
// CHECK: linalg.generic
// LOG-DAG: no epilogue for mm5: operand 1 is read through a transposing map
// LOG-DAG: no epilogue for mm6: operand 1 is computed after the contraction
#id = affine_map<(d0, d1) -> (d0, d1)>
#t = affine_map<(d0, d1) -> (d1, d0)>
func.func @transposed_operand(%a: tensor<32x16xf32>, %b: tensor<16x32xf32>, %c: tensor<32x32xf32>, %r: tensor<32x32xf32>) -> tensor<32x32xf32> {
  %y = linalg.matmul ins(%a, %b : tensor<32x16xf32>, tensor<16x32xf32>) outs(%c : tensor<32x32xf32>) -> tensor<32x32xf32> loc(#mm5)
  %z = linalg.generic {indexing_maps = [#id, #t, #id], iterator_types = ["parallel", "parallel"]} ins(%y, %r : tensor<32x32xf32>, tensor<32x32xf32>) outs(%c : tensor<32x32xf32>) {
  ^bb0(%x: f32, %v: f32, %o: f32):
    %s = arith.addf %x, %v : f32
    linalg.yield %s : f32
  }  -> tensor<32x32xf32>
  return %z : tensor<32x32xf32>
}
func.func @operand_after(%a: tensor<32x16xf32>, %b: tensor<16x32xf32>, %c: tensor<32x32xf32>, %r: tensor<32x32xf32>) -> tensor<32x32xf32> {
  %y = linalg.matmul ins(%a, %b : tensor<32x16xf32>, tensor<16x32xf32>) outs(%c : tensor<32x32xf32>) -> tensor<32x32xf32> loc(#mm6)
  %e = tensor.empty() : tensor<32x32xf32>
  %n = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%r : tensor<32x32xf32>) outs(%e : tensor<32x32xf32>) {
  ^bb0(%v: f32, %o: f32):
    %m = arith.negf %v : f32
    linalg.yield %m : f32
  }  -> tensor<32x32xf32>
  %z = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%y, %n : tensor<32x32xf32>, tensor<32x32xf32>) outs(%c : tensor<32x32xf32>) {
  ^bb0(%x: f32, %v: f32, %o: f32):
    %s = arith.addf %x, %v : f32
    linalg.yield %s : f32
  }  -> tensor<32x32xf32>
  return %z : tensor<32x32xf32>
}
#mm5 = loc(fused<"MatMul">["mm5"])
#mm6 = loc(fused<"MatMul">["mm6"])
