// RUN: kiln-opt %s | kiln-opt | FileCheck %s

// Round trip of every kiln op in its custom form.

// CHECK-LABEL: func.func @constants
func.func @constants() -> (tensor<4xf32>, tensor<2xui8>, tensor<2x2xi64>) {
  // CHECK: kiln.constant dense<1.000000e+00> : tensor<4xf32>
  %0 = kiln.constant dense<1.0> : tensor<4xf32>
  // CHECK: kiln.constant dense_resource<blob> : tensor<2xui8>
  %1 = kiln.constant dense_resource<blob> : tensor<2xui8>
  // CHECK: kiln.constant dense<{{\[}}[1, 2], [3, 4]]> : tensor<2x2xi64>
  %2 = kiln.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi64>
  return %0, %1, %2 : tensor<4xf32>, tensor<2xui8>, tensor<2x2xi64>
}

// CHECK-LABEL: func.func @binary
func.func @binary(%a: tensor<2x3xf32>, %b: tensor<3xf32>, %i: tensor<2x3xi32>,
                  %e: tensor<2x3xi64>) {
  // CHECK: kiln.add %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %0 = kiln.add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: kiln.sub
  %1 = kiln.sub %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: kiln.mul
  %2 = kiln.mul %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: kiln.div
  %3 = kiln.div %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: kiln.pow %{{.*}}, %{{.*}} : (tensor<2x3xi32>, tensor<2x3xi64>) -> tensor<2x3xi32>
  %4 = kiln.pow %i, %e : (tensor<2x3xi32>, tensor<2x3xi64>) -> tensor<2x3xi32>
  // CHECK: kiln.max
  %5 = kiln.max %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: kiln.min
  %6 = kiln.min %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: kiln.equal %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %7 = kiln.equal %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  // CHECK: kiln.less
  %8 = kiln.less %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  // CHECK: kiln.greater
  %9 = kiln.greater %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  return
}

// CHECK-LABEL: func.func @unary
func.func @unary(%x: tensor<8xf32>, %u: tensor<8xui8>) {
  // CHECK: kiln.sqrt %{{.*}} : (tensor<8xf32>) -> tensor<8xf32>
  %0 = kiln.sqrt %x : (tensor<8xf32>) -> tensor<8xf32>
  // CHECK: kiln.exp
  %1 = kiln.exp %x : (tensor<8xf32>) -> tensor<8xf32>
  // CHECK: kiln.log
  %2 = kiln.log %x : (tensor<8xf32>) -> tensor<8xf32>
  // CHECK: kiln.neg
  %3 = kiln.neg %x : (tensor<8xf32>) -> tensor<8xf32>
  // CHECK: kiln.abs
  %4 = kiln.abs %x : (tensor<8xf32>) -> tensor<8xf32>
  // CHECK: kiln.reciprocal
  %5 = kiln.reciprocal %x : (tensor<8xf32>) -> tensor<8xf32>
  // CHECK: kiln.relu
  %6 = kiln.relu %x : (tensor<8xf32>) -> tensor<8xf32>
  // CHECK: kiln.sigmoid
  %7 = kiln.sigmoid %x : (tensor<8xf32>) -> tensor<8xf32>
  // CHECK: kiln.tanh
  %8 = kiln.tanh %x : (tensor<8xf32>) -> tensor<8xf32>
  // CHECK: kiln.erf
  %9 = kiln.erf %x : (tensor<8xf32>) -> tensor<8xf32>
  // CHECK: kiln.leaky_relu %{{.*}} {alpha = 2.000000e-01 : f64}
  %10 = kiln.leaky_relu %x {alpha = 0.2 : f64} : (tensor<8xf32>) -> tensor<8xf32>
  // CHECK: kiln.leaky_relu %{{.*}} : (tensor<8xf32>)
  %11 = kiln.leaky_relu %x : (tensor<8xf32>) -> tensor<8xf32>
  // CHECK: kiln.gelu %{{.*}} {tanh_approximation = true}
  %12 = kiln.gelu %x {tanh_approximation = true} : (tensor<8xf32>) -> tensor<8xf32>
  // CHECK: kiln.gelu %{{.*}} : (tensor<8xf32>)
  %13 = kiln.gelu %x : (tensor<8xf32>) -> tensor<8xf32>
  // CHECK: kiln.clip %{{.*}} {max = 6.000000e+00 : f64, min = 0.000000e+00 : f64}
  %14 = kiln.clip %x {min = 0.0 : f64, max = 6.0 : f64} : (tensor<8xf32>) -> tensor<8xf32>
  // CHECK: kiln.clip %{{.*}} {max = 1.000000e+01 : f64} : (tensor<8xui8>) -> tensor<8xui8>
  %15 = kiln.clip %u {max = 10.0 : f64} : (tensor<8xui8>) -> tensor<8xui8>
  return
}

