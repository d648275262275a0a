// RUN: kiln-opt %s --kiln-tile-nhwc-convolutions="winograd=4" --split-input-file | FileCheck %s
// RUN: kiln-opt %s --kiln-tile-nhwc-convolutions="winograd=2" --split-input-file | FileCheck %s --check-prefix=F2
// RUN: kiln-opt %s --kiln-tile-nhwc-convolutions="winograd=-1" --split-input-file | FileCheck %s --check-prefix=AUTO
// RUN: kiln-opt %s --kiln-tile-nhwc-convolutions --split-input-file | FileCheck %s --check-prefix=OFF
// RUN: not kiln-opt %s --kiln-tile-nhwc-convolutions="winograd=3" --split-input-file 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: error: kiln-tile-nhwc-convolutions: winograd takes -1, 0, 2 or 4 (got 3)

// A padded 3x3 convolution with a bias init by F(4x4, 3x3): 7 x 9 outputs
// are 2 x 3 tiles of 4 x 4, so the input's zero pad grows at its high end to
// 10 x 14 (2*4+2, 3*4+2) instead of being padded again. The filter
// [3, 3, 16, 40] becomes U = G g G^T at compile time, [36, 16, 40]. The
// input transform writes V [36 points, 6 tiles, 16 channels] from 36 vector
// reads per tile; the batch matmul V x U starts from a zero fill; the output
// transform starts from the bias vector (the broadcast is not
// materialized), writes into the broadcast's empty tensor and skips the
// positions past row 7 and column 9 of the last tiles (scf.if). F(2x2,
// 3x3): 4 x 5 tiles of 2 x 2, the input padded to 10 x 12, U [16, 16, 40].
// CHECK-LABEL: func.func @bias_init
// CHECK-NOT: linalg.conv_2d_nhwc_hwcf
// CHECK: %[[EMPTY:.+]] = tensor.empty() : tensor<1x7x9x40xf32>
// CHECK: %[[U:.+]] = arith.constant dense_resource<winograd_filter> : tensor<36x16x40xf32>
// CHECK: %[[PAD:.+]] = tensor.pad %arg0 low[0, 1, 1, 0] high[0, 2, 4, 0]
// CHECK: tensor<1x7x9x16xf32> to tensor<1x10x14x16xf32>
// CHECK: %[[VEMPTY:.+]] = tensor.empty() : tensor<36x6x16xf32>
// CHECK: %[[V:.+]] = scf.forall ({{.+}}) in (1, 2, 3) shared_outs(%[[VS:.+]] = %[[VEMPTY]])
// CHECK: tensor.extract_slice %[[VS]][0, %{{.+}}, 0] [36, 1, 16] [1, 1, 1] : tensor<36x6x16xf32> to tensor<36x16xf32>
// CHECK: scf.for
// CHECK-COUNT-36: vector.transfer_read %[[PAD]][{{.+}}], %{{.+}} {in_bounds = [true]} : tensor<1x10x14x16xf32>, vector<16xf32>
// CHECK-COUNT-36: vector.transfer_write {{.+}} {in_bounds = [true]} : vector<16xf32>, tensor<36x16xf32>
// CHECK: tensor.parallel_insert_slice {{.+}} into %[[VS]][0, %{{.+}}, 0] [36, 1, 16] [1, 1, 1] : tensor<36x16xf32> into tensor<36x6x16xf32>
// CHECK: %[[FILL:.+]] = linalg.fill {{.+}} -> tensor<36x6x40xf32>
// CHECK: %[[M:.+]] = linalg.batch_matmul ins(%[[V]], %[[U]] : tensor<36x6x16xf32>, tensor<36x16x40xf32>) outs(%[[FILL]] : tensor<36x6x40xf32>)
// CHECK: scf.forall ({{.+}}) in (1, 2, 3) shared_outs(%[[OUT:.+]] = %[[EMPTY]])
// CHECK: tensor.extract_slice %[[OUT]]{{.+}} : tensor<1x7x9x40xf32> to tensor<?x?x40xf32>
// CHECK: scf.for %[[F:.+]] = %{{.+}} to %c40{{.*}} step %c16
// CHECK-COUNT-36: vector.transfer_read %[[M]][{{.+}}, %[[F]]], %{{.+}} : tensor<36x6x40xf32>, vector<16xf32>
// CHECK: %[[BIAS:.+]] = vector.transfer_read %arg1[%[[F]]], %{{.+}} : tensor<40xf32>, vector<16xf32>
// CHECK: arith.addf %{{.+}}, %[[BIAS]] : vector<16xf32>
// CHECK: vector.transfer_write {{.+}} : vector<16xf32>, tensor<?x?x40xf32>
// CHECK: scf.if
// CHECK: tensor.parallel_insert_slice
// CHECK-NOT: linalg.broadcast
// F2-LABEL: func.func @bias_init
// F2: arith.constant dense_resource<winograd_filter> : tensor<16x16x40xf32>
// F2: tensor<1x7x9x16xf32> to tensor<1x10x12x16xf32>
// F2: scf.forall ({{.+}}) in (1, 4, 5)
// F2: linalg.batch_matmul ins({{.+}} : tensor<16x20x16xf32>, tensor<16x16x40xf32>) outs({{.+}} : tensor<16x20x40xf32>)
// The cost model keeps this small one direct (6 tiles: the transformed
// filter's reads outweigh the products saved).
// AUTO-LABEL: func.func @bias_init
// AUTO-NOT: linalg.batch_matmul
// AUTO: dense_resource<packed_filter>
// OFF-LABEL: func.func @bias_init
// OFF-NOT: linalg.batch_matmul
// OFF: dense_resource<packed_filter>
func.func @bias_init(%x: tensor<1x7x9x16xf32>, %bias: tensor<40xf32>) -> tensor<1x7x9x40xf32> {
  %w = arith.constant dense<0.5> : tensor<3x3x16x40xf32>
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %zero : f32
  } : tensor<1x7x9x16xf32> to tensor<1x9x11x16xf32>
  %e = tensor.empty() : tensor<1x7x9x40xf32>
  %bb = linalg.broadcast ins(%bias : tensor<40xf32>) outs(%e : tensor<1x7x9x40xf32>) dimensions = [0, 1, 2]
  %y = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%p, %w : tensor<1x9x11x16xf32>, tensor<3x3x16x40xf32>) outs(%bb : tensor<1x7x9x40xf32>) -> tensor<1x7x9x40xf32>
  return %y : tensor<1x7x9x40xf32>
}

