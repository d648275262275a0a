// RUN: env KILN_LOGS=lowering kiln-opt --mlir-disable-threading %s -kiln-report-kernels 2>&1 | FileCheck %s

// A bias broadcast shared by two NHWC convolutions as their init is no
// kernel of its own (the NHWC kernels start from the bias vector): it joins
// the first convolution's kernel. The same broadcast read by something else
// (here an NCHW-style generic consumer) anchors its own kernel.
// CHECK: [kiln:lowering] 0:conv_2d_nhwc_hwcf <- conv_a
// CHECK-NEXT: [kiln:lowering] 1:depthwise_conv_2d_nhwc_hwc <- conv_b
// CHECK-NEXT: [kiln:lowering] 2:broadcast <- bias_c
// CHECK-NEXT: [kiln:lowering] 3:conv_2d_nhwc_hwcf <- conv_c
// CHECK-NEXT: [kiln:lowering] 4:generic <- use_c
// CHECK-NOT: [kiln:lowering]
// CHECK-LABEL: func.func @shared_bias
func.func @shared_bias(%x: tensor<1x6x6x8xf32>, %w: tensor<3x3x8x8xf32>, %dw: tensor<3x3x8xf32>, %b: tensor<8xf32>) -> (tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>) {
  %e = tensor.empty() : tensor<1x4x4x8xf32>
  %bb = linalg.broadcast ins(%b : tensor<8xf32>) outs(%e : tensor<1x4x4x8xf32>) dimensions = [0, 1, 2] loc(fused<"Conv">["conv_a"])
  %a = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x6x6x8xf32>, tensor<3x3x8x8xf32>) outs(%bb : tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32> loc(fused<"Conv">["conv_a"])
  %d = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %dw : tensor<1x6x6x8xf32>, tensor<3x3x8xf32>) outs(%bb : tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32> loc(fused<"Conv">["conv_b"])
  %bc = linalg.broadcast ins(%b : tensor<8xf32>) outs(%e : tensor<1x4x4x8xf32>) dimensions = [0, 1, 2] loc(fused<"Conv">["bias_c"])
  %c = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x6x6x8xf32>, tensor<3x3x8x8xf32>) outs(%bc : tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32> loc(fused<"Conv">["conv_c"])
  %u = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%bc : tensor<1x4x4x8xf32>) outs(%e : tensor<1x4x4x8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %s = arith.addf %in, %in : f32
    linalg.yield %s : f32
  } -> tensor<1x4x4x8xf32> loc(fused<"Add">["use_c"])
  return %a, %d, %c, %u : tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>
}