// CHECK-LABEL: func.func @cast_where
func.func @cast_where(%x: tensor<4xf32>, %c: tensor<4x4xi1>, %s: tensor<f32>,
                      %y: tensor<4x4xf32>) {
  // CHECK: kiln.cast %{{.*}} {to = i64} : (tensor<4xf32>) -> tensor<4xi64>
  %0 = kiln.cast %x {to = i64} : (tensor<4xf32>) -> tensor<4xi64>
  // CHECK: kiln.cast %{{.*}} {to = ui8} : (tensor<4xf32>) -> tensor<4xui8>
  %1 = kiln.cast %x {to = ui8} : (tensor<4xf32>) -> tensor<4xui8>
  // CHECK: kiln.where %{{.*}}, %{{.*}}, %{{.*}} : (tensor<4x4xi1>, tensor<f32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %2 = kiln.where %c, %s, %y : (tensor<4x4xi1>, tensor<f32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return
}

// CHECK-LABEL: func.func @normalization
func.func @normalization(%s: tensor<1x12x64x64xf32>, %x: tensor<1x64x56x56xf32>,
                         %p: tensor<64xf32>, %h: tensor<1x128x768xf32>,
                         %g: tensor<768xf32>) {
  // CHECK: kiln.softmax %{{.*}} {axis = 3 : i64}
  %0 = kiln.softmax %s {axis = 3 : i64} : (tensor<1x12x64x64xf32>) -> tensor<1x12x64x64xf32>
  // CHECK: kiln.log_softmax %{{.*}} {axis = 1 : i64}
  %1 = kiln.log_softmax %s {axis = 1 : i64} : (tensor<1x12x64x64xf32>) -> tensor<1x12x64x64xf32>
  // CHECK: kiln.batch_norm %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {epsilon = 1.000000e-03 : f64}
  %2 = kiln.batch_norm %x, %p, %p, %p, %p {epsilon = 1.0e-03 : f64}
      : (tensor<1x64x56x56xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<1x64x56x56xf32>
  // CHECK: kiln.layer_norm %{{.*}}, %{{.*}}, %{{.*}} {axis = 2 : i64, epsilon = 9.9999999999999995E-7 : f64}
  %3 = kiln.layer_norm %h, %g, %g {axis = 2 : i64, epsilon = 1.0e-06 : f64}
      : (tensor<1x128x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<1x128x768xf32>
  // CHECK: kiln.layer_norm %{{.*}}, %{{.*}} {axis = 2 : i64}
  %4 = kiln.layer_norm %h, %g {axis = 2 : i64} : (tensor<1x128x768xf32>, tensor<768xf32>) -> tensor<1x128x768xf32>
  return
}

// CHECK-LABEL: func.func @contractions
func.func @contractions(%a: tensor<2x12x64x32xf32>, %b: tensor<32x64xf32>,
                        %x: tensor<1x3x224x224xf32>, %w: tensor<64x3x7x7xf32>,
                        %bias: tensor<64xf32>, %gx: tensor<1x8x10xf32>,
                        %gw: tensor<4x2x3xf32>) {
  // CHECK: kiln.matmul %{{.*}}, %{{.*}} : (tensor<2x12x64x32xf32>, tensor<32x64xf32>) -> tensor<2x12x64x64xf32>
  %0 = kiln.matmul %a, %b : (tensor<2x12x64x32xf32>, tensor<32x64xf32>) -> tensor<2x12x64x64xf32>
  // CHECK: kiln.conv %{{.*}}, %{{.*}}, %{{.*}} {dilations = array<i64: 1, 1>, pads = array<i64: 3, 3, 3, 3>, strides = array<i64: 2, 2>}
  %1 = kiln.conv %x, %w, %bias {dilations = array<i64: 1, 1>, group = 1 : i64,
                                pads = array<i64: 3, 3, 3, 3>, strides = array<i64: 2, 2>}
      : (tensor<1x3x224x224xf32>, tensor<64x3x7x7xf32>, tensor<64xf32>) -> tensor<1x64x112x112xf32>
  // CHECK: kiln.conv %{{.*}}, %{{.*}} {dilations = array<i64: 2>, group = 4 : i64, pads = array<i64: 1, 0>, strides = array<i64: 1>} : (tensor<1x8x10xf32>, tensor<4x2x3xf32>) -> tensor<1x4x7xf32>
  %2 = kiln.conv %gx, %gw {dilations = array<i64: 2>, group = 4 : i64,
                           pads = array<i64: 1, 0>, strides = array<i64: 1>}
      : (tensor<1x8x10xf32>, tensor<4x2x3xf32>) -> tensor<1x4x7xf32>
  return
}

// CHECK-LABEL: func.func @pooling
func.func @pooling(%x: tensor<1x64x112x112xf32>, %y: tensor<1x8x5x5xf32>) {
  // CHECK: kiln.max_pool %{{.*}} {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>}
  %0 = kiln.max_pool %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>,
                         pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>}
      : (tensor<1x64x112x112xf32>) -> tensor<1x64x56x56xf32>
  // CHECK: kiln.avg_pool %{{.*}} {ceil_mode = true, count_include_pad = true, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x8x5x5xf32>) -> tensor<1x8x3x3xf32>
  %1 = kiln.avg_pool %y {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>,
                         pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>,
                         ceil_mode = true, count_include_pad = true}
      : (tensor<1x8x5x5xf32>) -> tensor<1x8x3x3xf32>
  return
}

// CHECK-LABEL: func.func @reductions
func.func @reductions(%x: tensor<1x512x7x7xf32>) {
  // CHECK: kiln.reduce_sum %{{.*}} {axes = array<i64: 2, 3>} : (tensor<1x512x7x7xf32>) -> tensor<1x512x1x1xf32>
  %0 = kiln.reduce_sum %x {axes = array<i64: 2, 3>} : (tensor<1x512x7x7xf32>) -> tensor<1x512x1x1xf32>
  // CHECK: kiln.reduce_mean %{{.*}} {axes = array<i64: 2, 3>, keepdims = false} : (tensor<1x512x7x7xf32>) -> tensor<1x512xf32>
  %1 = kiln.reduce_mean %x {axes = array<i64: 2, 3>, keepdims = false} : (tensor<1x512x7x7xf32>) -> tensor<1x512xf32>
  // CHECK: kiln.reduce_max
  %2 = kiln.reduce_max %x {axes = array<i64: 1>} : (tensor<1x512x7x7xf32>) -> tensor<1x1x7x7xf32>
  // CHECK: kiln.reduce_min
  %3 = kiln.reduce_min %x {axes = array<i64: 0>} : (tensor<1x512x7x7xf32>) -> tensor<1x512x7x7xf32>
  // CHECK: kiln.reduce_prod
  %4 = kiln.reduce_prod %x {axes = array<i64: 0, 1, 2, 3>, keepdims = false} : (tensor<1x512x7x7xf32>) -> tensor<f32>
  return
}

// CHECK-LABEL: func.func @data_movement
func.func @data_movement(%x: tensor<1x512x1x1xf32>, %t: tensor<1x128x12x64xf32>,
                         %a: tensor<1x64x28x28xf32>, %b: tensor<1x32x28x28xf32>,
                         %s: tensor<2x4xf32>, %table: tensor<1000x64xf32>,
                         %ids: tensor<1x16xi64>, %e: tensor<1x3xf32>) {
  // CHECK: kiln.reshape %{{.*}} {shape = array<i64: 1, 512>} : (tensor<1x512x1x1xf32>) -> tensor<1x512xf32>
  %0 = kiln.reshape %x {shape = array<i64: 1, 512>} : (tensor<1x512x1x1xf32>) -> tensor<1x512xf32>
  // CHECK: kiln.transpose %{{.*}} {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x128x12x64xf32>) -> tensor<1x12x128x64xf32>
  %1 = kiln.transpose %t {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x128x12x64xf32>) -> tensor<1x12x128x64xf32>
  // CHECK: kiln.concat %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<1x64x28x28xf32>, tensor<1x32x28x28xf32>) -> tensor<1x96x28x28xf32>
  %2 = kiln.concat %a, %b {axis = 1 : i64} : (tensor<1x64x28x28xf32>, tensor<1x32x28x28xf32>) -> tensor<1x96x28x28xf32>
  // Along a run-time extent the result's extent is one too.
  // CHECK: kiln.concat %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<2x4xf32>, tensor<2x?xf32>) -> tensor<2x?xf32>
  %s2 = tensor.cast %s : tensor<2x4xf32> to tensor<2x?xf32>
  %c2 = kiln.concat %s, %s2 {axis = 1 : i64} : (tensor<2x4xf32>, tensor<2x?xf32>) -> tensor<2x?xf32>
  // CHECK: kiln.slice %{{.*}} {ends = array<i64: 2, 3>, starts = array<i64: 0, 1>, steps = array<i64: 1, 1>} : (tensor<2x4xf32>) -> tensor<2x2xf32>
  %3 = kiln.slice %s {starts = array<i64: 0, 1>, ends = array<i64: 2, 3>, steps = array<i64: 1, 1>} : (tensor<2x4xf32>) -> tensor<2x2xf32>
  // CHECK: kiln.slice %{{.*}} {ends = array<i64: -1, 0>, starts = array<i64: 1, 3>, steps = array<i64: -1, -2>} : (tensor<2x4xf32>) -> tensor<2x2xf32>
  %4 = kiln.slice %s {starts = array<i64: 1, 3>, ends = array<i64: -1, 0>, steps = array<i64: -1, -2>} : (tensor<2x4xf32>) -> tensor<2x2xf32>
  // CHECK: kiln.gather %{{.*}}, %{{.*}} {axis = 0 : i64} : (tensor<1000x64xf32>, tensor<1x16xi64>) -> tensor<1x16x64xf32>
  %5 = kiln.gather %table, %ids {axis = 0 : i64} : (tensor<1000x64xf32>, tensor<1x16xi64>) -> tensor<1x16x64xf32>
  // CHECK: kiln.expand %{{.*}} {shape = array<i64: 4, 3>} : (tensor<1x3xf32>) -> tensor<4x3xf32>
  %6 = kiln.expand %e {shape = array<i64: 4, 3>} : (tensor<1x3xf32>) -> tensor<4x3xf32>
  return
}

{-#
  dialect_resources: {
    builtin: {
      blob: "0x040000000102"
    }
  }
#-}