// -----

// An unpadded input whose tiles fit (8 x 8 outputs from 10 x 10) is read as
// it is; the zero fill init adds nothing; a ReLU consumer is applied to each
// output vector before its store and replaced by the kernel's result.
// CHECK-LABEL: func.func @relu_epilogue
// CHECK-NOT: tensor.pad
// CHECK: linalg.batch_matmul
// CHECK: scf.forall ({{.+}}) in (1, 2, 2)
// CHECK-NOT: scf.if
// CHECK: arith.maximumf {{.+}} : vector<16xf32>
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @relu_epilogue(%x: tensor<1x10x10x32xf32>) -> tensor<1x8x8x32xf32> {
  %w = arith.constant dense<0.25> : tensor<3x3x32x32xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x8x8x32xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<1x8x8x32xf32>) -> tensor<1x8x8x32xf32>
  %y = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x10x10x32xf32>, tensor<3x3x32x32xf32>) outs(%acc : tensor<1x8x8x32xf32>) -> tensor<1x8x8x32xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%y : tensor<1x8x8x32xf32>) outs(%e : tensor<1x8x8x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x8x8x32xf32>
  return %r : tensor<1x8x8x32xf32>
}

// -----

// The cost model: at batch 1, a 7x7x512 layer has 4 tiles of 4 x 4, and the
// transformed filter (36 x 512 x 512 floats, 4x the direct kernel's) costs
// more than the products saved: it stays direct. Stride 2 is never taken.
// AUTO-LABEL: func.func @small_image
// AUTO-NOT: linalg.batch_matmul
// AUTO: dense_resource<packed_filter> : tensor<16x4608x32xf32>
// CHECK-LABEL: func.func @small_image
// CHECK: linalg.batch_matmul
func.func @small_image(%x: tensor<1x9x9x512xf32>) -> tensor<1x7x7x512xf32> {
  %w = arith.constant dense<0.5> : tensor<3x3x512x512xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x7x7x512xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<1x7x7x512xf32>) -> tensor<1x7x7x512xf32>
  %y = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x9x9x512xf32>, tensor<3x3x512x512xf32>) outs(%acc : tensor<1x7x7x512xf32>) -> tensor<1x7x7x512xf32>
  return %y : tensor<1x7x7x512xf32>
}

// -----

// AUTO-LABEL: func.func @large_image
// AUTO: dense_resource<winograd_filter> : tensor<36x64x64xf32>
// AUTO: linalg.batch_matmul
// CHECK-LABEL: func.func @strided
// CHECK-NOT: linalg.batch_matmul
// CHECK: dense_resource<packed_filter>
func.func @large_image(%x: tensor<1x58x58x64xf32>) -> tensor<1x56x56x64xf32> {
  %w = arith.constant dense<0.5> : tensor<3x3x64x64xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x56x56x64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<1x56x56x64xf32>) -> tensor<1x56x56x64xf32>
  %y = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x58x58x64xf32>, tensor<3x3x64x64xf32>) outs(%acc : tensor<1x56x56x64xf32>) -> tensor<1x56x56x64xf32>
  return %y : tensor<1x56x56x64xf32>
}

func.func @strided(%x: tensor<1x9x9x16xf32>) -> tensor<1x4x4x16xf32> {
  %w = arith.constant dense<0.5> : tensor<3x3x16x16xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4x4x16xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4x4x16xf32>) -> tensor<1x4x4x16xf32>
  %y = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%x, %w : tensor<1x9x9x16xf32>, tensor<3x3x16x16xf32>) outs(%acc : tensor<1x4x4x16xf32>) -> tensor<1x4x4x16xf32>
  return %y : tensor<1x4x4x16xf32>
}
